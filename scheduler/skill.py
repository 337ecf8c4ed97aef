"""The ladder fitted on skill: point margins with the cards' luck taken out, in points per match.

A finished match gives each team a **skill margin**: its point margin (its points
minus the mean of the other teams') minus ``b`` times its luck
(:mod:`engine_service.rules.luck`, stored with the outcome), where the coefficient
``b`` is fitted on the league's own outcomes, cross-fitted so that it stays
unbiased, and shrunk towards 1 when they are few (:mod:`scheduler.luck_coefficient`:
the luck term as a control variate, which never adds spread beyond noise).
The model is a Gaussian paired comparison fitted by least
squares: each bot has a skill ``s``, a team's is the sum of its members', and

    skill margin of team t  ~  s(t) - mean of s(other teams)

so with two bots ``s_a - s_b`` is the margin ``a`` is expected to win by against
``b``. The skills sum to zero: a bot's skill is the points a match it scores over
an average bot of the league, the deal's luck aside.

**Uncertainty.** Each match's teams (their margins sum to zero) and the games of a
mirrored pair (one deal, seats swapped) are not independent, so the covariance is
the cluster-robust *sandwich* with the unit (the mirrored group) as the cluster,
the same units the win/loss fit (:mod:`scheduler.ratings`) treats as one. With
few units the sandwich is unsteady (it can come out far too small), so it is never
taken below the plain least-squares covariance (each match counted once), and
intervals and LOS use Student's t with the units less one as degrees of freedom:
a bot's 95% interval is ``s +- t se``; the likelihood of superiority of ``a``
over ``b`` is ``T((s_a - s_b) / se(s_a - s_b))``. A bot with fewer than two units
has no interval (it is provisional).

**Matches without luck** (forfeits, aborts, outcomes stored before luck was) fall
back to their raw margin, or are left out with ``missing="skip"``; either way they
are counted (``without_luck``), since a forfeit's margin is the arena's invention.

>>> from scheduler.outcomes import Outcome
>>> o = [Outcome(f"m{i}", f"u{i}", (("a",), ("b",)), (1.0, 0.0), (101, 80 + i), (10.0 - i, i - 10.0))
...      for i in range(6)]
>>> fit = fit_skill(o)
>>> [r.bot for r in fit.ratings], round(fit.ratings[0].skill, 2), fit.without_luck
(['a', 'b'], 5.5, 0)
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduler.luck_coefficient import LuckCoefficient, luck_coefficient
from scheduler.outcomes import Outcome

MISSING = ("raw", "skip")
"""What a match without luck counts as: its raw margin, or nothing."""


@dataclass(frozen=True)
class SkillRating:
    bot: str
    skill: float
    """Points a match over an average bot of the league, luck taken out."""
    low: float
    high: float
    games: int
    provisional: bool
    luck: float
    """The bot's mean luck a match (points the cards gave it), over the matches that have luck."""

    def to_json(self) -> dict[str, Any]:
        finite = math.isfinite(self.low) and math.isfinite(self.high)
        return {
            "bot": self.bot,
            "skill": round(self.skill, 2),
            "interval": [round(self.low, 2), round(self.high, 2)] if finite else None,
            "games": self.games,
            "provisional": self.provisional,
            "luck": round(self.luck, 2),
        }


