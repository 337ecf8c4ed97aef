#!/usr/bin/env bash
# Run deploy/compose.yaml for real with podman-compose and put the arena it starts through a league with
# faults: an engine replica killed (kill -9 of its process: the restart policy brings it back) and Redis
# restarted from its append-only file, mid-league. Then check what an operator needs: the league finished
# by itself, every match counted once, every record verified, no bot charged anything, and every engine's
# and worker's metrics readable on the compose network. Run as root from anywhere:
#
#   bash deploy/podman-compose-check.sh
#
# Needs what deploy/podman-build.sh needs, and netavark, aardvark-dns and iptables (apt-get install podman
# runc debootstrap netavark aardvark-dns iptables) and podman-compose (pip install podman-compose; Debian
# 12's podman 4.3 has no `podman compose`). Builds the image with deploy/podman-build.sh if it is missing.
# Where docker.io cannot be reached, `redis:7` is made from Debian's own redis-server on the same base.
# The host's bots are the project's Python bots: PYTHON (default .venv/bin/python, made by scripts/test.sh).
# Everything it starts is removed at the end (compose down, volumes included).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
COMPOSE=(podman-compose -f "$ROOT/deploy/compose.yaml")
BOTS=(ann bob cat dan)
LEAGUE=compose
GAMES="${GAMES:-6}"
work="$(mktemp -d)"
export CONTAINERS_CONF="$work/containers.conf"
# runc: crun refuses hosts with hybrid cgroups; ulimits within the host's own (see podman-build.sh).
cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=4096:4096"]
[engine]
runtime = "runc"
EOF
say() { printf '== %s %s\n' "$(date +%T)" "$*" >&2; }
arena() { podman exec tablanette_engine-2_1 tablanette "$@"; }
quiet() { "$@" 2>&1 | grep -v -e 'systemd' -e 'condition check' -e 'syslog' >&2 || true; }
down() {  # what compose down does, with the second worker `--scale` made (podman-compose's down leaves it)
    podman pod rm -f -t 10 pod_tablanette >/dev/null 2>&1 || true
    podman ps -a -q --filter label=com.docker.compose.project=tablanette | xargs -r podman rm -f -t 10 >/dev/null 2>&1 || true
    podman volume rm -f tablanette_redis-data >/dev/null 2>&1 || true
    podman network rm -f tablanette_default >/dev/null 2>&1 || true
}
cleanup() {
    pkill -f "bots random --name compose-" 2>/dev/null || true
    down
    rm -rf "$work"
}
trap cleanup EXIT

command -v podman-compose >/dev/null || { echo "podman-compose is not installed (pip install podman-compose)" >&2; exit 2; }
if ! podman image exists localhost/tablanette-arena:local; then
    say "building the image (deploy/podman-build.sh)"
    bash "$ROOT/deploy/podman-build.sh"
fi
if ! podman image exists docker.io/library/redis:7 && ! podman pull -q docker.io/library/redis:7 >/dev/null 2>&1; then
    say "docker.io is out of reach: redis:7 from Debian's redis-server"
    printf '%s\n' 'FROM localhost/debian-python:3.11-bookworm' \
        'RUN apt-get update && apt-get install -y --no-install-recommends redis-server && rm -rf /var/lib/apt/lists/*' \
        'WORKDIR /data' 'CMD ["redis-server"]' >"$work/Containerfile"
    podman --runtime runc build --network host --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" \
        --ulimit nproc=4096:4096 -t docker.io/library/redis:7 "$work" >&2
fi

say "compose up: redis, engine-1, engine-2, two workers"
down
quiet "${COMPOSE[@]}" up -d --scale worker=2
# podman 4.3 runs health checks from systemd timers, absent in a container host without systemd: run them here.
healthy() { podman healthcheck run "$1" >/dev/null 2>&1; }
for c in redis_1 engine-1_1 engine-2_1 worker_1 worker_2; do
    for _ in $(seq 60); do healthy "tablanette_$c" && break; sleep 2; done
    healthy "tablanette_$c" || { echo "tablanette_$c never became healthy" >&2; podman logs --tail 30 "tablanette_$c" >&2; exit 1; }
