"""The cost of the JSON-lines bridge (docs/jsonlines.md): a move through a program's pipes, beside in-process.

Both seats play the same trivial strategy (the first capture, else the first
legal play), so what differs is only the way the decision travels:

- **in-process**: a :class:`~bots.Bot` whose ``choose`` applies the strategy to
  the :class:`~engine_service.rules.Observation` directly;
- **bridged**: a :class:`~bots.bridge.ProgramBot` running a small Python program
  that gets the ``turn`` line (the whole view as JSON), applies the strategy and
  writes its answer: JSON encoding, two pipe hops, the program's decoding.

Matches alternate between the two in blocks, so load hits both alike; the
medians of the blocks are kept. Start-up (the program's first answer, once per
game) is printed apart. Run: ``python bench/bridge.py [--quick] [--json]``.
The gRPC hop to the arena is the same for both and is measured by bench/gateway.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bots.base import Bot  # noqa: E402
from bots.bridge import ProgramBot  # noqa: E402
from bots.sdk import Clock  # noqa: E402
from engine_service.rules import Match, Observation, Play, Rules  # noqa: E402

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
    assert match.result is not None
    winner = -1 if match.result.winner is None else match.result.winner
    bot.end_match({"winner": winner, "reason": match.result.reason, "score": match.totals})
    return times[1:], times[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer matches (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    blocks, per_block = (3, 2) if args.quick else (7, 6)
    rules = Rules.preset("tablic").with_overrides({"deals": 1})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "first_capture.py"
        path.write_text(PROGRAM)
        argv = [sys.executable, str(path)]
        inproc_blocks, bridged_blocks, startups = [], [], []
        for b in range(blocks):
            for kind, out in (("inproc", inproc_blocks), ("bridged", bridged_blocks)):
                moves: list[float] = []
                for m in range(per_block):
                    bot: Bot = FirstCapture() if kind == "inproc" else ProgramBot(argv, "bridged")
                    times, first = play(bot, f"bench-{b}-{m}", rules)
                    moves += times
                    if kind == "bridged":
                        startups.append(first)
                out.append(statistics.median(moves))
    inproc, bridged = statistics.median(inproc_blocks), statistics.median(bridged_blocks)
    startup = statistics.median(startups)
    figures = {
        "inproc_move_us": round(inproc * 1e6, 1),
        "bridged_move_us": round(bridged * 1e6, 1),
        "bridge_overhead_us": round((bridged - inproc) * 1e6, 1),
        "bridged_over_inproc": round(bridged / inproc, 1),
        "program_start_ms": round(startup * 1000, 1),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print("a decision of the same strategy, median per move (blocks alternate):")
    print(f"  in-process                {figures['inproc_move_us']:>10.1f} us")
    print(f"  through the bridge        {figures['bridged_move_us']:>10.1f} us")
    print(f"  bridge overhead           {figures['bridge_overhead_us']:>10.1f} us a move")
    print(f"  program start to first answer (once a game): {figures['program_start_ms']:.1f} ms")


if __name__ == "__main__":
    main()
