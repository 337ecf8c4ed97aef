"""PossibleWorlds (K = 32) beside LegalPlays, on the same real positions: through the Rules API and in-process.

Positions come from real games between greedy bots (presets tablic, tablic-pagat
and pisti; 2 and 4 players; every play of the first deals, so first rounds,
mid-deal and last rounds alike). For each position the seat to play asks:

- **PossibleWorlds**: K = 32 worlds for its observation (the named form a Turn
  carries), seeded per position, answered as card names and (``packed_worlds``)
  as masks;
- **LegalPlays**: the legal plays of its hand on the table.

Both go to a real engine service replica (one call at a time, loopback), and are
also timed in-process (the engine function behind each, no gRPC). Calls
alternate in blocks, so machine load hits both alike; block medians are kept.
Wall time on a shared machine includes waiting for a core, so the CPU time per
call is printed too: the server process's (from /proc) over the service, the
bench's own in-process.
Run: ``python bench/worlds.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.kit import CpuMeter, temp_arena  # noqa: E402
from bots.greedy import GreedyBot  # noqa: E402
from engine_service.rules import Match, Rules, card_names  # noqa: E402
from engine_service.rules_answers import legal_plays, possible_worlds  # noqa: E402
from engine_service.wire import convert  # noqa: E402
from tablanette.v1 import game_pb2 as gpb  # noqa: E402
from tablanette.v1 import rules_pb2 as rpb  # noqa: E402
from tablanette.v1 import rules_pb2_grpc  # noqa: E402

K = 32
CASES = [("tablic", 2), ("tablic", 4), ("tablic-pagat", 2), ("tablic-pagat", 4), ("pisti", 2), ("pisti", 4)]

Pair = tuple[rpb.PossibleWorldsRequest, rpb.LegalPlaysRequest]


def positions(per_case: int) -> list[Pair]:
    """``per_case`` positions of each case: the seat to play at every play of real greedy games."""
    out: list[Pair] = []
    for preset, players in CASES:
        spec = gpb.RulesSpec(preset=preset, players=players)
        match = Match(Rules.preset(preset, players=players), seed=f"bench-worlds-{preset}-{players}")
        bot = GreedyBot()
        for i in range(per_case):
            if match.is_over:
                break
            obs = match.observation(match.turn)
            worlds = rpb.PossibleWorldsRequest(rules=spec, observation=convert.observation_to_pb(obs), k=K, seed=i)
            position = rpb.Position(table=card_names(obs.table), hand=card_names(obs.hand))
            out.append((worlds, rpb.LegalPlaysRequest(rules=spec, position=position)))
            match.play(bot.choose(obs))
    return out


def in_process(pairs: list[Pair], blocks: int) -> tuple[list[float], list[float], float, float]:
    """Wall time per call by block (worlds, legal plays), and CPU time per call over all blocks (same order)."""
    worlds, legal = [], []
    cpu = [0.0, 0.0]
    per = len(pairs) // blocks
    for b in range(blocks):
        chunk = pairs[b * per : (b + 1) * per]
        start, cpu_start = time.perf_counter(), time.process_time()
        for w, _ in chunk:
            possible_worlds(w, 5000)
        worlds.append((time.perf_counter() - start) / len(chunk))
        cpu[0] += time.process_time() - cpu_start
        start, cpu_start = time.perf_counter(), time.process_time()
        for _, lp in chunk:
            legal_plays(lp, 5000)
        legal.append((time.perf_counter() - start) / len(chunk))
        cpu[1] += time.process_time() - cpu_start
    return worlds, legal, cpu[0] / (per * blocks), cpu[1] / (per * blocks)


Times = list[float]


async def over_grpc(
    port: int, pairs: list[Pair], blocks: int, meters: tuple[CpuMeter, CpuMeter]
) -> tuple[Times, Times, Times, Times]:
    """Wall times per call by block (worlds, packed worlds, legal plays), each worlds call's; the server's
    CPU seconds go to ``meters`` (worlds named, legal plays)."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = rules_pb2_grpc.RulesServiceStub(channel)
    for w, lp in pairs[:40]:  # warm-up
        await stub.PossibleWorlds(w)
        await stub.LegalPlays(lp)
    worlds, packed, legal, each = [], [], [], []
    per = len(pairs) // blocks
    for b in range(blocks):
        chunk = pairs[b * per : (b + 1) * per]
        start = time.perf_counter()
        with meters[0].counting():
            for w, _ in chunk:
                t = time.perf_counter()
                await stub.PossibleWorlds(w)
                each.append(time.perf_counter() - t)
        worlds.append((time.perf_counter() - start) / len(chunk))
        start = time.perf_counter()
        for w, _ in chunk:
            w.packed_worlds = True
            await stub.PossibleWorlds(w)
            w.packed_worlds = False
        packed.append((time.perf_counter() - start) / len(chunk))
        start = time.perf_counter()
        with meters[1].counting():
            for _, lp in chunk:
                await stub.LegalPlays(lp)
        legal.append((time.perf_counter() - start) / len(chunk))
    await channel.close()
    return worlds, packed, legal, each


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    per_case, blocks, rounds = (40, 4, 1) if args.quick else (120, 8, 3)
    pairs = positions(per_case) * rounds
    local_w, local_l, cpu_w, cpu_l = in_process(pairs, blocks)
    arena = temp_arena("worlds")
    try:  # the per-address rate limit is for strangers; this client asks as fast as it can
        engine, port = arena.start_engine(TABLANETTE_RULES_RATE="1000000", TABLANETTE_RULES_BURST="1000000")
        meters = (CpuMeter(engine.popen.pid), CpuMeter(engine.popen.pid))
        rpc_w, rpc_p, rpc_l, each = asyncio.run(over_grpc(port, pairs, blocks, meters))
    finally:
        arena.close()
    ms = 1000.0
    each.sort()
    figures = {
        "positions": len(pairs) // rounds,
        "k": K,
        "rpc_worlds_ms": round(statistics.median(rpc_w) * ms, 3),
        "rpc_packed_worlds_ms": round(statistics.median(rpc_p) * ms, 3),
        "rpc_legal_plays_ms": round(statistics.median(rpc_l) * ms, 3),
        "rpc_ratio": round(statistics.median(rpc_w) / statistics.median(rpc_l), 2),
        "rpc_worlds_p95_ms": round(each[int(0.95 * (len(each) - 1))] * ms, 3),
        "rpc_worlds_max_ms": round(each[-1] * ms, 3),
        "server_cpu_worlds_ms": round(meters[0].seconds / len(each) * ms, 3),
        "server_cpu_legal_plays_ms": round(meters[1].seconds / len(each) * ms, 3),
        "local_cpu_worlds_ms": round(cpu_w * ms, 3),
        "local_cpu_legal_plays_ms": round(cpu_l * ms, 3),
        "load_average": round(os.getloadavg()[0], 1),
        "local_worlds_ms": round(statistics.median(local_w) * ms, 3),
        "local_legal_plays_ms": round(statistics.median(local_l) * ms, 3),
        "local_ratio": round(statistics.median(local_w) / statistics.median(local_l), 2),
    }
    if args.json:
        print(json.dumps(figures))
        return
    f = figures
    print(f"PossibleWorlds (K = {K}) vs LegalPlays, {f['positions']} real positions ({len(CASES)} cases)")
    print(f"  Rules API   PossibleWorlds {f['rpc_worlds_ms']:7.3f} ms   LegalPlays {f['rpc_legal_plays_ms']:7.3f} ms")
    print(f"              ratio {f['rpc_ratio']:.2f} x LegalPlays")
    print(f"              PossibleWorlds packed (masks) {f['rpc_packed_worlds_ms']:7.3f} ms")
    print(
        f"              server CPU per call: PossibleWorlds {f['server_cpu_worlds_ms']:.3f} ms, "
        f"LegalPlays {f['server_cpu_legal_plays_ms']:.3f} ms"
    )
    print(f"              PossibleWorlds p95 {f['rpc_worlds_p95_ms']:.3f} ms, max {f['rpc_worlds_max_ms']:.3f} ms")
    print(f"  in-process  worlds {f['local_worlds_ms']:7.3f} ms   legal plays {f['local_legal_plays_ms']:7.3f} ms")
    print(f"              ratio {f['local_ratio']:.2f} x legal plays")
    print(
        f"              CPU per call: worlds {f['local_cpu_worlds_ms']:.3f} ms, "
        f"legal plays {f['local_cpu_legal_plays_ms']:.3f} ms"
    )
    print(f"  (wall times are shared with other work on this machine: load average {f['load_average']})")


if __name__ == "__main__":
    main()
