"""The second-sight check: is a bot better in the later games of a deal it has seen before?

Where games share a deal (mirrored pairs, seat rotations), a bot that remembers
the first game of a deal knows, in the next, the cards its opponents hold. The
arena mirrors deals only where it runs every bot afresh each game
(:mod:`store.deal_policy`), but an operator may force them, and a sandbox could
leak. So every shared deal is also a measurement: a bot's margin in the later
games of the deal against its margin in the first.

For each deal a bot played at least twice (in the order the games finished), its
*advantage* is the mean of its margins in the later games minus its margin in the
first. A margin is its team's points minus the mean of the other teams', less the
luck of its cards where the match has a luck estimate, less the mean margin of its
seat over the league (a seat's own advantage, which moves with the seat a bot
holds, not with what it saw). An honest bot's advantage has mean zero: each
game's deal is the same, and which game comes first is the order the arena played
them in. The check gives each bot its mean advantage per deal with a 95% interval
(Student's t), and *flags* a bot whose advantage is above zero past a Bonferroni
bound over the league's bots (one-sided, 2.5% in all), so that a league of many
honest bots flags none by chance.

>>> from scheduler.outcomes import Outcome
>>> def o(m, u, a, b, pa, pb):
...     return Outcome(m, u, ((a,), (b,)), (float(pa > pb), float(pb > pa)), (pa, pb))
>>> games = []
>>> for i in range(8):  # x scores about 20 points more the second time it sees a deal, whatever its seat
...     first, second = (90 + i % 3, 90), (80, 100 + i % 2)
...     if i % 2:
...         games += [o(f"{i}/g1", f"u{i}", "x", "y", *first), o(f"{i}/g2", f"u{i}", "y", "x", *second)]
...     else:
...         games += [o(f"{i}/g1", f"u{i}", "y", "x", *first[::-1]), o(f"{i}/g2", f"u{i}", "x", "y", *second[::-1])]
>>> [(r.bot, r.deals, round(r.advantage), r.flagged) for r in second_sight(games)]
[('x', 8, 20, True), ('y', 8, -20, False)]
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.outcomes import Outcome

LEVEL = 0.975
"""The one-sided level of each bot's interval (a 95% two-sided interval)."""
FLAG_LEVEL = 0.975
"""The one-sided level, over all of a league's bots together, past which a bot is flagged."""
MIN_DEALS = 3
"""Shared deals a bot must have played twice before it can be flagged."""


@dataclass(frozen=True)
class SecondSight:
    """One bot's advantage on the second sight of a deal: its mean per deal (points a match), its 95% interval,
    how many deals it is measured on, and whether it is flagged."""

    bot: str
    deals: int
    advantage: float
    low: float
    high: float
    flagged: bool

    def to_json(self) -> dict[str, Any]:
        finite = math.isfinite(self.low) and math.isfinite(self.high)
        return {
            "bot": self.bot,
            "deals": self.deals,
            "advantage": round(self.advantage, 2),
            "interval": [round(self.low, 2), round(self.high, 2)] if finite else None,
            "flagged": self.flagged,
        }


def second_sight(outcomes: Sequence[Outcome]) -> list[SecondSight]:
    """Every bot that played a shared deal twice or more, most advantaged first (``outcomes`` in the order
    the games finished)."""
    seat_mean = _seat_means(outcomes)
    by_unit: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_unit[o.unit].append(o)
    advantages: dict[str, list[float]] = defaultdict(list)
    for games in by_unit.values():
        if len(games) < 2:
            continue
        sights: dict[str, list[float]] = defaultdict(list)
        for o in games:
            for t, team in enumerate(o.teams):
                margin = _margin(o, t) - seat_mean[(len(o.teams), t)]
                for bot in team:
                    sights[bot].append(margin)
        for bot, margins in sights.items():
            if len(margins) >= 2:
                advantages[bot].append(statistics.fmean(margins[1:]) - margins[0])
    bound = 1 - (1 - FLAG_LEVEL) / max(len(advantages), 1)
    report = [_summary(bot, values, bound) for bot, values in advantages.items()]
    return sorted(report, key=lambda r: (-r.advantage, r.bot))


def _margin(o: Outcome, team: int) -> float:
    """The team's points minus the mean of the others', less its luck when the match has an estimate."""
    others = [p for u, p in enumerate(o.points) if u != team]
    raw = o.points[team] - sum(others) / len(others)
    return raw - (o.luck[team] if o.luck is not None else 0.0)


def _seat_means(outcomes: Sequence[Outcome]) -> dict[tuple[int, int], float]:
    """(number of teams, team index) -> the mean margin of that team (its seats) over the league."""
    sums: dict[tuple[int, int], list[float]] = defaultdict(list)
    for o in outcomes:
        for t in range(len(o.teams)):
            sums[(len(o.teams), t)].append(_margin(o, t))
    return defaultdict(float, {k: statistics.fmean(v) for k, v in sums.items()})


def _summary(bot: str, values: list[float], bound: float) -> SecondSight:
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return SecondSight(bot, n, mean, -math.inf, math.inf, False)
    se = statistics.stdev(values) / math.sqrt(n)
    from scipy.stats import t as student_t  # SciPy's statistics take most of a second to load: only here

    half = float(student_t.ppf(LEVEL, n - 1)) * se
    flag_low = mean - float(student_t.ppf(bound, n - 1)) * se
    return SecondSight(bot, n, mean, mean - half, mean + half, n >= MIN_DEALS and flag_low > 0)
