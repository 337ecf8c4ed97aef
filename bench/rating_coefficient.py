"""The luck coefficient section of ``bench/rating.py``: does taking the luck out ever add spread?

The luck estimator (:mod:`engine_service.rules.luck`) has a fixed scale, tuned on a
close pair; the skill fit takes each match's luck out with a coefficient fitted
on the league's own results instead (:mod:`scheduler.luck_coefficient`:
per pairing, shrunk towards 1, cross-fitted over folds of units). This section
plays pairs far apart (``greedy`` and ``strong`` against ``random``) and the close
pair of the luck section (``greedy`` against ``greedy:eps=0.05``), in tablic at two
and three seats (the third seat ``random``, or ``greedy:eps=0.025`` for the close
pair) and in tablanette-1939, with every game's luck as the worker computes it
(:func:`scheduler.offline.play_planned`), and prints for each:

- the **variance ratio** adjusted/raw of the pairing's centred margins (every
  team's, summed over a unit: the league page's figure), with the whole luck
  (coefficient 1, the arena before) and with the cross-fitted coefficient, beside
  the best any single coefficient could have done on these games (``1 - rho^2``,
  fitted in sample: a floor, not an estimate);
- the mean margin of the first bot, raw and adjusted, and their difference
  (the correction's mean: zero for an unbiased correction), and whether the
  adjusted mean lies within the raw mean's interval;

each with a 95% percentile-bootstrap interval (the units resampled, the
coefficients each outcome was given kept). Targets: ratio <= 1.0 on the pairs
far apart, <= 0.35 on the close pair (independent deals), and the adjusted mean
within the raw mean's interval. A target is *met* when the whole interval is
within it, *NOT met* when the whole interval is beyond it, *undecided* otherwise.

Games are on **independent** deals (every game its own deal, seats rotating), and
with ``--mirrored-units M`` also **mirrored** (one deal in every seat rotation: a
unit, whose margins and luck are summed before the regression).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from bench.rating_luck import verdict
from engine_service.rules import Rules
from scheduler.luck_coefficient import luck_coefficient
from scheduler.offline import play_planned
from scheduler.outcomes import Outcome
from scheduler.pairings import PlannedMatch

RESAMPLES = 1000
CLOSE = ("greedy", "greedy:eps=0.05")


@dataclass(frozen=True)
class Config:
    """A pair (``a`` first: its mean margin is reported) in a preset at ``players`` seats; ``third`` fills a
    third seat."""

    a: str
    b: str
    preset: str
    players: int
    third: str = ""

    @property
    def close(self) -> bool:
        return (self.a, self.b) == CLOSE

    def rules(self) -> Rules:
        return Rules.preset(self.preset, players=self.players)

    def title(self) -> str:
        third = f", third seat {self.third}" if self.third else ""
        return f"{self.a} against {self.b}, {self.preset}, {self.players} seats{third}"

    def specs(self) -> dict[str, str]:
        names = {"A": self.a, "B": self.b}
        return {**names, "C": self.third} if self.third else names

    def rotations(self) -> list[tuple[str, ...]]:
        base = ["A", "B", "C"][: self.players]
        return [tuple(base[(s + r) % self.players] for s in range(self.players)) for r in range(self.players)]


def configs(strong: str) -> list[Config]:
    """The pairs far apart (greedy and ``strong`` against random) and the close pair, in every preset."""
    out = []
    for a in ("greedy", strong):
        out += [
            Config(a, "random", "tablic", 2),
            Config(a, "random", "tablic", 3, "random"),
            Config(a, "random", "tablanette-1939", 2),
        ]
    return [*out, Config(*CLOSE, "tablic", 2), Config(*CLOSE, "tablic", 3, "greedy:eps=0.025")]


Task = tuple[int, str, PlannedMatch]


def tasks(index: int, c: Config, games: int, units: int, seed: str) -> list[Task]:
    """``games`` games on deals of their own (seats rotating) and ``units`` mirrored units of every rotation."""
    rots = c.rotations()
    out = [
        (index, "independent", PlannedMatch(f"i{g}", 0, rots[g % len(rots)], f"{seed}/{index}/i{g}"))
        for g in range(games)
    ]
    for u in range(units):
        out += [
            (index, "mirrored", PlannedMatch(f"m{u}/{r}", 0, seats, f"{seed}/{index}/m{u}"))
            for r, seats in enumerate(rots)
        ]
    return out


def play(task: tuple[Config, PlannedMatch]) -> Outcome:
    c, m = task
    return play_planned(c.rules(), c.specs(), m, luck=True)


@dataclass(frozen=True)
class Units:
    """Per unit and team (``A``, ``B``, then ``C``): summed margin ``y`` and luck ``x``; the cross-fitted coefficient
    of each unit; games per unit."""

    y: np.ndarray
    x: np.ndarray
    beta: np.ndarray
    per_unit: int


def units_of(outcomes: Sequence[Outcome], betas: Sequence[float | None], teams: Sequence[str]) -> Units:
    rows: dict[str, tuple[list[float], list[float], float]] = {}
    for o, b in zip(outcomes, betas, strict=True):
        assert o.luck is not None and b is not None, "every game here is played to its end"
        y, x, _ = rows.setdefault(o.unit, ([0.0] * len(teams), [0.0] * len(teams), b))
        n = len(o.teams)
        for (bot,), pts, lk in zip(o.teams, o.points, o.luck, strict=True):
            t = teams.index(bot)
            y[t] += pts - (sum(o.points) - pts) / (n - 1)
            x[t] += lk
    ys, xs, bs = zip(*rows.values(), strict=True)
    return Units(np.array(ys), np.array(xs), np.array(bs), len(outcomes) // len(rows))


def statistics_of(u: Units) -> np.ndarray:
    """Ratio at 1, cross-fitted ratio, in-sample best ratio, A's raw mean, adjusted mean, and their difference (per
    game)."""
    raw = u.y.var(axis=0, ddof=1).sum()
    at_one = (u.y - u.x).var(axis=0, ddof=1).sum()
    adjusted = u.y - u.beta[:, None] * u.x
    crossed = adjusted.var(axis=0, ddof=1).sum()
    yc, xc = u.y - u.y.mean(axis=0), u.x - u.x.mean(axis=0)
    best = float((xc * yc).sum() / (xc * xc).sum()) if (xc * xc).sum() > 0 else 0.0
    floor = (yc - best * xc).var(axis=0, ddof=1).sum()
    raw_a, adj_a = u.y[:, 0].mean() / u.per_unit, adjusted[:, 0].mean() / u.per_unit
    return np.array([at_one / raw, crossed / raw, floor / raw, raw_a, adj_a, adj_a - raw_a])


def bootstrap(u: Units, seed: int) -> np.ndarray:
    """95% percentile intervals (low, high) of every statistic of :func:`statistics_of`, units resampled."""
    rng = np.random.default_rng(seed)
    n = len(u.y)
    draws = []
    for _ in range(RESAMPLES):
        i = rng.integers(0, n, n)
        draws.append(statistics_of(Units(u.y[i], u.x[i], u.beta[i], u.per_unit)))
    return np.asarray(np.percentile(np.array(draws), [2.5, 97.5], axis=0).T)


def report(c: Config, deals: str, outcomes: list[Outcome]) -> list[str]:
    lc = luck_coefficient(outcomes)
    u = units_of(outcomes, lc.betas, list(c.specs()))
    stat, bounds = statistics_of(u), bootstrap(u, len(outcomes))
    shown = [b for b in lc.betas if b is not None]
    target = 0.35 if c.close and deals == "independent" else 1.0

    def interval(k: int, digits: int) -> str:
        return f"{stat[k]:.{digits}f} [{bounds[k][0]:.{digits}f}, {bounds[k][1]:.{digits}f}]"

    inside = bounds[3][0] <= stat[4] <= bounds[3][1]
    zero = bounds[5][0] <= 0.0 <= bounds[5][1]
    return [
        f"  {deals}: {len(outcomes)} games, {len(u.y)} units; coefficient {lc.beta:.3f} "
        f"(each outcome's, cross-fitted: {min(shown):.3f} to {max(shown):.3f})",
        f"    variance adjusted/raw, whole luck (1):      {interval(0, 3)}",
        f"    variance adjusted/raw, fitted coefficient: {interval(1, 3)}   target <= {target:.2f}: "
        f"{verdict(bounds[1][0], bounds[1][1], target)}",
        f"    (the best single coefficient in sample:    {interval(2, 3)})",
        f"    {c.a}'s mean margin a game: raw {interval(3, 2)}, adjusted {interval(4, 2)}",
        f"    adjusted mean within the raw mean's interval: {'yes' if inside else 'NO'}; "
        f"adjusted - raw {interval(5, 2)}, holds 0: {'yes' if zero else 'NO'}",
    ]


def coefficient_section(
    games: int, units: int, strong: str = "strong:samples=2", only: str = "", seed: str = "coef-bench"
) -> list[str]:
    """Play every configuration (``games`` independent games, ``units`` mirrored units each; ``only``: those whose
    title holds it) on every core and report each."""
    started = time.perf_counter()
    cs = [c for c in configs(strong) if only in c.title()]
    planned = [t for i, c in enumerate(cs) for t in tasks(i, c, games, units, seed)]
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        played = list(pool.map(play, [(cs[i], m) for i, _, m in planned], chunksize=4))
    out = [
        f"luck coefficient: variance of margins adjusted/raw, and the means (95% bootstrap intervals over units, "
        f"{RESAMPLES} resamples)"
    ]
    for i, c in enumerate(cs):
        out.append(f"\n{c.title()}")
        for deals in ("independent", "mirrored"):
            these = [o for (k, d, _), o in zip(planned, played, strict=True) if k == i and d == deals]
            if these:
                out += report(c, deals, these)
    minutes = (time.perf_counter() - started) / 60
    out.append(f"\n({len(planned)} games in {minutes:.1f} min on {os.cpu_count()} cores)")
    return out
