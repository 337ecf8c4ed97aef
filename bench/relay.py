"""The cost of hosting a gRPC bot: the relayed socket and the sandbox, beside a bot connected directly.

A hosted gRPC bot (docs/hosting.md) reaches the engine through a Unix socket
that its host relays to the engine's TCP port (:mod:`hosting.relay`), from
inside a sandbox. This measures what that adds, with the raw gRPC echo server
(bench/pingpong_server.py) standing for the engine, so only the path differs:

- **direct**: a Python gRPC client on this machine, over TCP to the echo server;
- **relayed**: the same client through the relay's Unix socket;
- **hosted**: the same client in a sandbox (bubblewrap + cgroup, the SDK lent at
  ``/sdk``, as the host runs a bot) through the relay, where the machine allows one.

For each: the median round trip of a 600-byte message on one bidirectional
stream (a turn and its answer), and the start-up: from starting the process to
its first answer (importing grpc, connecting, one round trip), which a hosted
bot pays once for its whole stay. Runs alternate in blocks, so load hits all
alike. Run: ``python bench/relay.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hosting import sdk  # noqa: E402
from hosting.relay import Relay  # noqa: E402
from programs.sandbox import Limits, Sandbox, unavailable  # noqa: E402

CLIENT = """\
import json, queue, statistics, sys, time
import grpc

target, count = sys.argv[1], int(sys.argv[2])
outbox = queue.Queue()
channel = grpc.insecure_channel(target)
call = channel.stream_stream("/bench.PingPong/Stream")(iter(outbox.get, None))
payload = b"x" * 600
outbox.put(payload)
next(call)
print("ready", flush=True)
took = []
for _ in range(count):
    start = time.perf_counter()
    outbox.put(payload)
    next(call)
    took.append(time.perf_counter() - start)
outbox.put(None)
channel.close()
print(json.dumps({"round_trip_us": statistics.median(took) * 1e6}), flush=True)
"""


def run_client(argv: list[str], env: dict[str, str] | None) -> tuple[float, float]:
    """(start-up ms, median round trip us) of one client run."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty client must never block on it
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, text=True, env=env)
        assert proc.stdout is not None
        first = proc.stdout.readline()
        startup = (time.perf_counter() - started) * 1000
        if first.strip() != "ready":
            proc.wait(timeout=30)
            errors.seek(0)
            raise RuntimeError(f"the client failed: {first}{errors.read()[-2000:].decode(errors='replace')}")
        figures = json.loads(proc.stdout.readline())
        proc.wait(timeout=30)
    return startup, figures["round_trip_us"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    blocks, count = (2, 300) if args.quick else (6, 2000)
    work = Path(tempfile.mkdtemp(prefix="bench-relay-", dir="/var/tmp"))
    work.chmod(0o755)
    echo = subprocess.Popen([sys.executable, str(ROOT / "bench/pingpong_server.py")], stdout=subprocess.PIPE, text=True)
    try:
        assert echo.stdout is not None
        port = int(echo.stdout.readline().rsplit(":", 1)[1])
        (work / "bot").mkdir(mode=0o755)
        (work / "bot/client.py").write_text(CLIENT)
        (work / "arena").mkdir(mode=0o755)
        relay = Relay(work / "arena/engine.sock", [f"127.0.0.1:{port}"])
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        modes: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "direct": ([sys.executable, str(work / "bot/client.py"), f"127.0.0.1:{port}", str(count)], env),
            "relayed": ([sys.executable, str(work / "bot/client.py"), f"unix:{relay.path}", str(count)], env),
        }
        why_not = unavailable()
        staged = sdk.stage(work / "sdk") if why_not is None else None
        results: dict[str, list[tuple[float, float]]] = {m: [] for m in [*modes, "hosted"]}
        for _ in range(blocks):
            for mode, (argv, child_env) in modes.items():
                results[mode].append(run_client(argv, child_env))
            if staged is not None:
                binds = {str(staged): "/sdk", str(work / "arena"): "/arena"}
                box = Sandbox(work / "bot", Limits(), "bench", binds=binds, env=sdk.ENV)
                try:
                    inside = ["python3", "client.py", "unix:/arena/engine.sock", str(count)]
                    results["hosted"].append(run_client(box.wrap(inside), None))
                finally:
                    box.close()
        relay.close()
    finally:
        echo.kill()
        shutil.rmtree(work, ignore_errors=True)
    numbers: dict[str, float] = {}
    for mode, runs in results.items():
        if runs:
            numbers[f"{mode}_start_ms"] = round(statistics.median(r[0] for r in runs), 1)
            numbers[f"{mode}_round_trip_us"] = round(statistics.median(r[1] for r in runs), 1)
    for mode in ("relayed", "hosted"):
        if f"{mode}_round_trip_us" in numbers:
            numbers[f"{mode}_vs_direct"] = round(numbers[f"{mode}_round_trip_us"] / numbers["direct_round_trip_us"], 2)
    figures = {"blocks": blocks, "round_trips_per_run": count, "sandboxed": why_not or "yes", **numbers}
    if args.json:
        print(json.dumps(figures))
        return
    print(f"a 600-byte round trip on one gRPC stream, median ({blocks} runs of {count} each, alternating):")
    print(f"  direct, over TCP             {numbers['direct_round_trip_us']:>10} us")
    print(
        f"  through the relay            {numbers['relayed_round_trip_us']:>10} us  ({numbers['relayed_vs_direct']}x)"
    )
    if results["hosted"]:
        print(
            f"  sandboxed, through the relay {numbers['hosted_round_trip_us']:>10} us  ({numbers['hosted_vs_direct']}x)"
        )
    print("start of the process to its first answer (import grpc, connect, one round trip):")
    print(f"  direct                       {numbers['direct_start_ms']:>10} ms")
    print(f"  through the relay            {numbers['relayed_start_ms']:>10} ms")
    if results["hosted"]:
        print(f"  sandboxed, through the relay {numbers['hosted_start_ms']:>10} ms")
    else:
        print(f"  sandboxed: {why_not}")


if __name__ == "__main__":
    main()
