"""A league end to end, beside raw Celery and raw gRPC, all measured in the same run.

- **league**: a round-robin of fast bots (``random``, one deal per match) played by
  two Celery worker processes through a real engine service: matches/second and
  moves/second from the first enqueue to the last commit.
- **raw Celery**: no-op tasks through the same broker and the same two workers
  (each task only increments a counter): tasks/second.
- **raw gRPC**: a bidirectional ping-pong between two processes: round trips/second,
  measured before the arena starts and again after each league; the fastest is
  the ceiling (the conservative choice: idle arena processes slow it down).

The league is played three times (``--quick``: once; ``--leagues N``), each a
league of its own, and the median kept: one league lasts a few seconds, so a
single one is at the mercy of the machine's load (``--games N`` makes each longer:
N games a pairing, 6 by default). Beside the wall time, each league's **CPU time
a move** is printed by role, from /proc: the engine service's, the two workers'
and the four bots' (every thread of each process). A virtual machine's speed
drifts from minute to minute, which moves the wall figures far more than the
CPU ones, so two versions of the arena are best compared on both, in runs
alternated in the same minutes. The figure the arena aims at is the league's
moves/second as a fraction of the ceiling (at least 0.3).

Run: ``python bench/tournament.py [--quick] [--games N] [--leagues N] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gateway import bench_pingpong, start_pingpong  # noqa: E402
from bench.kit import cpu_seconds, temp_arena  # noqa: E402
from cli.local import LocalArena as Arena  # noqa: E402
from store.codec import text  # noqa: E402
from store.keys import Keys  # noqa: E402
from store.results import stored_record  # noqa: E402


def _cli(arena: Arena, *args: str) -> None:
    done = arena.tablanette(*args, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"tablanette {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


def bench_league(
    arena: Arena, bots: list[str], games: int, name: str = "bench", roles: dict[str, list[int]] | None = None
) -> tuple[float, int, int, dict[str, float]]:
    """The league's seconds (first match started to last commit), matches, moves, and the CPU seconds of each
    role's processes (``roles``: pids by role) over the league (the CLI's start-up included: it is idle)."""
    _cli(arena, "league", "create", name, "--games", str(games), "--rule", "deals=1")
    _cli(arena, "league", "add-bot", name, *bots)
    roles = roles or {}
    before = {role: sum(map(cpu_seconds, pids)) for role, pids in roles.items()}
    _cli(arena, "league", "start", name, "--window", "0")
    cpu = {role: sum(map(cpu_seconds, pids)) - before[role] for role, pids in roles.items()}
    keys = Keys(arena.prefix).league(name)
    ids = [text(m) for m in arena.redis.lrange(keys.plan, 0, -1)]
    started = [float(arena.redis.hget(keys.match(m), "started_at") or 0) for m in ids]
    finished = [float(arena.redis.hget(keys.match(m), "finished_at") or 0) for m in ids]
    elapsed = max(finished) - min(started)  # first match started to last commit, CLI start-up excluded
    raw = arena.redis.hgetall(keys.records)
    moves = sum(len(d["plays"]) for rec in raw.values() for d in stored_record(rec, "bench")["deals"])
    return elapsed, len(raw), moves, cpu


def bench_celery_noop(arena: Arena, count: int) -> float:
    env = arena.child_env()
    code = (
        "import sys, time, redis\n"
        "from worker.celery_app import app, settings\n"
        "key, n = sys.argv[1], int(sys.argv[2])\n"
        "r = redis.Redis.from_url(settings.redis_url)\n"
        "start = time.perf_counter()\n"
        "for _ in range(n): app.send_task('tablanette.noop', args=[key], queue=settings.queue)\n"
        "while int(r.get(key) or 0) < n: time.sleep(0.01)\n"
        "print(time.perf_counter() - start)\n"
    )
    key = f"{arena.prefix}:bench:noop"  # the benchmark's own counter, deleted with the prefix
    out = subprocess.run(
        [sys.executable, "-c", code, key, str(count)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--games", type=int, help="games a pairing in each league (default 6; --quick: 2)")
    parser.add_argument("--leagues", type=int, help="leagues played, the median kept (default 3; --quick: 1)")
    args = parser.parse_args()
    bots = ["b1", "b2", "b3", "b4"]
    games = args.games or (2 if args.quick else 6)
    noops = 200 if args.quick else 2000
    pings = 500 if args.quick else 5000
    leagues = args.leagues or (1 if args.quick else 3)

    arena = temp_arena("tournament")
    try:
        echo, _ = start_pingpong(arena)
        ping_before = asyncio.run(bench_pingpong(echo, pings, 600))
        engine, port = arena.start_engine()
        roles: dict[str, list[int]] = {"engine": [engine.popen.pid], "workers": [], "bots": []}
        for b in bots:
            roles["bots"].append(arena.start_python_bot("random", b, arena.add_bot(b), port).popen.pid)
        for w in ("w1", "w2"):
            roles["workers"].append(arena.start_worker(w).popen.pid)
        arena.wait_connected(*bots)
        runs, pings_s = [], [ping_before]
        for i in range(leagues):
            runs.append(bench_league(arena, bots, games, f"bench-{i + 1}", roles))
            pings_s.append(asyncio.run(bench_pingpong(echo, pings, 600)))
        noop_s = bench_celery_noop(arena, noops)
        ping_s = min(pings_s)
    finally:
        arena.close()

    league_s, matches, moves, _ = sorted(runs, key=lambda r: r[2] / r[0])[len(runs) // 2]  # the median league
    cpu_ms = {  # CPU a move by role: the median over the leagues
        role: round(sorted(1000 * c[role] / m for _, _, m, c in runs)[len(runs) // 2], 3) for role in roles
    }
    figures: dict[str, Any] = {
        "leagues": leagues,
        "matches": matches,
        "matches_per_second": round(matches / league_s, 2),
        "moves": moves,
        "moves_per_second": round(moves / league_s, 1),
        "moves_per_second_each": [round(m / s, 1) for s, _, m, _ in runs],
        "cpu_ms_per_move": cpu_ms,
        "celery_noop_tasks_per_second": round(noops / noop_s, 1),
        "grpc_pingpongs_per_second": round(pings / ping_s, 1),
    }
    figures["match_vs_noop_task"] = round(figures["celery_noop_tasks_per_second"] / figures["matches_per_second"], 1)
    figures["move_vs_pingpong"] = round(figures["grpc_pingpongs_per_second"] / figures["moves_per_second"], 2)
    figures["fraction_of_ceiling"] = round(figures["moves_per_second"] / figures["grpc_pingpongs_per_second"], 3)
    if args.json:
        print(json.dumps(figures))
        return
    print(
        "a league end to end (2 Celery workers, 1 engine service, 4 random bots, one deal per match; "
        f"the median of {leagues} leagues)"
    )
    each = ", ".join(f"{x:.0f}" for x in figures["moves_per_second_each"])
    print(
        f"  league               {figures['matches_per_second']:10.2f} matches/s  {figures['moves_per_second']:10.1f}"
        f" moves/s   ({matches} matches, {moves} moves in {league_s:.1f} s; each league: {each} moves/s)"
    )
    print(
        f"  raw Celery no-op     {figures['celery_noop_tasks_per_second']:10.1f} tasks/s    (same broker, same workers)"
        f"   -> one match costs {figures['match_vs_noop_task']}x a no-op task"
    )
    print(
        f"  raw gRPC ping-pong   {figures['grpc_pingpongs_per_second']:10.1f} round trips/s"
        f"   -> one move costs {figures['move_vs_pingpong']}x a ping-pong"
    )
    print(f"  league moves/s as a fraction of the ping-pong ceiling: {figures['fraction_of_ceiling']:.2f}")
    print(
        "  CPU a move (median league): "
        + ", ".join(f"{role} {ms:.3f} ms" for role, ms in cpu_ms.items())
        + f"; the arena's (engine and workers) {cpu_ms['engine'] + cpu_ms['workers']:.3f} ms"
    )


if __name__ == "__main__":
    main()