done
say "every service healthy"

for bot in "${BOTS[@]}"; do
    token="$(arena bot add "compose-$bot" | tail -1)"
    TABLANETTE_TOKEN="$token" nohup "$PYTHON" -m bots random --name "compose-$bot" --think-ms 20 \
        --address 127.0.0.1:50051,127.0.0.1:50052 >"$work/$bot.log" 2>&1 &
done
for _ in $(seq 30); do
    [ "$(arena bot list --json | "$PYTHON" -c 'import json,sys; print(sum(1 for b in json.load(sys.stdin) if b["connected"]))')" = 4 ] && break
    sleep 1
done
arena league create "$LEAGUE" --games "$GAMES" --rule deals=1 --latency-credit-ms 500 --time-bank-ms 2000 >&2
arena league add-bot "$LEAGUE" "${BOTS[@]/#/compose-}" >&2
total=$((GAMES * ${#BOTS[@]} * (${#BOTS[@]} - 1) / 2))
started=$(date +%s)
say "the scheduler feeds league $LEAGUE ($total matches)"
LEAGUE="$LEAGUE" quiet "${COMPOSE[@]}" --profile league up -d --no-deps scheduler
done_now() { arena league status "$LEAGUE" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["done"])'; }

for _ in $(seq 60); do [ "$(done_now)" -ge 3 ] && break; sleep 0.5; done
pid="$(podman inspect tablanette_engine-1_1 --format '{{.State.Pid}}')"
say "kill -9 of engine-1's process ($pid) after $(done_now) matches"
kill -9 "$pid"
for _ in $(seq 60); do [ "$(done_now)" -ge $((total / 2)) ] && break; sleep 0.5; done
say "restarting Redis (SIGTERM: it writes its AOF, then comes back from it) after $(done_now) matches"
podman restart tablanette_redis_1 >/dev/null

for _ in $(seq 600); do
    status="$(arena league status "$LEAGUE" --json 2>/dev/null || true)"
    case "$status" in *'"status": "finished"'*) break ;; esac
    sleep 1
done
say "league over after $(($(date +%s) - started)) s: $status"
restarts="$(podman inspect tablanette_engine-1_1 --format '{{.RestartCount}}')"

"$PYTHON" - "$status" "$total" "$restarts" <<'EOF'
import json, sys
status, total, restarts = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
assert (status["status"], status["done"], status["failed"]) == ("finished", total, 0), status
assert restarts >= 1, "engine-1 was not restarted by its restart policy"
print(f"finished: {total} of {total} matches, none failed; engine-1 restarted {restarts} time(s) by its policy")
EOF
arena records export --league "$LEAGUE" --out /tmp/compose.jsonl >&2
arena records verify /tmp/compose.jsonl
arena league ladder "$LEAGUE" --json | "$PYTHON" -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
for row in rows:
    charged = (row["timeouts"], row["illegal"], row["forfeits"])
    assert charged == (0, 0, 0), (row["bot"], charged)
games = sum(row["games"] for row in rows) // 2
print(f"{len(rows)} bots, {games} games on the ladder, no bot charged a timeout, an illegal play or a forfeit")'
podman exec tablanette_engine-2_1 python -c '
import urllib.request
for host in ("engine-1", "engine-2", "worker"):
    text = urllib.request.urlopen(f"http://{host}:9100/metrics", timeout=10).read().decode()
    names = sorted({line.split("{")[0].split(" ")[0] for line in text.splitlines() if line.startswith("tablanette_")})
    print(f"{host}:9100/metrics: {len(names)} tablanette series, e.g. {names[:4]}")'
say "all checks passed"