@dataclass
class SkillFit:
    """The ladder on skill (best first), with what its uncertainty needs for LOS."""

    ratings: list[SkillRating]
    threshold: float
    without_luck: int
    """Matches that had no luck (raw margin used, or skipped: see ``missing``)."""
    missing: str
    dof: int
    """Degrees of freedom of the intervals and LOS (Student's t): the units, less one."""
    index: dict[str, int] = field(default_factory=dict)
    theta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cov: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    luck_correction: LuckCoefficient | None = None
    """The coefficient each match's luck was taken out with, and the variance it left."""

    def los(self, a: str, b: str) -> float:
        """Likelihood that ``a`` has more skill than ``b`` (0.5 if either has no interval)."""
        if a == b or a not in self.index or b not in self.index:
            return 0.5
        i, j = self.index[a], self.index[b]
        if not (math.isfinite(self.cov[i, i]) and math.isfinite(self.cov[j, j])):
            return 0.5
        var = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        diff = self.theta[i] - self.theta[j]
        if var <= 0:
            return 0.5 if diff == 0 else float(diff > 0)
        from scipy.stats import t as student_t  # SciPy's statistics take most of a second to load: when used

        return float(student_t.cdf(diff / math.sqrt(var), self.dof))

    def neighbours(self) -> list[tuple[str, str, float]]:
        """Each bot and the next one down, with the LOS of the first over the second."""
        order = [r.bot for r in self.ratings]
        return [(a, b, self.los(a, b)) for a, b in itertools.pairwise(order)]

    def groups(self) -> list[list[str]]:
        """The ladder cut where a bot is above its next neighbour with LOS >= the threshold."""
        out: list[list[str]] = []
        for r in self.ratings:
            if out and self.los(out[-1][-1], r.bot) < self.threshold:
                out[-1].append(r.bot)
            else:
                out.append([r.bot])
        return out

    def settled(self) -> bool:
        return all(los >= self.threshold for _, _, los in self.neighbours())

    def to_json(self) -> dict[str, Any]:
        return {
            "model": "Gaussian paired comparison on skill margins (raw minus the fitted coefficient times luck), "
            "points per match; mirrored pairs as clusters",
            "threshold": self.threshold,
            "without_luck": self.without_luck,
            "luck_correction": None if self.luck_correction is None else self.luck_correction.to_json(),
            "missing": self.missing,
            "ratings": [r.to_json() for r in self.ratings],
            "groups": self.groups(),
            "neighbours": [{"above": a, "below": b, "los": round(p, 4)} for a, b, p in self.neighbours()],
        }


def fit_skill(
    outcomes: Iterable[Outcome],
    bots: Sequence[str] = (),
    threshold: float = 0.975,
    missing: str = "raw",
    luck_beta: float | None = None,
) -> SkillFit:
    """Fit every bot's skill from all outcomes (order does not matter); ``bots`` adds those not yet played.

    ``luck_beta``: take each match's luck out with this coefficient (1: whole, as the estimator gives it)
    instead of the one fitted on the outcomes (:mod:`scheduler.luck_coefficient`)."""
    if missing not in MISSING:
        raise ValueError(f"missing must be one of {', '.join(MISSING)}, not {missing!r}")
    outcomes = list(outcomes)
    correction = luck_coefficient(outcomes, fixed=luck_beta)
    rows, without = _rows(outcomes, missing, correction.betas)
    names = sorted({b for (_, team, others, _), _lk in rows for b in (*team, *others)})
    index = {b: i for i, b in enumerate(names)}
    theta, cov, dof = _least_squares(rows, index)
    games, luck = _per_bot(rows, index)
    from scipy.stats import t as student_t

    q = float(student_t.ppf(0.975, dof)) if dof > 0 else math.inf
    ratings = []
    for b, i in index.items():
        se = math.sqrt(cov[i, i]) if math.isfinite(cov[i, i]) and cov[i, i] >= 0 else math.inf
        low, high = (theta[i] - q * se, theta[i] + q * se) if math.isfinite(q * se) else (-math.inf, math.inf)
        mean_luck = luck[i][0] / luck[i][1] if luck[i][1] else 0.0
        ratings.append(SkillRating(b, float(theta[i]), low, high, games[i], not math.isfinite(se), mean_luck))
    for b in dict.fromkeys(bots):
        if b not in index:
            ratings.append(SkillRating(b, 0.0, -math.inf, math.inf, 0, True, 0.0))
    ratings.sort(key=lambda r: (-r.skill, r.bot))
    return SkillFit(ratings, threshold, without, missing, dof, index, theta, cov, correction)


Row = tuple[str, tuple[str, ...], tuple[str, ...], float]
"""unit, the team's bots, the other teams' bots, the team's margin (skill, or raw when it has no luck)."""


