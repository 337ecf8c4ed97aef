"""Round trip of one move through the engine service, beside raw gRPC ping-pong.

All measured in the same run on this machine, over whole matches between two
Python SDK bots (``random``) connected to one engine service replica, so each is
the real per-move cost, observation and legal plays included:

- **move, played on the replica**: the runner asks the replica holding both bots
  to play the match (``Dispatch.PlayMatch``); per move the replica builds the
  turn, sends it on the bot's stream, checks and applies the answer, and sends
  the runner the events in batches, which the runner keeps; it checks the
  record the replica sends at the end once.
  This is what a league does when a match's bots share a replica.
- **move, played on the replica, SDK bots answering inline**: the same with
  the SDK's ``inline`` mode (``python -m bots random --inline``): each turn is
  answered on the event loop that read it, with no hand-off to a thread (and
  so one game at a time).
- **move, turn by turn**: the runner asks for each move with ``Dispatch.RequestPlay``
  (two hops a move: runner to replica, replica to bot), as it does when the bots
  are on different replicas or after a handoff.
- **move, played on the replica, bots that only answer**: the same, between two
  bots of bench/raw_bot.py, which answer every turn at once with a random legal play
  without reading the observation: the engine service's share of a move, with
  the bots' own work (the Python SDK's) taken away.
- **the same, one process each**: those bots again, each in a process of its own,
  as real bots are (the SDK lines' bots are too): the engine's share as deployed.
  The difference from the line above is what waking a second process each turn
  costs on this machine, not the engine's work.
- **the same, answering from a thread**: bench/raw_bot.py's ``--threads`` bots
  (one process each): grpc's blocking API, each turn answered by a pool thread
  and the answer handed to grpc's writer thread, as the SDK's threads mode
  does, with nothing else of the SDK. The SDK's threads mode is printed against
  it too: the hand-offs are what any bot built that way pays, the rest is the
  SDK's.
- **the same, turns named**: those bots again, but not asking for the packed
  form (docs/protocol.md#the-packed-form): every turn is spelled out in card
  names, as before the form existed. The difference is what the form saves.
- **floor**: the same bots (one process each) against bench/floor_server.py,
  the least a replica written in Python on grpc.aio can do for a move: the
  real protocol, rules and turn builder, a reader task and a queue per bot's
  stream, and nothing else of the engine service (no admission, registry,
  limits, clocks, reconnects or runner). The engine's distance from it is what
  its guarantees and its design cost; the floor's distance from the ping-pong is
  what playing the game in Python costs at all.
- **floor, reporting to a runner**: the floor server again, but each match
  streamed to this process as a replica streams it to its runner (each answer
  an event, in the engine's own batches, the record last), and followed here by
  a :class:`~engine_service.driver.MatchDriver` that checks the record, as the
  runner's does. The floor of the design rather than of a server: a runner that
  holds every answer so far is what lets a replica die mid-match at no bot's
  cost, and the engine lines above pay for it too.
- **ping-pong**: a raw bidirectional gRPC stream (no protobuf, no logic) echoing a
  message of similar size between two processes.

Wall-clock time on this 2-core machine mixes the engine's work with how the
kernel schedules five busy processes, so the run also prints **CPU time**: the
engine service's (every thread) per move while the answering bots in processes
of their own play, beside the echo server's per round trip and the floor
server's per move.

They alternate in blocks, with a ping-pong before the first block and after
every block; each block's ratios are taken against the mean of the two
ping-pongs around it, and the medians of those ratios are printed. A virtual
machine's speed drifts from minute to minute (another tenant takes the cores),
so a ratio between figures measured minutes apart would be partly that drift.

Run: ``python bench/gateway.py [--quick] [--json]`` (needs Redis at TABLANETTE_REDIS_URL or
127.0.0.1:6379; uses its own key prefix).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import statistics
import sys
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.floor_server import PLAYERS, RULES, reported_game_id  # noqa: E402
from bench.kit import REDIS_URL, CpuMeter, counting, temp_arena  # noqa: E402
from cli.local import LocalArena as Arena  # noqa: E402
from engine_service.driver import MatchDriver  # noqa: E402
from engine_service.rules import Rules  # noqa: E402
from engine_service.time_control import TimeControl  # noqa: E402
from tablanette.v1 import dispatch_pb2 as dpb  # noqa: E402
from worker.match_runner import MatchRunner  # noqa: E402


async def bench_moves(
    arena: Arena,
    port: int,
    matches: int,
    replica_matches: bool = True,
    bots: tuple[str, str] = ("bench-a", "bench-b"),
    clock: str = "wall",
    cpu: CpuMeter | None = None,
) -> tuple[float, int]:
    """Seconds and moves for ``matches`` one-deal matches between ``bots`` (on the league clock ``clock``);
    ``cpu`` counts what its process used during them."""
    from redis.asyncio import Redis

    redis = Redis.from_url(REDIS_URL)
    runner = MatchRunner(redis, arena.prefix, replica_matches=replica_matches)
    rules = Rules.preset("tablic", deals=1)
    control = TimeControl(rules.move_time_ms, clock)
    moves = 0
    tag = ("replica" if replica_matches else "turns") + "/" + bots[0] + "/" + clock
    try:
        await runner.play(rules, "warm-up", list(bots), f"bench/{tag}/warm", control)
        with counting(cpu):
            start = time.perf_counter()
            for i in range(matches):
                game_id = f"bench/{tag}/{time.monotonic_ns()}/{i}"
                out = await runner.play(rules, f"b{i}", list(bots), game_id, control)
                moves += out.moves
            elapsed = time.perf_counter() - start
    finally:
        await runner.close()
        await redis.aclose()
    return elapsed, moves


def start_answering_bots(
    arena: Arena, port: int, names: tuple[str, str], *flags: str, separate: bool = False
) -> tuple[str, str]:
    """Bots of bench/raw_bot.py (given ``flags``; one process, or one each if ``separate``) named
    ``names``, once welcomed; returns the names."""
    specs = [f"{name}={arena.add_bot(name)}" for name in names]
    argv = [sys.executable, str(ROOT / "bench/raw_bot.py"), *flags, "--address", f"127.0.0.1:{port}"]
    for group in [[spec] for spec in specs] if separate else [specs]:
        name = group[0].partition("=")[0]
        arena.spawn(f"{name}-bots", [*argv, *group]).wait_for("ready", f"the answering bots {' '.join(flags)}")
    return names


def start_floor(arena: Arena) -> tuple[int, int]:
    """bench/floor_server.py as a child of ``arena``; returns its port and pid."""
    floor = arena.spawn("floor", [sys.executable, str(ROOT / "bench/floor_server.py")])
    port = int(floor.wait_for(r"listening on [\d.]+:(\d+)", "the floor server").group(1))
    return port, floor.popen.pid


async def bench_floor(port: int, matches: int, cpu: CpuMeter | None = None) -> tuple[float, int]:
    """Seconds and moves for ``matches`` one-deal matches on the floor server (a warm-up match first)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        play = channel.unary_unary("/bench.Floor/Play")
        await play(b"1")
        with counting(cpu):
            start = time.perf_counter()
            moves = int(await play(str(matches).encode()))
            elapsed = time.perf_counter() - start
    return elapsed, moves


