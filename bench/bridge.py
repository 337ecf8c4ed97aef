"""The cost of the JSON-lines bridge (docs/jsonlines.md): a move through a program's pipes, beside in-process.

Seat 0 plays the same trivial strategy (the first capture, else the first
legal play), so what differs is only the way the decision travels:

- **in-process**: a :class:`~bots.Bot` whose ``choose`` applies the strategy to
  the :class:`~engine_service.rules.Observation` directly;
- **bridged**: a :class:`~programs.bridge.ProgramBot` running a small Python program
  that gets the ``turn`` line (the whole view as JSON), applies the strategy and
  writes its answer: JSON encoding, two pipe hops, the program's decoding;
- **sandboxed**: the same program in a sandbox (:mod:`programs.sandbox`: bubblewrap
  namespaces, a cgroup with CPU and memory limits), where the machine allows one.

Matches alternate between the two in blocks, so load hits both alike; the
medians of the blocks are kept. Start-up (the program's first answer, once per
game) is printed apart. Run: ``python bench/bridge.py [--quick] [--json]``.
The gRPC hop to the arena is the same for both and is measured by bench/gateway.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bots.base import Bot, result_of  # noqa: E402
from bots.sdk import Clock  # noqa: E402
from engine_service.rules import Match, Observation, Play, Rules  # noqa: E402
from programs.bridge import ProgramBot  # noqa: E402
from programs.sandbox import Limits, Sandbox, unavailable  # noqa: E402

PROGRAM = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "turn":
        captures = [i for i, p in enumerate(msg["legal_plays"]) if ":" in p]
        print(json.dumps({"play": captures[0] if captures else 0}), flush=True)
    elif msg["type"] == "end":
        break
"""


class FirstCapture(Bot):
    name = "first-capture"

    def choose(self, observation: Observation) -> Play:
        return next((p for p in observation.legal_plays if p.mask), observation.legal_plays[0])


def play(bot: Bot, seed: str, rules: Rules) -> tuple[list[float], float]:
    """One match, ``bot`` in both seats' shoes (its choices for seat 0, FirstCapture for seat 1).

    Returns the seconds of each of seat 0's decisions after the first, and the first's.
    """
    other = FirstCapture()
    bot.new_match(rules, 0)
    match = Match(rules, seed)
    times: list[float] = []
    while not match.is_over:
        seat = match.turn
        obs = match.observation(seat)
        if seat == 0:
            started = time.perf_counter()
            choice = bot.choose(obs, Clock(10_000)) if isinstance(bot, ProgramBot) else bot.choose(obs)
            times.append(time.perf_counter() - started)
        else:
            choice = other.choose(obs)
        match.play(choice)
    bot.end_match(result_of(match))
    return times[1:], times[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer matches (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    blocks, per_block = (3, 2) if args.quick else (7, 6)
    rules = Rules.preset("tablic").with_overrides({"deals": 1})
    boxed = unavailable() is None
    kinds = ["inproc", "bridged"] + (["sandboxed"] if boxed else [])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # the sandbox's unprivileged user reads it
        (folder / "first_capture.py").write_text(PROGRAM)
        python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable  # the sandbox's

        def make(kind: str) -> Bot:
            if kind == "inproc":
                return FirstCapture()
            if kind == "bridged":
                return ProgramBot([python, str(folder / "first_capture.py")], kind)
            return ProgramBot(["python3", "first_capture.py"], kind, launcher=lambda: Sandbox(folder, Limits(), kind))

        move_blocks: dict[str, list[float]] = {k: [] for k in kinds}
        startups: dict[str, list[float]] = {k: [] for k in kinds}
        for b in range(blocks):
            for kind in kinds:
                moves: list[float] = []
                for m in range(per_block):
                    times, first = play(make(kind), f"bench-{b}-{m}", rules)
                    moves += times
                    startups[kind].append(first)
                move_blocks[kind].append(statistics.median(moves))
    move = {k: statistics.median(v) for k, v in move_blocks.items()}
    start = {k: statistics.median(v) for k, v in startups.items()}
    figures: dict[str, float | str] = {
        "inproc_move_us": round(move["inproc"] * 1e6, 1),
        "bridged_move_us": round(move["bridged"] * 1e6, 1),
        "bridge_overhead_us": round((move["bridged"] - move["inproc"]) * 1e6, 1),
        "bridged_start_ms": round(start["bridged"] * 1000, 1),
    }
    if boxed:
        figures["sandboxed_move_us"] = round(move["sandboxed"] * 1e6, 1)
        figures["sandbox_overhead_us"] = round((move["sandboxed"] - move["bridged"]) * 1e6, 1)
        figures["sandboxed_start_ms"] = round(start["sandboxed"] * 1000, 1)
    else:
        figures["sandboxed"] = f"not measured: {unavailable()}"
    if args.json:
        print(json.dumps(figures))
        return
    print("a decision of the same strategy, median per move (blocks alternate):")
    print(f"  in-process                   {figures['inproc_move_us']:>10.1f} us")
    print(f"  through the bridge           {figures['bridged_move_us']:>10.1f} us")
    print(f"  bridge overhead              {figures['bridge_overhead_us']:>10.1f} us a move")
    if boxed:
        print(f"  bridged and sandboxed        {figures['sandboxed_move_us']:>10.1f} us")
        print(f"  sandbox overhead             {figures['sandbox_overhead_us']:>10.1f} us a move (vs bridged)")
    print("program start to its first answer (once a game):")
    print(f"  bridged                      {figures['bridged_start_ms']:>10.1f} ms")
    if boxed:
        print(f"  bridged and sandboxed        {figures['sandboxed_start_ms']:>10.1f} ms")
    else:
        print(f"  sandboxed: {figures['sandboxed']}")


if __name__ == "__main__":
    main()