def _rows(
    outcomes: Sequence[Outcome], missing: str, betas: Sequence[float | None]
) -> tuple[list[tuple[Row, float | None]], int]:
    """One row per team of every outcome (with the team's luck, None when unknown), its margin less ``betas[i]``
    times its luck; the matches without luck."""
    rows: list[tuple[Row, float | None]] = []
    without = 0
    for o, beta in zip(outcomes, betas, strict=True):
        if o.luck is not None and len(o.luck) != len(o.teams):
            raise ValueError(f"outcome {o.match_id}: luck for {len(o.luck)} teams, it has {len(o.teams)}")
        if o.luck is None:
            without += 1
            if missing == "skip":
                continue
        n = len(o.teams)
        for t, team in enumerate(o.teams):
            raw = o.points[t] - (sum(o.points) - o.points[t]) / (n - 1)
            lk = None if o.luck is None else o.luck[t]
            others = tuple(b for u, other in enumerate(o.teams) if u != t for b in other)
            rows.append(((o.unit, team, others, raw - (beta or 0.0) * (lk or 0.0)), lk))
    return rows, without


def _least_squares(
    rows: Sequence[tuple[Row, float | None]], index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, int]:
    """Skills (summing to zero), their covariance (inf where a bot has < 2 units) and its degrees of freedom."""
    n = len(index)
    if not rows:
        return np.zeros(n), np.full((n, n), math.inf), 0
    units: dict[str, int] = {}
    r_idx: list[int] = []
    c_idx: list[int] = []
    vals: list[float] = []
    y: list[float] = []
    cluster: list[int] = []
    for k, ((unit, team, others, margin), _) in enumerate(rows):
        weight = -len(team) / len(others)  # minus 1 / (the number of other teams): their mean
        r_idx += [k] * (len(team) + len(others))
        c_idx += [index[b] for b in (*team, *others)]
        vals += [1.0] * len(team) + [weight] * len(others)
        y.append(margin)
        cluster.append(units.setdefault(unit, len(units)))
    from scipy import sparse

    x = sparse.csr_matrix((vals, (r_idx, c_idx)), shape=(len(rows), n))
    information = (x.T @ x).toarray()
    bread = np.linalg.pinv(information, hermitian=True)
    theta = bread @ (x.T @ np.asarray(y))
    theta -= theta.mean()
    resid = np.asarray(y) - x @ theta
    g = len(units)
    if g < 2:
        return theta, np.full((n, n), math.inf), 0
    scores = sparse.csr_matrix((np.ones(len(rows)), (cluster, range(len(rows)))), shape=(g, len(rows))) @ (
        sparse.diags(resid) @ x
    )
    sandwich = bread @ ((scores.T @ scores).toarray() * g / (g - 1)) @ bread
    # Few units make the sandwich unsteady (it can come out far too small): never go below the plain
    # least-squares covariance, each match counted once (its teams' margins sum to zero).
    independent = sum(len(o) / (len(o) + len(t)) for (_, t, o, _), _ in rows)  # teams - 1, a match
    dof = independent - np.linalg.matrix_rank(information, hermitian=True)
    plain = float(resid @ resid) / dof * bread if dof > 0 else np.full((n, n), math.inf)
    cov = sandwich if np.trace(sandwich) >= np.trace(plain) else plain
    per_bot_units: dict[int, set[int]] = defaultdict(set)
    for k, ((_, team, others, _), _) in enumerate(rows):
        for b in (*team, *others):
            per_bot_units[index[b]].add(cluster[k])
    for i in range(n):
        if len(per_bot_units[i]) < 2:
            cov[i, :] = cov[:, i] = math.inf
    return theta, cov, g - 1


def _per_bot(rows: Sequence[tuple[Row, float | None]], index: dict[str, int]) -> tuple[list[int], list[list[float]]]:
    """Per bot: matches played, and [sum of its luck, matches with luck]."""
    games, luck = [0] * len(index), [[0.0, 0.0] for _ in index]
    for (_, team, _, _), lk in rows:
        for b in team:
            games[index[b]] += 1
            if lk is not None:
                luck[index[b]][0] += lk
                luck[index[b]][1] += 1
    return games, luck
