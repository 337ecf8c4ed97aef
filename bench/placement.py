"""A placement gauntlet places a fresh copy of a reference bot where that reference stands.

The issue's check: ``league create --format gauntlet --reference random,greedy,strong``
and a newcomer that is a copy of ``strong``; the placement (the same
:class:`~scheduler.planners.PlacementPlanner` a league runs, its games played
in-process by :func:`scheduler.offline.play_league`, full ``tablic`` games) must
end with the copy's 95% interval holding the reference ``strong``'s rating on the
same ladder, before its game budget. Printed beside it, the baseline: the games a
fixed gauntlet would have planned to give the copy the same interval, were every
pairing played as often as the placement's busiest pairing was.
Run: ``python bench/placement.py [--copy strong] [--reference random,greedy,strong] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine_service.rules import Rules  # noqa: E402
from scheduler.offline import play_league  # noqa: E402
from scheduler.planners import PlacementPlanner  # noqa: E402
from scheduler.ratings import fit_ratings  # noqa: E402
from store.leagues import League  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copy", default="strong", help="the reference the newcomer is a copy of")
    parser.add_argument("--reference", default="random,greedy,strong", help="the reference ladder (built-in specs)")
    parser.add_argument("--budget", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    references = [r.strip() for r in args.reference.split(",")]
    if args.copy not in references:
        parser.error(f"--copy {args.copy} is not among the references")
    specs = {r: r for r in references} | {"newcomer": args.copy}
    rules = Rules.preset("tablic")
    league = League("placement", rules, "gauntlet", 2, "mirrored", seed="placement", bots=[*references, "newcomer"])
    league.reference, league.budget = references, args.budget
    planner = PlacementPlanner(league)
    started = time.perf_counter()
    outcomes = play_league(planner, rules, specs)
    seconds = time.perf_counter() - started
    fit = fit_ratings(outcomes, threshold=league.confidence)
    rating = {r.bot: r for r in fit.ratings}
    copy, original = rating["newcomer"], rating[args.copy]
    within = copy.low <= original.rating <= copy.high
    pairings = Counter(frozenset(o.teams[0] + o.teams[1]) for o in outcomes)
    busiest = max(pairings.values())
    fixed = busiest * (len(references) + len(references) * (len(references) - 1) // 2)
    out = {
        "games": len(outcomes),
        "budget": args.budget,
        "placed": planner.note()["placed"]["newcomer"]["placed"],
        "newcomer": {"rating": round(copy.rating, 1), "interval": [round(copy.low, 1), round(copy.high, 1)]},
        args.copy: round(original.rating, 1),
        "within": within,
        "fixed_gauntlet_games": fixed,
        "seconds": round(seconds, 1),
        "ladder": [r.to_json() for r in fit.ratings],
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"placement of a copy of {args.copy} on {', '.join(references)} (tablic, full games), {seconds:.0f} s")
    for r in fit.ratings:
        print(f"  {r.bot:10} {r.rating:7.1f}  [{r.low:7.1f}, {r.high:7.1f}]  {r.games} games")
    print(
        f"  {len(outcomes)} games (budget {args.budget}; placed: {out['placed']}); a fixed gauntlet playing every "
        f"pairing as often as the busiest ({busiest}): {fixed} games"
    )
    print(f"  {args.copy}'s rating {original.rating:.1f} within the copy's interval: {within}")


if __name__ == "__main__":
    main()