async def bench_floor_reported(port: int, matches: int, cpu: CpuMeter | None = None) -> tuple[float, int]:
    """Seconds and moves for ``matches`` one-deal matches streamed from the floor server, each followed here by
    a driver that checks the record and makes the finished match at the end, as a runner follows a replica
    (a warm-up match first)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stream = channel.unary_stream("/bench.Floor/PlayReported", response_deserializer=dpb.MatchEvents.FromString)

        async def follow(seed: str) -> int:
            game_id = reported_game_id(seed)
            driver = MatchDriver(RULES, seed, game_id, TimeControl.of_rules(RULES))
            async for batch in stream(seed.encode()):
                for event in batch.events:
                    if event.HasField("end"):
                        # what the runner keeps of the match, made once, and the replica's record checked by it
                        MatchRunner.check_replica_record(event.end, driver.finished(PLAYERS), seed, PLAYERS)
                    else:
                        driver.resume(event.seat, event.response)
            if not driver.over:
                raise RuntimeError(f"the floor server's match {seed} ended without its end")
            return driver.turn_id

        await follow(f"warm-{time.monotonic_ns()}")
        with counting(cpu):
            start = time.perf_counter()
            moves = sum([await follow(f"r{time.monotonic_ns()}-{i}") for i in range(matches)])
            elapsed = time.perf_counter() - start
    return elapsed, moves


def start_pingpong(arena: Arena) -> tuple[int, int]:
    """The raw echo server (bench/pingpong_server.py) as a child of ``arena``; returns its port and pid."""
    echo = arena.spawn("pingpong", [sys.executable, str(ROOT / "bench/pingpong_server.py")])
    deadline = time.monotonic() + 10
    while not (m := re.search(r"listening on [\d.]+:(\d+)", echo.text())):
        if time.monotonic() > deadline or not echo.alive():
            raise RuntimeError(f"ping-pong server did not start:\n{echo.text()}")
        time.sleep(0.05)
    return int(m.group(1)), echo.popen.pid


async def bench_pingpong(port: int, count: int, size: int, cpu: CpuMeter | None = None) -> float:
    """Seconds for ``count`` round trips of ``size`` bytes; ``cpu`` as in :func:`bench_moves`."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    call = channel.stream_stream("/bench.PingPong/Stream")()
    payload = b"x" * size
    for _ in range(100):  # warm-up
        await call.write(payload)
        await call.read()
    with counting(cpu):
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
    blocks, matches, pings = (2, 2, 300) if args.quick else (6, 4, 1000)

    arena = temp_arena("gateway")
    replica: list[float] = []
    inline: list[float] = []
    turns: list[float] = []
    raw: list[float] = []
    apart: list[float] = []
    named: list[float] = []
    threaded: list[float] = []
    floor: list[float] = []
    reported: list[float] = []
    ping: list[float] = []
    apart_moves = floor_moves = reported_moves = 0
    moves = 0
    try:
        engine, port = arena.start_engine()
        engine_cpu = CpuMeter(engine.popen.pid)  # while the answering bots in processes of their own play
        for name in ("bench-a", "bench-b"):
            arena.start_python_bot("random", name, arena.add_bot(name), port)
        inline_bots = ("inline-a", "inline-b")
        for name in inline_bots:
            arena.start_python_bot("random", name, arena.add_bot(name), port, "--inline")
        raw_bots = start_answering_bots(arena, port, ("raw-a", "raw-b"))
        apart_bots = start_answering_bots(arena, port, ("apart-a", "apart-b"), separate=True)
        named_bots = start_answering_bots(arena, port, ("named-a", "named-b"), "--named")
        threaded_bots = start_answering_bots(arena, port, ("threaded-a", "threaded-b"), "--threads", separate=True)
        arena.wait_connected("bench-a", "bench-b", *inline_bots, *raw_bots, *apart_bots, *named_bots, *threaded_bots)
        floor_port, floor_pid = start_floor(arena)
        floor_cpu, reported_cpu = CpuMeter(floor_pid), CpuMeter(floor_pid)
        start_answering_bots(arena, floor_port, ("floor-a", "floor-b"), separate=True)
        echo, echo_pid = start_pingpong(arena)
        echo_cpu = CpuMeter(echo_pid)
        ping.append(asyncio.run(bench_pingpong(echo, pings, 600, echo_cpu)) / pings)
        for _ in range(blocks):
            for out, kw in (
                (replica, {}),
                (inline, {"bots": inline_bots}),
                (turns, {"replica_matches": False}),
                (raw, {"bots": raw_bots}),
                (apart, {"bots": apart_bots}),
                (named, {"bots": named_bots}),
                (threaded, {"bots": threaded_bots}),
            ):
                cpu = engine_cpu if out is apart else None
                seconds, n = asyncio.run(bench_moves(arena, port, matches, cpu=cpu, **kw))
                out.append(seconds / n)
                moves += n
                apart_moves += n if out is apart else 0
            seconds, n = asyncio.run(bench_floor(floor_port, matches, floor_cpu))
            floor.append(seconds / n)
            floor_moves += n
            seconds, n = asyncio.run(bench_floor_reported(floor_port, matches, reported_cpu))
            reported.append(seconds / n)
            reported_moves += n
            ping.append(asyncio.run(bench_pingpong(echo, pings, 600, echo_cpu)) / pings)
    finally:
        arena.close()

    lines = (replica, inline, turns, raw, apart, named, threaded, floor, reported, ping)
    replica_us, inline_us, turns_us, raw_us, apart_us, named_us, threaded_us, floor_us, reported_us, ping_us = (
        statistics.median(x) * 1e6 for x in lines
    )
    around = [(a + b) / 2 for a, b in itertools.pairwise(ping)]  # each block's ping-pong: before and after it

    def ratio(moves: list[float]) -> float:
        """The median over blocks of a block's move time over the ping-pong around that block."""
        return round(statistics.median(m / p for m, p in zip(moves, around, strict=True)), 2)

    engine_cpu_us = engine_cpu.seconds / apart_moves * 1e6
    echo_cpu_us = echo_cpu.seconds / (pings * len(ping)) * 1e6
    floor_cpu_us = floor_cpu.seconds / floor_moves * 1e6
    reported_cpu_us = reported_cpu.seconds / reported_moves * 1e6
    figures = {
        "moves": moves,
        "engine_cpu_per_move_us": round(engine_cpu_us, 1),
        "echo_cpu_per_round_trip_us": round(echo_cpu_us, 1),
        "engine_cpu_ratio": round(engine_cpu_us / echo_cpu_us, 2),
        "floor_cpu_per_move_us": round(floor_cpu_us, 1),
        "floor_cpu_ratio": round(floor_cpu_us / echo_cpu_us, 2),
        "move_round_trip_us": round(replica_us, 1),
        "moves_per_second": round(1e6 / replica_us, 1),
        "inline_move_us": round(inline_us, 1),
        "inline_ratio": ratio(inline),
        "turn_by_turn_move_us": round(turns_us, 1),
        "answering_bots_move_us": round(raw_us, 1),
        "pingpongs": pings * len(ping),
        "pingpong_round_trip_us": round(ping_us, 1),
        "ratio": ratio(replica),
        "turn_by_turn_ratio": ratio(turns),
        "answering_bots_ratio": ratio(raw),
        "answering_bots_apart_move_us": round(apart_us, 1),
        "answering_bots_apart_ratio": ratio(apart),
        "named_turns_move_us": round(named_us, 1),
        "named_turns_ratio": ratio(named),
        "floor_move_us": round(floor_us, 1),
        "floor_ratio": ratio(floor),
        "apart_vs_floor": round(statistics.median(a / f for a, f in zip(apart, floor, strict=True)), 2),
        "threaded_move_us": round(threaded_us, 1),
        "threaded_ratio": ratio(threaded),
        "sdk_vs_threaded": round(statistics.median(r / t for r, t in zip(replica, threaded, strict=True)), 2),
        "floor_reported_move_us": round(reported_us, 1),
        "floor_reported_ratio": ratio(reported),
        "apart_vs_floor_reported": round(statistics.median(a / f for a, f in zip(apart, reported, strict=True)), 2),
        "floor_reported_cpu_per_move_us": round(reported_cpu_us, 1),
        "engine_cpu_vs_floor": round(engine_cpu_us / floor_cpu_us, 2),
        "engine_cpu_vs_floor_reported": round(engine_cpu_us / reported_cpu_us, 2),
        "sdk_vs_answering_bots": round(statistics.median(r / a for r, a in zip(replica, apart, strict=True)), 2),
        "sdk_inline_vs_answering_bots": round(statistics.median(r / a for r, a in zip(inline, apart, strict=True)), 2),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"one move through the engine service vs raw gRPC ping-pong (same run, loopback; medians of {blocks} blocks)")
    print(
        f"  raw bidi ping-pong           {ping_us:8.1f} µs/round trip   "
        f"({pings * len(ping)} round trips, 600-byte messages; ratios: the median of each block's own)"
    )
    print(
        f"  move, played on the replica  {replica_us:8.1f} µs/move         ({figures['ratio']:.2f} × ping-pong, "
        f"{1e6 / replica_us:,.0f} moves/s)"
    )
    print(
        f"  move, SDK bots inline        {inline_us:8.1f} µs/move         "
        f"({figures['inline_ratio']:.2f} × ping-pong: --inline, no thread hand-off)"
    )
    print(
        f"  move, turn by turn           {turns_us:8.1f} µs/move         "
        f"({figures['turn_by_turn_ratio']:.2f} × ping-pong)"
    )
    print(
        f"  move, bots that only answer  {raw_us:8.1f} µs/move         "
        f"({figures['answering_bots_ratio']:.2f} × ping-pong: the engine's share)"
    )
    print(
        f"  the same, one process each   {apart_us:8.1f} µs/move         "
        f"({figures['answering_bots_apart_ratio']:.2f} × ping-pong: as bots are deployed)"
    )
    print(
        f"  the same, from a thread      {threaded_us:8.1f} µs/move         "
        f"({figures['threaded_ratio']:.2f} × ping-pong: blocking API, a pool thread answers, as the SDK's threads mode)"
    )
    print(
        f"  the same, turns named        {named_us:8.1f} µs/move         "
        f"({figures['named_turns_ratio']:.2f} × ping-pong: without the packed form)"
    )
    print(
        f"  floor: a minimal replica     {floor_us:8.1f} µs/move         "
        f"({figures['floor_ratio']:.2f} × ping-pong; the engine, one process each, is "
        f"{figures['apart_vs_floor']:.2f} × this)"
    )
    print(
        f"  floor, reporting to a runner {reported_us:8.1f} µs/move         "
        f"({figures['floor_reported_ratio']:.2f} × ping-pong; the engine, one process each, is "
        f"{figures['apart_vs_floor_reported']:.2f} × this)"
    )
    print(
        f"  CPU: engine {engine_cpu_us:6.1f} µs/move (bots in processes of their own) vs echo server "
        f"{echo_cpu_us:5.1f} µs/round trip: {figures['engine_cpu_ratio']:.2f} ×; "
        f"floor {floor_cpu_us:5.1f} µs/move: {figures['floor_cpu_ratio']:.2f} ×"
    )
    print(
        f"  CPU: the engine is {figures['engine_cpu_vs_floor']:.2f} × the floor's, "
        f"{figures['engine_cpu_vs_floor_reported']:.2f} × the reporting floor's ({reported_cpu_us:5.1f} µs/move)"
    )
    print(
        f"  Python SDK bots vs bots that only answer (one process each), same block: threads "
        f"{figures['sdk_vs_answering_bots']:.2f} ×, inline {figures['sdk_inline_vs_answering_bots']:.2f} ×; "
        f"threads vs bots answering from a thread: {figures['sdk_vs_threaded']:.2f} ×"
    )
    print(f"  ({moves} moves in {7 * blocks * (matches + 1)} one-deal matches; the first three lines: Python SDK bots)")


if __name__ == "__main__":
    main()
