"""A thousand spectators on one web process, beside the same league with none, in the same run.

An arena on this machine (Redis, one engine service, two Celery workers, four
``random`` bots that think a few ms a move, ``tablanette web``) plays leagues
alike, ``--rounds`` times in turn (so a drift in the machine's speed falls on both
alike): one with nobody watching, then one with ``--spectators`` Server-Sent
Events clients (default 1,000) connected to the one web process, spread over the
league's running matches and moved to the next running match as each ends (so
every spectator is watching something the whole time). Printed:

- the leagues' moves/second with and without spectators (all rounds pooled), and
  the ratio, with each round's (the target: at least 0.9; the spectators' own
  client process runs on the same two cores, so its CPU is in the ratio too);
- the web process's memory (RSS) before the spectators connect and with all of them
  connected, and the difference per spectator;
- events delivered to the spectators, and how many were dropped for falling behind.

The clients are one asyncio process speaking HTTP/1.1 on raw sockets (a
spectator costs the bench little, so what is measured is the web process's).
Run: ``python bench/spectators.py [--spectators N] [--games N] [--rounds N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.kit import cpu_seconds, temp_arena  # noqa: E402
from cli.local import CLI, LocalArena, free_port  # noqa: E402
from store.leagues import LeagueStore  # noqa: E402
from store.results import LeagueResults  # noqa: E402

BOTS = ["sa", "sb", "sc", "sd"]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def play_league(arena: LocalArena, name: str, games: int) -> tuple[float, int]:
    """Play a league to its end: (seconds from start to the last commit, moves)."""
    for args in (
        ["league", "create", name, "--games", str(games), "--rule", "deals=2"],
        ["league", "add-bot", name, *BOTS],
    ):
        subprocess.run([*CLI, *args], check=True, capture_output=True, env=arena.child_env())
    started = time.monotonic()
    subprocess.run(
        [*CLI, "league", "start", name, "--window", "4"], check=True, capture_output=True, env=arena.child_env()
    )
    seconds = time.monotonic() - started
    store, results = LeagueStore(arena.redis, arena.prefix), LeagueResults(arena.redis, arena.prefix)
    moves = 0
    for mid in store.match_ids(name):
        record = results.record(name, mid)
        moves += sum(len(d["plays"]) for d in record["deals"]) if record else 0
    return seconds, moves


CLIENT = r"""
import asyncio, json, sys
import redis
sys.path.insert(0, sys.argv[1])
from store.leagues import LeagueStore
host, port, league = sys.argv[2], int(sys.argv[3]), sys.argv[4]
count, prefix, url = int(sys.argv[5]), sys.argv[6], sys.argv[7]
store = LeagueStore(redis.Redis.from_url(url), prefix)
events = dropped = connected = 0
live, over = [], False

def look():
    if not store.exists(league):
        return [], False
    ids = store.match_ids(league)
    running = [m for m in ids if store.match(league, m).get("status") == "running"]
    return running, store.status(league).status in ("finished", "incomplete", "cancelled")

async def follow():
    global live, over
    while not over:
        live, over = await asyncio.to_thread(look)
        await asyncio.sleep(0.2)

async def watch(i):
    global events, dropped, connected
    while not over:
        if not live:
            await asyncio.sleep(0.05)
            continue
        mid = live[i % len(live)]
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as exc:
            print(f"connect: {exc}", file=sys.stderr, flush=True)
            await asyncio.sleep(0.1)
            continue
        ask = f"GET /api/leagues/{league}/live/{mid} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n"
        writer.write(ask.encode())
        connected += 1
        try:
            await writer.drain()
            while True:
                line = await reader.readline()
                if not line:
                    break
                if line.startswith(b"event: "):
                    events += 1
                    if line.startswith(b"event: dropped"):
                        dropped += 1
                    if line.startswith(b"event: over") or line.startswith(b"event: finished"):
                        break
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            connected -= 1
            writer.close()

async def report():
    while not over:
        print(json.dumps({"connected": connected, "events": events, "dropped": dropped}), flush=True)
        await asyncio.sleep(0.5)

async def main():
    tasks = [asyncio.ensure_future(follow()), asyncio.ensure_future(report())]
    await asyncio.gather(*(watch(i) for i in range(count)))
    await asyncio.gather(*tasks)
    print(json.dumps({"connected": connected, "events": events, "dropped": dropped, "done": True}), flush=True)

