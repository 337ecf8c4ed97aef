"""``tablanette match`` beside ``tablanette selfplay``: the cost of playing through the arena's driver.

Both play the same 100 games (default) of ``greedy`` against ``random`` on the
same mirrored deals with the same bots, so the rules engine's and the bots' work
is the same: what ``match`` adds is the match driver (turns, the time control,
answers applied as the arena applies them), the in-process transport and its
conduct counts. Measured two ways, alternating runs so that load hits both alike
(the best of each kept):

- **in-process**: :func:`scheduler.local_games.play_series` against
  :func:`scheduler.selfplay.run_selfplay`, no records;
- **the commands**, as an author types them (start-up included): ``tablanette match
  --bot greedy --bot random --games 100 --no-records`` against ``tablanette selfplay
  --bots greedy,random --games 100``.

The issue's targets: the command under 10 s of wall time, and at most 1.5 times self-play.
Run: ``python bench/local_match.py [--games N] [--rounds R] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bots import make_bot  # noqa: E402
from cli.local import CLI  # noqa: E402
from engine_service.rules import Rules  # noqa: E402
from scheduler.local_games import Entry, play_series  # noqa: E402
from scheduler.selfplay import run_selfplay  # noqa: E402


def timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of each (the best is kept)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rules = Rules.preset("tablic")
    entries = [Entry("greedy", lambda s: make_bot("greedy", s)), Entry("random", lambda s: make_bot("random", s))]
    match_cmd = [*CLI, "match", "--bot", "greedy", "--bot", "random", "--games", str(args.games), "--no-records"]
    selfplay_cmd = [*CLI, "selfplay", "--bots", "greedy,random", "--games", str(args.games)]
    runs: dict[str, list[float]] = {"match": [], "selfplay": [], "match_cmd": [], "selfplay_cmd": []}
    for _ in range(args.rounds):
        runs["match"].append(timed(lambda: play_series(rules, entries, args.games, "bench")))
        runs["selfplay"].append(timed(lambda: run_selfplay(rules, ["greedy", "random"], args.games, "bench")))
        runs["match_cmd"].append(timed(lambda: subprocess.run(match_cmd, check=True, capture_output=True)))
        runs["selfplay_cmd"].append(timed(lambda: subprocess.run(selfplay_cmd, check=True, capture_output=True)))
    best = {k: min(v) for k, v in runs.items()}
    out = {
        "games": args.games,
        "seconds": {k: round(v, 3) for k, v in best.items()},
        "ratio_in_process": round(best["match"] / best["selfplay"], 2),
        "ratio_commands": round(best["match_cmd"] / best["selfplay_cmd"], 2),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.games} games of greedy against random, mirrored deals, best of {args.rounds} alternating runs")
    print(f"  in-process: match {best['match']:.2f} s, selfplay {best['selfplay']:.2f} s: {out['ratio_in_process']}x")
    print(
        f"  commands:   tablanette match {best['match_cmd']:.2f} s, tablanette selfplay {best['selfplay_cmd']:.2f} s: "
        f"{out['ratio_commands']}x (target: under 10 s, at most 1.5x)"
    )


if __name__ == "__main__":
    main()
