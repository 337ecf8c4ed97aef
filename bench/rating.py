"""Games needed until the ladder orders a field correctly at 95%: adaptive vs round-robin, mirrored vs
independent deals, each beside the others in the same run.

A league is played in-process (real games of the built-in bots; the same
planners and rating model the arena runs) and the ladder is refitted after every
unit (a mirrored pair, or two games on independent deals). The league stops
once every ladder neighbour's likelihood of superiority reaches 95% (the
ladder is *settled*) or at a cap; the games it took are counted, and whether the
settled order was the right one. Three ways to spend the games:

- **round-robin, mirrored**: every pairing in turn plays a mirrored pair (one
  deal, seats swapped), cycle after cycle, as a double round-robin does;
- **round-robin, independent**: the same, but every game on its own deal;
- **adaptive**: one mirrored pair per pairing, then mirrored pairs between the
  neighbours the ladder is least sure of (``--format adaptive``).

Fields: the reference bots (strong, greedy, random: far apart) and the
reference bots with a close pair (greedy against greedy:eps=0.05, about 65 Elo
apart, found with ``tablanette selfplay``).

``--intervals N`` instead plays N mirrored round-robins of the reference bots
(random, greedy, strong at full strength) with 16 games per pair and counts how
often every ladder row's 95% interval orders the three correctly (each bot's
interval entirely above the next one's).

``--luck N`` plays only the luck section (bench/rating_luck.py): a close pair on
N mirrored units and as many games on independent deals, two and three seats,
every game rated by the luck estimator; the variance of raw, mirrored,
luck-adjusted and mirrored + luck-adjusted margins and of win/loss, the games
each needs to order the pair at 95%, each target's ratio with its 95% bootstrap
interval, and the scale of the luck corrections that would have suited those
games best. The default run ends with it (150 units; 40 with ``--quick``); the
intervals of 150 units are wide, and 1,000 (about 9 minutes on 2 cores) narrow
them to about +-0.05.

``--coefficient N`` plays only the luck coefficient section (bench/rating_coefficient.py):
pairs far apart (greedy and strong against random) and the close pair, in tablic
at two and three seats and in tablanette-1939, N games each on independent deals
(and ``--mirrored-units M`` mirrored units each); for each, the variance of
margins adjusted/raw with the whole luck and with the coefficient the skill fit
fits (cross-fitted, shrunk towards 1), and the mean margin raw and adjusted, all
with 95% intervals. ``--coefficient 150`` takes about 2 minutes on 2 cores;
``--strong strong`` plays the full-strength bot (about 8 times slower) instead of
``strong:samples=2``, ``--only TEXT`` only the configurations whose title holds TEXT.

Run: ``python bench/rating.py [--runs N] [--quick] [--json]``, ``python bench/rating.py --intervals 12``,
``python bench/rating.py --luck 1000`` or ``python bench/rating.py --coefficient 150``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rating_coefficient import coefficient_section
from bench.rating_luck import luck_section
from engine_service.rules import Rules
from scheduler.offline import play_planned
from scheduler.pairings import PlannedMatch, pair_of_games
from scheduler.planners import AdaptivePlanner
from scheduler.ratings import Outcome, fit_ratings
from store.leagues import League

RULES = Rules.preset("tablic")
CONFIDENCE = 0.95
FIELDS: dict[str, dict[str, str]] = {
    "reference bots": {"strong": "strong:samples=2", "greedy": "greedy", "random": "random"},
    "reference bots + a close pair": {
        "strong": "strong:samples=2",
        "greedy": "greedy",
        "greedy-eps": "greedy:eps=0.05",
        "random": "random",
    },
}
TRUE_ORDER = {name: list(field) for name, field in FIELDS.items()}  # strongest first, as listed


Source = Callable[[list[Outcome]], list[PlannedMatch] | None]
"""Given the outcomes so far, the next unit of matches to play (None: nothing more)."""


def round_robin(bots: list[str], seed: str, mirrored: bool) -> Source:
    """Every pairing in turn, cycle after cycle: a mirrored pair, or two games on deals of their own."""

    def units() -> Iterator[list[PlannedMatch]]:
        for cycle in itertools.count():
            for a, b in itertools.combinations(bots, 2):
                first, second = (a, b) if cycle % 2 == 0 else (b, a)
                pair = pair_of_games(first, second, seed, f"c{cycle}/{a}-{b}", cycle)
                if not mirrored:  # the second game gets a deal of its own
                    pair[1] = PlannedMatch(pair[1].match_id, cycle, pair[1].seats, pair[1].seed + "/own")
                yield pair

    it = units()
    return lambda outcomes: next(it)


def adaptive(bots: list[str], seed: str, cap: int) -> Source:
    """The adaptive planner: its seed round-robin a pair at a time, then whatever it asks for next."""
    league = League(seed, RULES, "adaptive", 2, "mirrored", seed=seed, bots=bots)
    league.confidence, league.budget = CONFIDENCE, cap
    planner = AdaptivePlanner(league)
    planned = planner.initial()
    seed_pairs = [planned[i : i + 2] for i in range(0, len(planned), 2)]

    def next_unit(outcomes: list[Outcome]) -> list[PlannedMatch] | None:
        if seed_pairs:
            return seed_pairs.pop(0)
        more = planner.more(outcomes, planned, [])
        if more:
            planned.extend(more)
        return more or None

    return next_unit


def settle(source: Source, specs: dict[str, str], cap: int) -> tuple[int, list[str] | None]:
    """Play unit after unit until the ladder is settled (or ``cap`` games); games played, and the settled order."""
    outcomes: list[Outcome] = []
    while len(outcomes) < cap and (unit := source(outcomes)) is not None:
        outcomes += [play_planned(RULES, specs, m) for m in unit]
        fit = fit_ratings(outcomes, threshold=CONFIDENCE, intervals=False)
        if len(fit.ratings) == len(specs) and fit.settled():
            return len(outcomes), [r.bot for r in fit.ratings]
    return len(outcomes), None


def run(method: str, field: str, seed: str, cap: int) -> tuple[int, bool]:
    specs = FIELDS[field]
    bots = list(specs)
    if method == "adaptive":
        source = adaptive(bots, seed, cap)
    else:
        source = round_robin(bots, seed, mirrored=method == "round-robin, mirrored")
    games, order = settle(source, specs, cap)
    return games, order == TRUE_ORDER[field]


METHODS = ("round-robin, independent", "round-robin, mirrored", "adaptive")


def interval_leagues(leagues: int) -> None:
    """How often a 16-games-per-pair mirrored round-robin's intervals order the reference bots."""
    specs = {"strong": "strong", "greedy": "greedy", "random": "random"}
    ordered = 0
    for n in range(leagues):
        source = round_robin(list(specs), f"intervals/{n}", mirrored=True)
        outcomes: list[Outcome] = []
        while len(outcomes) < 3 * 16:
            outcomes += [play_planned(RULES, specs, m) for m in source(outcomes) or []]
        fit = fit_ratings(outcomes)
        rows = fit.ratings
        ok = [r.bot for r in rows] == list(specs) and all(a.low > b.high for a, b in itertools.pairwise(rows))
        ordered += ok
        shown = ", ".join(f"{r.bot} {r.rating:.0f} [{r.low:.0f}, {r.high:.0f}]" for r in rows)
        print(f"league {n + 1}: {shown}{'' if ok else '   <- not ordered by the intervals'}", flush=True)
    print(f"the intervals ordered the three correctly in {ordered} of {leagues} leagues")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=8, help="leagues per method and field (different deals)")
    parser.add_argument("--quick", action="store_true", help="3 runs, the reference bots only")
    parser.add_argument("--cap", type=int, default=1200, help="games after which a league gives up")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--intervals", type=int, default=0, help="play N 16-games-per-pair leagues (see above)")
    parser.add_argument("--luck", type=int, default=0, help="play only the luck section with N mirrored units")
    parser.add_argument("--coefficient", type=int, default=0, help="play only the luck coefficient section, N games")
    parser.add_argument("--mirrored-units", type=int, default=0, help="with --coefficient: mirrored units too")
    parser.add_argument("--strong", default="strong:samples=2", help="with --coefficient: the strong bot's spec")
    parser.add_argument("--only", default="", help="with --coefficient: the configurations whose title holds this")
    args = parser.parse_args()
    if args.coefficient:
        print("\n".join(coefficient_section(args.coefficient, args.mirrored_units, args.strong, args.only)))
        return
    if args.luck:
        print("\n".join(luck_section(args.luck)))
        return
    if args.intervals:
        interval_leagues(args.intervals)
        return
    runs = 3 if args.quick else args.runs
    fields = ["reference bots"] if args.quick else list(FIELDS)
    started = time.perf_counter()
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for field in fields:
        figures[field] = {}
        for method in METHODS:
            results = [run(method, field, f"{field}/{r}", args.cap) for r in range(runs)]
            games = [g for g, _ in results]
            figures[field][method] = {
                "median_games": statistics.median(games),
                "mean_games": round(statistics.fmean(games), 1),
                "correct_order": sum(ok for _, ok in results) / runs,
            }
        rr = figures[field]["round-robin, mirrored"]["median_games"]
        figures[field]["adaptive"]["vs_round_robin_mirrored"] = round(
            figures[field]["adaptive"]["median_games"] / rr, 2
        )
        ind = figures[field]["round-robin, independent"]["median_games"]
        figures[field]["round-robin, mirrored"]["vs_independent"] = round(rr / ind, 2)
    luck_lines = luck_section(40 if args.quick else 150)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"games until the ladder is settled at {CONFIDENCE:.0%} (median of {runs} leagues; tablic, 2 players)")
    for field, by_method in figures.items():
        print(f"\n{field}: {', '.join(FIELDS[field].values())}")
        for method, f in by_method.items():
            extra = ""
            if "vs_round_robin_mirrored" in f:
                extra = f"   -> {f['vs_round_robin_mirrored']}x the mirrored round-robin's games"
            if "vs_independent" in f:
                extra = f"   -> {f['vs_independent']}x the independent deals' games"
            print(
                f"  {method:26s} {f['median_games']:7.0f} games (mean {f['mean_games']:.0f}),"
                f" right order {f['correct_order']:.0%}{extra}"
            )
    print("\nthe luck section: games to order greedy against greedy:eps=0.05 at 95%")
    print("\n".join(luck_lines))
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
