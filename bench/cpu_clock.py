"""What the CPU clock costs a move, beside the wall clock, in the same run.

Two bots of bench/raw_bot.py (they answer every turn at once, so the engine
service's and the meter's shares are what is measured) play one-deal matches on
one engine service replica, in alternating blocks:

- **wall clock**: the league's default;
- **CPU clock**: both bots metered by a real host meter (:class:`hosting.meter.CpuMeter`,
  over ``Dispatch.Meter``, in a process of its own as a host's is), each move a
  watch begun and stopped on that host; the counter read is a real sandbox's
  cgroup (``cpuacct.usage``) where sandboxes can be made here, else the meter
  process's CPU time (said in the output).

The medians of the blocks are kept. Run: ``python bench/cpu_clock.py [--quick] [--json]``
(needs Redis at TABLANETTE_REDIS_URL or 127.0.0.1:6379; uses its own key prefix).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gateway import bench_moves  # noqa: E402
from bench.kit import REDIS_URL, temp_arena  # noqa: E402
from hosting.meter import CpuMeter  # noqa: E402
from programs.sandbox import Sandbox, unavailable  # noqa: E402
from store.sessions import internal_secret_sync  # noqa: E402


def counter() -> tuple[Callable[[], float], Callable[[], None], str]:
    """A CPU counter to meter (a real sandbox cgroup's if possible), its clean-up, and what it is."""
    if unavailable() is None:
        folder = tempfile.mkdtemp(prefix="bench-cpu-clock-")
        Path(folder).chmod(0o755)
        box = Sandbox(folder, name="bench-cpu-clock")
        return box.cpu_seconds, box.close, "a sandbox's cgroup counter"
    return time.process_time, lambda: None, f"this process's CPU time (no sandbox here: {unavailable()})"


def host_meter(address: str, prefix: str, bots: list[str]) -> None:
    """The bots' host's part, in a process of its own as a host is: meter ``bots`` until killed."""
    from store.client import connect

    source, release, what = counter()
    client = connect(REDIS_URL)
    meter = CpuMeter([address], lambda: internal_secret_sync(client, prefix))
    for bot in bots:
        meter.claim(bot, source)
    if not meter.joined(10):
        raise SystemExit("the engine service did not take the meter")
    print(f"metering {', '.join(bots)}: {what}", flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        meter.close()
        release()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--meter", nargs="+", metavar=("ADDRESS PREFIX", "BOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.meter:
        host_meter(args.meter[0], args.meter[1], args.meter[2:])
        return
    blocks, matches = (2, 2) if args.quick else (6, 4)

    arena = temp_arena("cpuclock")
    per_move: dict[str, list[float]] = {"wall": [], "cpu": []}
    moves = 0
    try:
        _, port = arena.start_engine()
        bots = ("raw-a", "raw-b")
        specs = [f"{name}={arena.add_bot(name)}" for name in bots]
        answering = arena.spawn(
            "raw-bots", [sys.executable, str(ROOT / "bench/raw_bot.py"), "--address", f"127.0.0.1:{port}", *specs]
        )
        answering.wait_for("ready", "the answering bots")
        arena.wait_connected(*bots)
        host = arena.spawn(
            "meter",
            [sys.executable, str(ROOT / "bench/cpu_clock.py"), "--meter", f"127.0.0.1:{port}", arena.prefix, *bots],
        )
        host.wait_for("metering", "the host's meter")
        what = host.text().split(": ", 1)[1].strip()
        for _ in range(blocks):
            for clock, out in per_move.items():
                seconds, n = asyncio.run(bench_moves(arena, port, matches, bots=bots, clock=clock))
                out.append(seconds / n)
                moves += n
    finally:
        arena.close()

    wall_us, cpu_us = (statistics.median(per_move[c]) * 1e6 for c in ("wall", "cpu"))
    figures = {
        "moves": moves,
        "wall_clock_move_us": round(wall_us, 1),
        "cpu_clock_move_us": round(cpu_us, 1),
        "ratio": round(cpu_us / wall_us, 2),
        "meter_cost_us": round(cpu_us - wall_us, 1),
        "counter": what,
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"one move on the CPU clock vs the wall clock (same run, loopback; medians of {blocks} blocks)")
    print(f"  wall clock   {wall_us:8.1f} µs/move")
    print(
        f"  CPU clock    {cpu_us:8.1f} µs/move   ({figures['ratio']:.2f} × the wall clock; the meter's share "
        f"{cpu_us - wall_us:.1f} µs)"
    )
    print(f"  ({moves} moves between two bots that answer at once; the counter metered: {what})")


if __name__ == "__main__":
    main()
