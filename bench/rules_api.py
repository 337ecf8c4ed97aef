"""The Rules service's ``LegalPlays`` round trip, beside a raw unary gRPC call.

Both measured in the same run on this machine, from one client process:

- **LegalPlays**: a bot's everyday question (preset ``tablic``, a table of 4-6
  cards, a hand of 2-6) asked of a real engine service replica, one call at a
  time; the positions are seeded and vary, so no answer is cached.
- **raw unary**: a unary call to a raw gRPC echo server (bench/pingpong_server.py:
  no protobuf, no logic) with a payload the size of a LegalPlays answer.

The two alternate in blocks, so machine load hits both alike; the medians of the
blocks are kept. Run: ``python bench/rules_api.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gateway import start_pingpong  # noqa: E402
from bench.kit import temp_arena  # noqa: E402
from bench.pingpong_server import UNARY  # noqa: E402
from engine_service.rules import CARDS  # noqa: E402
from tablanette.v1 import game_pb2 as gpb  # noqa: E402
from tablanette.v1 import rules_pb2 as rpb  # noqa: E402
from tablanette.v1 import rules_pb2_grpc  # noqa: E402

SEED = 12


def positions(count: int) -> list[rpb.LegalPlaysRequest]:
    rng = random.Random(SEED)
    out = []
    for _ in range(count):
        cards = [str(c) for c in rng.sample(CARDS, 12)]
        table, hand = cards[: rng.randint(4, 6)], cards[6 : 6 + rng.randint(2, 6)]
        position = rpb.Position(table=table, hand=hand)
        out.append(rpb.LegalPlaysRequest(rules=gpb.RulesSpec(preset="tablic"), position=position))
    return out


async def bench(engine_port: int, echo_port: int, calls: int, blocks: int) -> dict[str, float]:
    requests = positions(calls)
    rules_channel = grpc.aio.insecure_channel(f"127.0.0.1:{engine_port}")
    echo_channel = grpc.aio.insecure_channel(f"127.0.0.1:{echo_port}")
    stub = rules_pb2_grpc.RulesServiceStub(rules_channel)
    echo = echo_channel.unary_unary(UNARY)
    sizes = []
    for r in requests[:50]:  # warm-up, and the size of an answer
        sizes.append(len((await stub.LegalPlays(r)).SerializeToString()))
    payload = b"x" * int(statistics.mean(sizes))
    for _ in range(50):
        await echo(payload)
    per_block = calls // blocks
    legal, raw, plays = [], [], 0
    for b in range(blocks):
        chunk = requests[b * per_block : (b + 1) * per_block]
        start = time.perf_counter()
        for r in chunk:
            plays += len((await stub.LegalPlays(r)).plays)
        legal.append((time.perf_counter() - start) / len(chunk))
        start = time.perf_counter()
        for _ in chunk:
            await echo(payload)
        raw.append((time.perf_counter() - start) / len(chunk))
    await rules_channel.close()
    await echo_channel.close()
    legal_us, raw_us = statistics.median(legal) * 1e6, statistics.median(raw) * 1e6
    return {
        "calls": per_block * blocks,
        "answer_bytes": len(payload),
        "plays_per_answer": plays / (per_block * blocks),
        "legal_plays_us": round(legal_us, 1),
        "raw_unary_us": round(raw_us, 1),
        "ratio": round(legal_us / raw_us, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    calls, blocks = (400, 4) if args.quick else (4000, 10)

    arena = temp_arena("rules-api")
    try:  # the per-address rate limit is for strangers; this client asks as fast as it can
        _, port = arena.start_engine(TABLANETTE_RULES_RATE="1000000", TABLANETTE_RULES_BURST="1000000")
        figures = asyncio.run(bench(port, start_pingpong(arena)[0], calls, blocks))
    finally:
        arena.close()
    if args.json:
        print(json.dumps(figures))
        return
    print("the Rules service's LegalPlays vs a raw unary gRPC call (same run, loopback, one call at a time)")
    print(f"  raw unary call      {figures['raw_unary_us']:9.1f} µs   ({figures['answer_bytes']}-byte payload)")
    print(
        f"  LegalPlays          {figures['legal_plays_us']:9.1f} µs   ({figures['calls']} positions of a tablic deal, "
        f"{figures['plays_per_answer']:.1f} plays per answer)"
    )
    print(f"  ratio               {figures['ratio']:9.2f} × a raw unary call")


if __name__ == "__main__":
    main()