asyncio.run(main())
"""


def watch_league(
    arena: LocalArena, web: Any, web_port: int, name: str, games: int, spectators: int
) -> tuple[tuple[float, int], int, int, dict[str, Any]]:
    """Play league ``name`` with ``spectators`` SSE clients on it: ((seconds, moves), the web's peak RSS in
    KB, the most spectators connected at once, the client's last report with the CPU seconds the web process
    and the client spent meanwhile)."""
    client_argv = [sys.executable, "-c", CLIENT, str(ROOT), "127.0.0.1", str(web_port), name, str(spectators)]
    client_argv += [arena.prefix, arena.redis_url]
    peak_kb, most = rss_kb(web.popen.pid), 0
    web_cpu = cpu_seconds(web.popen.pid)
    with (arena.logs / f"spectators-{name}.log").open("w") as client_log:
        client = subprocess.Popen(
            client_argv, stdout=subprocess.PIPE, stderr=client_log, text=True, env=arena.child_env()
        )
        reports: list[dict[str, Any]] = []

        def read_reports() -> None:
            assert client.stdout is not None
            for line in client.stdout:
                reports.append(json.loads(line))

        reader = threading.Thread(target=read_reports, daemon=True)
        reader.start()
        played: list[tuple[float, int]] = []
        player = threading.Thread(target=lambda: played.append(play_league(arena, name, games)))
        player.start()
        while player.is_alive():
            peak_kb = max(peak_kb, rss_kb(web.popen.pid))
            if reports:
                most = max(most, reports[-1]["connected"])
            time.sleep(0.2)
        player.join()
        cpu = {"web_cpu_s": cpu_seconds(web.popen.pid) - web_cpu, "client_cpu_s": cpu_seconds(client.pid)}
        client.send_signal(signal.SIGTERM)
        client.wait(30)
        reader.join(5)
    return played[0], peak_kb, most, {**(reports[-1] if reports else {}), **cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--games", type=int, default=4, help="games per pairing in each league")
    parser.add_argument("--rounds", type=int, default=3, help="leagues played alone and watched, alternately")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.spectators + 256)), hard))
    arena = temp_arena("spectators")
    out: dict[str, Any] = {"spectators": args.spectators, "rounds": []}
    try:
        _, port = arena.start_engine()
        for bot in BOTS:
            arena.start_python_bot("random", bot, arena.add_bot(bot), port, "--think-ms", "3")
        arena.start_worker("w1")
        arena.start_worker("w2")
        arena.wait_connected(*BOTS)
        web_port = free_port()
        web = arena.spawn("web", [*CLI, "web", "--port", str(web_port)])
        web.wait_for(r"web ladder on", "the web process")
        time.sleep(1.0)
        idle_kb = rss_kb(web.popen.pid)
        peak_kb, most, events, dropped = idle_kb, 0, 0, 0
        web_cpu = client_cpu = 0.0
        totals = {"alone": [0.0, 0], "watched": [0.0, 0]}
        for r in range(args.rounds):  # alternate, so a drift in the machine's speed falls on both alike
            alone_s, alone_moves = play_league(arena, f"alone-{r}", args.games)
            (watched_s, watched_moves), peak, connected, last = watch_league(
                arena, web, web_port, f"watched-{r}", args.games, args.spectators
            )
            peak_kb, most = max(peak_kb, peak), max(most, connected)
            events, dropped = events + last.get("events", 0), dropped + last.get("dropped", 0)
            web_cpu, client_cpu = web_cpu + last["web_cpu_s"], client_cpu + last["client_cpu_s"]
            totals["alone"][0] += alone_s
            totals["alone"][1] += alone_moves
            totals["watched"][0] += watched_s
            totals["watched"][1] += watched_moves
            out["rounds"].append(round((watched_moves / watched_s) / (alone_moves / alone_s), 3))
        alone_rate = totals["alone"][1] / totals["alone"][0]
        watched_rate = totals["watched"][1] / totals["watched"][0]
        out.update(
            {
                "moves_per_second_alone": round(alone_rate, 1),
                "moves_per_second_watched": round(watched_rate, 1),
                "ratio": round(watched_rate / alone_rate, 3),
                "most_connected": most,
                "events_delivered": events,
                "dropped": dropped,
                "web_rss_idle_mb": round(idle_kb / 1024, 1),
                "web_rss_peak_mb": round(peak_kb / 1024, 1),
                "kb_per_spectator": round((peak_kb - idle_kb) / max(most, 1), 1),
                "watched_seconds": round(totals["watched"][0], 1),
                "web_cpu_s": round(web_cpu, 1),
                "client_cpu_s": round(client_cpu, 1),
            }
        )
    finally:
        arena.close()
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{args.spectators} spectators on one web process (2 workers, 4 bots, window 4, 2 deals a match, "
        f"{args.rounds} leagues alone and {args.rounds} watched, alternately; logs {arena.workdir})"
    )
    print(f"  leagues alone:   {out['moves_per_second_alone']:8.1f} moves/s")
    print(
        f"  leagues watched: {out['moves_per_second_watched']:8.1f} moves/s  ratio {out['ratio']:.2f} "
        f"(each round: {', '.join(f'{x:.2f}' for x in out['rounds'])}; target >= 0.9; the spectators' client "
        "shares the 2 cores)"
    )
    print(
        f"  spectators connected at most {out['most_connected']}, {out['events_delivered']} events delivered, "
        f"{out['dropped']} dropped for falling behind"
    )
    print(
        f"  while watched ({out['watched_seconds']} s on 2 cores): the web process used {out['web_cpu_s']} s of CPU, "
        f"the spectators' client {out['client_cpu_s']} s"
    )
    print(
        f"  web RSS {out['web_rss_idle_mb']} MB idle, {out['web_rss_peak_mb']} MB at most: "
        f"{out['kb_per_spectator']} KB a spectator"
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
