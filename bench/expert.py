"""``expert`` against ``strong``: is the new built-in bot at least 100 rating points stronger, at 95%?

Both play a mirrored series (:func:`scheduler.local_games.play_series`: every deal
played twice, each bot on each side of it) through the arena's own match driver and
its clock, at the rules' default move time (tablic, 2 players, 2,000 ms a move): the
expert thinks as long as its clock lets it (its ``ms`` cap a move), as it would in a
league. The results are fitted as a league's are (:meth:`Series.fit`: Bradley-Terry
by likelihood, a mirrored pair one unit) and printed with their 95% intervals.

**The test.** With two bots the fit centres the ratings on 1500, so expert's rating
is ``1500 + d/2`` for the difference ``d`` (expert minus strong), and the profile
likelihood interval of expert's rating is exactly that of ``d/2``: the difference's
95% interval is twice its offset from 1500. The target holds when the *lower end*
of that interval is at least 100 (a two-sided 95% interval, so 97.5% one-sided:
conservative). The likelihood of superiority (expert above strong at all) is
printed beside it.

Also printed: each bot's wins, its point margin a game, and the expert's CPU time
a move (its own process time inside ``choose``, forced moves included) and worlds a
move. Run: ``python bench/expert.py [--games N] [--expert SPEC] [--json]``; the
default 100 games (50 deals, each played both ways) take about an hour on a 2-core
machine, most of it the expert's 150 ms a move.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bots import Bot, make_bot  # noqa: E402
from bots.expert import ExpertBot  # noqa: E402
from bots.sdk import Clock  # noqa: E402
from engine_service.rules import Observation, Play, Rules  # noqa: E402
from scheduler.local_games import Entry, play_series  # noqa: E402

TARGET = 100.0


class Metered(Bot):
    """The expert, with the CPU time and the worlds of each of its moves counted."""

    def __init__(self, bot: ExpertBot, tally: dict[str, float]) -> None:
        self.bot, self.tally = bot, tally
        self.name, self.version = bot.name, bot.version

    def choose(self, observation: Observation, clock: Clock | None = None) -> Play:
        started = time.process_time()
        play = self.bot.choose(observation, clock=clock)
        self.tally["cpu"] += time.process_time() - started
        self.tally["moves"] += 1
        self.tally["worlds"] += self.bot.last_worlds
        self.tally["searched"] += bool(self.bot.last_worlds)
        return play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games (an even number keeps every deal mirrored)")
    parser.add_argument("--expert", default="expert", help="the expert's spec (expert:ms=100, ...)")
    parser.add_argument("--against", default="strong", help="the bot it plays (a built-in spec)")
    parser.add_argument("--seed", default="bench-expert")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rules = Rules.preset("tablic")
    tally = {"cpu": 0.0, "moves": 0.0, "worlds": 0.0, "searched": 0.0}

    def expert(seed: str) -> Bot:
        bot = make_bot(args.expert, seed)
        assert isinstance(bot, ExpertBot), f"{args.expert!r} is not an expert spec"
        return Metered(bot, tally)

    entries = [Entry("expert", expert), Entry("strong", lambda seed: make_bot(args.against, seed))]
    progress = (lambda g: print(f"  game {g + 1}/{args.games}", file=sys.stderr)) if not args.json else None
    started = time.perf_counter()
    series = play_series(rules, entries, args.games, args.seed, on_game=progress)
    seconds = time.perf_counter() - started
    fit = series.fit()
    by = {r.bot: r for r in fit.ratings}
    e, s = by["expert"], by["strong"]
    mean = (e.rating + s.rating) / 2
    diff, low, high = e.rating - s.rating, 2 * (e.low - mean), 2 * (e.high - mean)
    wins = {b.name: b.wins for b in series.stats.bots}
    out: dict[str, Any] = {
        "games": args.games,
        "move_time_ms": rules.move_time_ms,
        "expert": args.expert,
        "against": args.against,
        "ratings": {
            r.bot: {"rating": round(r.rating, 1), "interval": [round(r.low, 1), round(r.high, 1)]} for r in (e, s)
        },
        "wins": wins,
        "margin": {r.bot: round(r.margin, 2) for r in (e, s)},
        "difference": round(diff, 1),
        "difference_interval": [round(low, 1), round(high, 1)],
        "los": round(fit.los("expert", "strong"), 4),
        "target_met": low >= TARGET,
        "expert_cpu_ms_per_move": round(1000 * tally["cpu"] / max(tally["moves"], 1), 1),
        "expert_cpu_ms_per_searched_move": round(1000 * tally["cpu"] / max(tally["searched"], 1), 1),
        "expert_worlds_per_searched_move": round(tally["worlds"] / max(tally["searched"], 1), 1),
        "timeouts": {c_label: c.timeouts for c_label, c in zip(("expert", "strong"), series.conduct, strict=True)},
        "seconds": round(seconds, 1),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{args.games} games, {args.expert} vs {args.against}, tablic 2 players, mirrored deals, "
        f"{rules.move_time_ms} ms a move"
    )
    for r in (e, s):
        print(
            f"  {r.bot:7} rating {r.rating:7.1f}  95% [{r.low:7.1f}, {r.high:7.1f}]  wins {wins.get(r.bot, 0)}  "
            f"margin {r.margin:+.2f} a game"
        )
    print(f"  difference {diff:+.1f}  95% [{low:+.1f}, {high:+.1f}]  LOS {out['los']:.4f}")
    verdict = "holds" if out["target_met"] else "does not hold"
    print(f"  expert >= strong + {TARGET:.0f} at 95% (the interval's lower end): {verdict}")
    print(
        f"  expert CPU {out['expert_cpu_ms_per_move']} ms a move ({out['expert_cpu_ms_per_searched_move']} ms "
        f"a move it searched, {out['expert_worlds_per_searched_move']} worlds); timeouts {out['timeouts']}; "
        f"{seconds:.0f} s"
    )


if __name__ == "__main__":
    main()
