"""Round trip of one move through the engine service, beside raw gRPC ping-pong.

Both are measured in the same run on this machine:

- **move**: a match runner asks a connected bot for a play: ``Dispatch.RequestPlay``
  to the engine service, which forwards the turn on the bot's stream, receives the
  answer, checks it and replies; the runner then applies it with the rules engine.
  Measured over whole matches between two Python SDK bots (``random``), so it is
  the real per-move cost, observation and legal plays included.
- **ping-pong**: a raw bidirectional gRPC stream (no protobuf, no logic) echoing a
  message of similar size between two processes.

Run: ``python bench/gateway.py [--quick] [--json]`` (needs Redis at
TABLANETTE_REDIS_URL or 127.0.0.1:6379; uses its own key prefix).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.kit import REDIS_URL, temp_arena  # noqa: E402
from cli.local import LocalArena as Arena  # noqa: E402
from engine_service.rules import Rules  # noqa: E402
from worker.match_runner import MatchRunner  # noqa: E402


async def bench_moves(arena: Arena, port: int, matches: int) -> tuple[float, int]:
    from redis.asyncio import Redis

    redis = Redis.from_url(REDIS_URL)
    runner = MatchRunner(redis, arena.prefix)
    moves = 0
    try:
        await runner.play(Rules.preset("tablic", deals=1), "warm-up", ["bench-a", "bench-b"], "bench/warm")
        start = time.perf_counter()
        for i in range(matches):
            out = await runner.play(Rules.preset("tablic", deals=1), f"b{i}", ["bench-a", "bench-b"], f"bench/{i}")
            moves += out.moves
        elapsed = time.perf_counter() - start
    finally:
        await runner.close()
        await redis.aclose()
    return elapsed, moves


def start_pingpong(arena: Arena) -> int:
    """The raw echo server (bench/pingpong_server.py) as a child of ``arena``; returns its port."""
    echo = arena.spawn("pingpong", [sys.executable, str(ROOT / "bench/pingpong_server.py")])
    deadline = time.monotonic() + 10
    while not (m := re.search(r"listening on [\d.]+:(\d+)", echo.text())):
        if time.monotonic() > deadline or not echo.alive():
            raise RuntimeError(f"ping-pong server did not start:\n{echo.text()}")
        time.sleep(0.05)
    return int(m.group(1))


async def bench_pingpong(port: int, count: int, size: int) -> float:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    call = channel.stream_stream("/bench.PingPong/Stream")()
    payload = b"x" * size
    for _ in range(100):  # warm-up
        await call.write(payload)
        await call.read()
    start = time.perf_counter()
    for _ in range(count):
        await call.write(payload)
        await call.read()
    elapsed = time.perf_counter() - start
    await call.done_writing()
    await channel.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    matches = 3 if args.quick else 20
    pings = 500 if args.quick else 5000

    arena = temp_arena("gateway")
    try:
        _, port = arena.start_engine()
        for name in ("bench-a", "bench-b"):
            arena.start_python_bot("random", name, arena.add_bot(name), port)
        arena.wait_connected("bench-a", "bench-b")
        move_s, moves = asyncio.run(bench_moves(arena, port, matches))

        ping_s = asyncio.run(bench_pingpong(start_pingpong(arena), pings, 600))
    finally:
        arena.close()

    move_us = move_s / moves * 1e6
    ping_us = ping_s / pings * 1e6
    figures = {
        "moves": moves,
        "move_round_trip_us": round(move_us, 1),
        "moves_per_second": round(moves / move_s, 1),
        "pingpongs": pings,
        "pingpong_round_trip_us": round(ping_us, 1),
        "ratio": round(move_us / ping_us, 2),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print("one move through the engine service vs raw gRPC ping-pong (same run, loopback)")
    print(f"  raw bidi ping-pong      {ping_us:9.1f} µs/round trip   ({pings} round trips, 600-byte messages)")
    print(
        f"  move via engine service {move_us:9.1f} µs/move         ({moves} moves in {matches} matches, "
        f"{moves / move_s:,.0f} moves/s)"
    )
    print(f"  ratio                   {move_us / ping_us:9.2f} × ping-pong")


if __name__ == "__main__":
    main()
