"""How many idle bots one engine replica holds, and what each one costs, while a league plays.

One engine service replica, one Celery worker, two Python SDK bots and a league
of theirs fed by the real scheduler. With the league playing, the benchmark
notes the engine's resident memory, then connects ``--bots`` idle bots from
this process, each on its own gRPC channel (its own HTTP/2 connection, as real
bots have), each saying Hello, waiting for its Welcome and sending a keepalive
every half keepalive period. It holds them for ``--hold`` seconds and prints:

- the engine's memory before and with the bots, and the cost per bot, against
  the 100 KB per bot the arena promises (the ratio is the figure to watch);
- the league's matches played meanwhile, and whether any healthy bot was
  charged a timeout, an illegal play or a forfeit (none may be).

The bots all connect from this machine, so the run raises the per-address
limits that would otherwise (rightly) refuse 2,000 streams from one address:
``TABLANETTE_MAX_STREAMS_PER_ADDRESS`` and the per-address Hello rate.

Run: ``python bench/capacity.py [--bots 2000] [--hold 20] [--json]`` (needs
Redis at TABLANETTE_REDIS_URL or 127.0.0.1:6379; uses its own key prefix).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.kit import temp_arena  # noqa: E402
from cli.local import CLI, LocalArena  # noqa: E402
from store.leagues import LeagueStore  # noqa: E402
from store.results import LeagueResults  # noqa: E402
from store.tokens import BotTokens  # noqa: E402
from tablanette.v1 import arena_pb2 as apb  # noqa: E402
from tablanette.v1 import arena_pb2_grpc  # noqa: E402

TARGET_KB = 100.0
LEAGUE = "capacity"
CONNECT_AT_ONCE = 200
"""Hellos in flight at a time while the idle bots connect."""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class IdleBot:
    """One idle bot: its own channel and stream, a Hello, then a keepalive now and then."""

    def __init__(self, port: int, name: str, token: str) -> None:
        self.name, self.token = name, token
        # a local subchannel pool: a connection of its own, not one shared by every channel to this address
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])
        self.call: Any = None
        self.keepalive_ms = 10_000

    async def connect(self) -> None:
        self.call = arena_pb2_grpc.BotGatewayStub(self.channel).Connect()
        await self.call.write(apb.BotMessage(hello=apb.Hello(token=self.token, bot_name=self.name, version="idle")))
        first = await self.call.read()
        if first.WhichOneof("kind") != "welcome":
            raise RuntimeError(f"{self.name}: expected a Welcome, got {first}")
        self.keepalive_ms = first.welcome.keepalive_ms

    async def idle(self, until: float) -> None:
        async def drain() -> None:
            while await self.call.read() is not grpc.aio.EOF:
                pass

        reader = asyncio.create_task(drain())
        try:
            while time.monotonic() < until:
                await asyncio.sleep(min(self.keepalive_ms / 2000, max(until - time.monotonic(), 0)))
                await self.call.write(apb.BotMessage(keepalive=apb.Keepalive(unix_ms=int(time.time() * 1000))))
        finally:
            reader.cancel()

    async def close(self) -> None:
        if self.call is not None:
            self.call.cancel()
        await self.channel.close()


async def hold_idle_bots(port: int, tokens: dict[str, str], hold: float, engine_pid: int) -> dict[str, Any]:
    bots = [IdleBot(port, name, token) for name, token in tokens.items()]
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)

    async def connect(bot: IdleBot) -> None:
        async with gate:
            await bot.connect()

    start = time.monotonic()
    await asyncio.gather(*(connect(b) for b in bots))
    connected_in = time.monotonic() - start
    until = time.monotonic() + hold
    idlers = [asyncio.create_task(b.idle(until)) for b in bots]
    await asyncio.sleep(hold / 2)
    rss_with = rss_mb(engine_pid)
    await asyncio.gather(*idlers)
    rss_end = rss_mb(engine_pid)
    for b in bots:
        await b.close()
    return {"connect_seconds": round(connected_in, 2), "rss_with_mb": rss_with, "rss_end_mb": rss_end}


def start_league(arena: LocalArena, port: int) -> None:
    for name, kind in (("cap-greedy", "greedy"), ("cap-random", "random")):
        arena.start_python_bot(kind, name, arena.add_bot(name), port, "--think-ms", "20")
    arena.wait_connected("cap-greedy", "cap-random")
    arena.start_worker("worker")
    for args in (
        ("league", "create", LEAGUE, "--games", "1000", "--rule", "deals=2"),
        ("league", "add-bot", LEAGUE, "cap-greedy", "cap-random"),
    ):
        done = arena.tablanette(*args)
        if done.returncode:
            raise RuntimeError(done.stderr)
    arena.spawn("scheduler", [*CLI, "league", "start", LEAGUE, "--window", "2"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bots", type=int, default=2000)
    parser.add_argument("--hold", type=float, default=20.0, help="seconds the idle bots stay connected")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 4 * args.bots + 1024  # our sockets and the engine's (a child inherits the limit)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    arena = temp_arena("capacity")
    try:
        limits = {
            "TABLANETTE_MAX_STREAMS_PER_ADDRESS": str(args.bots + 100),
            "TABLANETTE_HELLO_RATE": "1000",
            "TABLANETTE_HELLO_BURST": str(args.bots + 100),
        }
        engine, port = arena.start_engine("engine", **limits)
        start_league(arena, port)
        store = LeagueStore(arena.redis, arena.prefix)
        while store.status(LEAGUE).done < 2:
            time.sleep(0.2)
        time.sleep(2)
        rss_before = rss_mb(engine.popen.pid)
        tokens = BotTokens(arena.redis, arena.prefix)
        idle = {f"idle{i:05d}": tokens.add(f"idle{i:05d}") for i in range(args.bots)}
        done_before = store.status(LEAGUE).done
        held = asyncio.run(hold_idle_bots(port, idle, args.hold, engine.popen.pid))
        played = store.status(LEAGUE).done - done_before
        store.cancel(LEAGUE)
        charged = [
            f"{r.bot}: {r.timeouts} timeouts, {r.illegal} illegal, {r.forfeits} forfeits"
            for r in LeagueResults(arena.redis, arena.prefix).standings(LEAGUE)
            if r.timeouts or r.illegal or r.forfeits
        ]
        per_bot_kb = (held["rss_with_mb"] - rss_before) * 1024 / args.bots
        result = {
            "bots": args.bots,
            "rss_before_mb": round(rss_before, 1),
            "rss_with_bots_mb": round(held["rss_with_mb"], 1),
            "per_bot_kb": round(per_bot_kb, 1),
            "target_kb": TARGET_KB,
            "ratio_to_target": round(per_bot_kb / TARGET_KB, 2),
            "connect_seconds": held["connect_seconds"],
            "league_matches_meanwhile": played,
            "healthy_bots_charged": charged,
        }
    finally:
        arena.close()
    if args.json:
        print(json.dumps(result))
        return
    print(f"engine replica, league playing: {result['rss_before_mb']} MB resident")
    print(f"with {args.bots} idle bots connected ({result['connect_seconds']} s to connect them all):")
    print(f"  {result['rss_with_bots_mb']} MB resident: {result['per_bot_kb']} KB per bot")
    print(f"  {result['ratio_to_target']}x the {TARGET_KB:.0f} KB per bot the arena promises (1.0 or less: kept)")
    print(f"the league played {played} matches meanwhile; healthy bots charged: {charged or 'none'}")
    if charged or per_bot_kb > TARGET_KB:
        sys.exit(1)


if __name__ == "__main__":
    main()
