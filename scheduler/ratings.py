"""Fitted ratings with intervals: what a league's results say about its bots, and how sure it is.

**The model** is Plackett–Luce over teams (for two sides it is exactly
Bradley–Terry with a draw as half a win and half a loss): each match ranks its
teams by placing, a team's strength is the sum of its members' ratings, and a
team of rating ``u`` is picked first among the teams still in the running in
proportion to ``10 ** (u / 400)``. Tied teams count as every order of them,
equally weighted. The ratings maximize the likelihood of *all* results at once
(Newton's method on the exact gradient and Hessian), so the ladder is the same
whatever order the results arrived in.

**A weak prior** keeps perfect scores finite, as BayesElo does: every two bots
that met also drew ``prior_draws`` virtual games against each other (so a
16-0 is a large gap, not an infinite one), and every bot drew a hundredth of a
virtual game against a player at the league's initial rating (which only pins
the scale). The ratings are then shifted so their mean is the initial rating.

**Mirrored pairs** (one deal played twice with the seats swapped) are one unit,
as chess engine testing treats paired openings. The variance of a pair's score
(0, 1/2, 1, 3/2 or 2: the *pentanomial* outcome) is ``2 var(game) (1 + rho)``
with ``rho`` the correlation of its two games; for each pair of bots ``1 + rho``
(estimated, shrunk toward 1 when there are few pairs) is a design effect, and
that pair's mirrored games weigh ``1 / effect`` in the likelihood (a
quasi-likelihood). Pairs whose luck cancels (the deal, not the bot, decided each
game) count for more; pairs won or lost whole count for less.

**Uncertainty** is read off the likelihood itself. A bot's 95% interval is the
set of ratings its profile likelihood does not reject (deviance within 3.84);
the likelihood of superiority of ``a`` over ``b`` is ``Phi(z)`` with ``z`` the
signed root of the deviance of ``r_a = r_b``. Unlike the curvature at the
maximum (the Wald interval), this stays honest when one bot wins every game: the
interval is then short on the side the games bound and long on the side they do
not. Above :data:`PROFILE_MAX` bots the curvature is used (cheaper, asymptotically
the same), and above :data:`~scheduler.information.MARGINAL_MAX` the curvature given
every other bot's rating (:mod:`scheduler.information`). Neighbours on the ladder whose LOS is below the threshold are
*unsettled* and grouped together.

**The point margin** (own points minus the others' mean, per game) is reported
beside each rating with its own interval, the mirrored pair again one unit: a
second, lower-noise statistic. Win/loss stays the definition of strength.

>>> o = [Outcome(f"m{i}", f"u{i // 2}", (("a",), ("b",)), (1.0, 0.0), (101, 60)) for i in range(6)]
>>> fit = fit_ratings(o + [Outcome("m9", "u9", (("b",), ("a",)), (1.0, 0.0), (101, 90))])
>>> [r.bot for r in fit.ratings], fit.ratings[0].rating > 1500 > fit.ratings[1].rating
(['a', 'b'], True)
>>> round(sum(r.rating for r in fit.ratings) / 2, 6), 0.5 < fit.los("a", "b") < 1
(1500.0, True)
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduler.information import (
    MARGINAL_MAX,
    SPARSE_ABOVE,
    conditional_sd,
    conditional_z,
    newton_step,
    sparse_newton_step,
)
from scheduler.numeric import log_sigmoid, normal_cdf, root, sigmoid
from scheduler.outcomes import Outcome, finishing_orders, game_score, outcome_of
from scheduler.pairs import games_and_margins, pair_weights

__all__ = ["Fit", "Outcome", "Rating", "fit_ratings", "fitted_model", "game_score", "outcome_of"]

ELO = 400 / math.log(10)
"""Elo points per unit of natural-log strength."""
Z95 = 1.959963984540054
DEVIANCE_95 = Z95**2
DENSE_TEAMS = 256
"""Up to this many distinct teams the model's matrices are dense NumPy arrays: faster for a small league, and
no SciPy to import (a local match's start-up); above, SciPy's sparse ones."""
PROFILE_MAX = 40
"""Up to this many bots, intervals and LOS come from the profile likelihood; above, from its curvature."""
ANCHOR_DRAWS = 0.01
"""Virtual draws of every bot against a player at 0: pins the scale, says nothing else."""
PROFILE_REACH = 32.0
"""How far (natural-log units, about 5,500 Elo) an interval may reach before it is cut."""


@dataclass(frozen=True)
class Rating:
    bot: str
    rating: float
    low: float
    high: float
    games: int
    provisional: bool
    margin: float
    """Mean points per game over the other teams' mean."""
    margin_low: float
    margin_high: float

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "rating": round(self.rating, 1),
            "interval": _finite([self.low, self.high], 1),
            "games": self.games,
            "provisional": self.provisional,
            "margin": round(self.margin, 2),
            "margin_interval": _finite([self.margin_low, self.margin_high]),
        }


@dataclass
class Fit:
    """A league's fitted ladder (best first), and the likelihood behind its uncertainty."""

    ratings: list[Rating]
    threshold: float
    model: _Model | None = None
    theta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    index: dict[str, int] = field(default_factory=dict)
    _los: dict[tuple[str, str], float] = field(default_factory=dict)
    _cov: np.ndarray | None = None
    _info: tuple[Any, np.ndarray] | None = None
    """Past :data:`~scheduler.information.MARGINAL_MAX` bots: the sparse information and its diagonal."""

    def los(self, a: str, b: str) -> float:
        """Likelihood that ``a`` is stronger than ``b`` (0.5 if either has not played); past
        :data:`~scheduler.information.MARGINAL_MAX` bots, given every other bot's rating (the conditional
        variance: :mod:`scheduler.information`)."""
        if a == b or a not in self.index or b not in self.index:
            return 0.5
        if (a, b) not in self._los:
            assert self.model is not None
            i, j = self.index[a], self.index[b]
            if self.model.n > MARGINAL_MAX:
                if self._info is None:
                    info = self.model.information(self.theta, sparse=True)
                    self._info = (info, np.asarray(info.diagonal()))
                z = conditional_z(self.theta, self._info[0], self._info[1], i, j)
            else:
                if self.model.n > PROFILE_MAX and self._cov is None:  # once, for every pair
                    self._cov = np.linalg.pinv(self.model.information(self.theta), hermitian=True)
                z = self.model.signed_root(self.theta, i, j, self._cov)
            self._los[(a, b)], self._los[(b, a)] = normal_cdf(z), normal_cdf(-z)
        return self._los[(a, b)]

    def los_matrix(self, top: int | None = None) -> list[list[float]]:
        """``m[i][j]``: LOS of the i-th bot of the ladder over the j-th (0.5 on the diagonal).

        ``top``: only the first ``top`` bots of the ladder (the matrix grows as the square).
        """
        order = [r.bot for r in self.ratings][:top]
        return [[round(self.los(a, b), 4) for b in order] for a in order]

    def groups(self) -> list[list[str]]:
        """The ladder cut where a bot is above its next neighbour with LOS >= the threshold.

        A group of more than one bot is *unsettled*: its order may still change.
        """
        out: list[list[str]] = []
        for r in self.ratings:
            if out and self.los(out[-1][-1], r.bot) < self.threshold:
                out[-1].append(r.bot)
            else:
                out.append([r.bot])
        return out

    def neighbours(self) -> list[tuple[str, str, float]]:
        """Each bot and the next one down the ladder, with the LOS of the first over the second."""
        order = [r.bot for r in self.ratings]
        return [(a, b, self.los(a, b)) for a, b in itertools.pairwise(order)]

    def settled(self) -> bool:
        """Every bot is above its next neighbour with LOS >= the threshold."""
        return all(los >= self.threshold for _, _, los in self.neighbours())

    def to_json(self) -> dict[str, Any]:
        return {
            "model": "Plackett-Luce (Bradley-Terry for two sides); virtual-draw prior; mirrored pairs as units",
            "threshold": self.threshold,
            "ratings": [r.to_json() for r in self.ratings],
            "groups": self.groups(),
            "neighbours": [{"above": a, "below": b, "los": round(p, 4)} for a, b, p in self.neighbours()],
        }


def fit_ratings(
    outcomes: Iterable[Outcome],
    bots: Sequence[str] = (),
    initial: float = 1500.0,
    prior_draws: float = 2.0,
    threshold: float = 0.975,
    provisional_width: float = 100.0,
    intervals: bool = True,
) -> Fit:
    """Fit the league's ratings from all its outcomes (the order they come in does not matter).

    ``bots`` adds bots that have not played yet (they sit at ``initial``, provisional).
    ``intervals=False`` skips the intervals when only the order and the LOS are wanted, as the
    adaptive planner does.
    """
    results = sorted(outcomes, key=lambda o: o.match_id)
    names = sorted({b for o in results for t in o.teams for b in t})
    index = {b: i for i, b in enumerate(names)}
    if not names:
        return fitted_model(None, index, [], [], bots, initial=initial, threshold=threshold)
    model = _Model.build(results, index, prior_draws, pair_weights(results))
    games, margins = games_and_margins(results, index)
    return fitted_model(
        model,
        index,
        games,
        margins,
        bots,
        initial=initial,
        threshold=threshold,
        provisional_width=provisional_width,
        intervals=intervals,
    )


def fitted_model(
    model: _Model | None,
    index: dict[str, int],
    games: Sequence[int],
    margins: Sequence[tuple[float, float]],
    bots: Sequence[str] = (),
    *,
    initial: float = 1500.0,
    threshold: float = 0.975,
    provisional_width: float = 100.0,
    intervals: bool = True,
    start: np.ndarray | None = None,
) -> Fit:
    """The ladder of a built model (``index``: bot -> its column; per column its games and its margin with
    that margin's standard error), maximized from ``start`` (a warm start: the last fit's ``theta``, as a
    standing ladder keeps it: :mod:`scheduler.duel_tally`) or from zero. ``bots`` adds the bots not played.

    Intervals come from the profile likelihood up to :data:`PROFILE_MAX` bots, from the inverse information
    up to :data:`~scheduler.information.MARGINAL_MAX`, and from the conditional variance above it."""
    unplayed = [  # no result says anything about them yet
        Rating(b, initial, -math.inf, math.inf, 0, True, 0.0, -math.inf, math.inf)
        for b in sorted(set(bots) - set(index))
    ]
    if model is None:
        return Fit(unplayed, threshold)
    theta = model.maximize(start)
    centred = theta - theta.mean()  # what the ladder shows: each rating over the league's mean
    n = model.n
    if not intervals:
        bounds = [(-math.inf, math.inf)] * n
    elif n <= PROFILE_MAX:
        bounds = [model.profile_interval(theta, i) for i in range(n)]
    else:
        if n <= MARGINAL_MAX:
            centring = np.eye(n) - 1 / n
            sd = np.sqrt(np.diag(centring @ np.linalg.pinv(model.information(theta), hermitian=True) @ centring.T))
        else:
            sd = conditional_sd(model.information(theta, sparse=True))
        bounds = [(centred[i] - Z95 * sd[i], centred[i] + Z95 * sd[i]) for i in range(n)]
    rows = []
    for b, i in index.items():
        low, high = float(bounds[i][0] * ELO + initial), float(bounds[i][1] * ELO + initial)  # not NumPy's
        m, m_se = margins[i]
        rows.append(
            Rating(
                b,
                float(centred[i] * ELO + initial),
                low,
                high,
                int(games[i]),
                (high - low) / 2 > provisional_width,
                m,
                m - Z95 * m_se,
                m + Z95 * m_se,
            )
        )
    rows.sort(key=lambda r: (-r.rating, r.bot))
    return Fit(rows + unplayed, threshold, model, theta, index)


@dataclass
class _Model:
    """The (weighted) log-likelihood as arrays: choice events among distinct teams.

    Events with the same chosen team and the same teams in the running are one
    event with their weights summed, so a round-robin of any length has at most
    one event per ordered pair of bots.
    """

    n: int
    prior: float
    A: Any  # distinct teams x bots: a NumPy array up to DENSE_TEAMS teams, else a scipy.sparse matrix
    chosen: np.ndarray
    weight: np.ndarray
    rest: np.ndarray  # events x width, -1 padded: the teams in the running
    mask: np.ndarray

    @classmethod
    def build(
        cls, outcomes: Sequence[Outcome], index: dict[str, int], prior: float, weights: Sequence[float]
    ) -> _Model:
        team_ids: dict[tuple[int, ...], int] = {}
        events: dict[tuple[int, tuple[int, ...]], float] = defaultdict(float)
        met: set[tuple[int, int]] = set()
        for o, w in zip(outcomes, weights, strict=True):
            teams = [team_ids.setdefault(tuple(sorted(index[b] for b in t)), len(team_ids)) for t in o.teams]
            for order, p in finishing_orders(o.placing):
                for k, t in enumerate(order[:-1]):
                    events[(teams[t], tuple(sorted(teams[x] for x in order[k:])))] += w * p
            for x, y in itertools.combinations(o.teams, 2):
                met.update((min(a, b), max(a, b)) for a in (index[b] for b in x) for b in (index[c] for c in y))
        for a, b in sorted(met):  # the virtual draws of every two bots that met: half a win each way
            ta = team_ids.setdefault((a,), len(team_ids))
            tb = team_ids.setdefault((b,), len(team_ids))
            events[(ta, tuple(sorted((ta, tb))))] += prior / 2
            events[(tb, tuple(sorted((ta, tb))))] += prior / 2
        width = max((len(rest) for _, rest in events), default=1)
        rest = np.full((len(events), width), -1, dtype=np.int64)
        for e, (_, r) in enumerate(events):
            rest[e, : len(r)] = r
        rows = [t for members, t in team_ids.items() for _ in members]
        cols = [b for members in team_ids for b in members]
        shape = (len(team_ids), len(index))
        if shape[0] <= DENSE_TEAMS:
            teams_of: Any = np.zeros(shape)
            np.add.at(teams_of, (rows, cols), 1.0)
        else:
            from scipy.sparse import csr_matrix

            teams_of = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
        return cls(
            len(index),
            ANCHOR_DRAWS,
            teams_of,
            np.array([c for c, _ in events], dtype=np.int64),
            np.array(list(events.values()), dtype=float),
            rest,
            rest >= 0,
        )

    def _probabilities(self, theta: np.ndarray) -> np.ndarray:
        """``p[e, k]``: the chance that the k-th team in the running is chosen at event ``e``."""
        u = self.A @ theta
        vals = np.where(self.mask, u[np.maximum(self.rest, 0)], -np.inf)
        if not len(vals):
            return vals
        ex = np.where(self.mask, np.exp(vals - vals.max(axis=1, keepdims=True)), 0.0)
        return np.asarray(ex / ex.sum(axis=1, keepdims=True))

    def loglik(self, theta: np.ndarray) -> float:
        u = self.A @ theta
        vals = np.where(self.mask, u[np.maximum(self.rest, 0)], -np.inf)
        top = vals.max(axis=1) if len(vals) else np.zeros(0)
        lse = top + np.log(np.where(self.mask, np.exp(vals - top[:, None]), 0.0).sum(axis=1)) if len(vals) else top
        prior = self.prior * 0.5 * (log_sigmoid(theta) + log_sigmoid(-theta)).sum()
        return float((self.weight * (u[self.chosen] - lse)).sum() + prior)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        p = self._probabilities(theta)
        g_u = np.zeros(self.A.shape[0])
        np.add.at(g_u, self.chosen, self.weight)
        np.add.at(g_u, self.rest[self.mask], -(self.weight[:, None] * p)[self.mask])
        return np.asarray(self.A.T @ g_u) + self.prior * (0.5 - sigmoid(theta))

    def information(self, theta: np.ndarray, sparse: bool = False) -> Any:
        """Minus the Hessian of the log-likelihood (exact for this model), prior included: a NumPy array, or
        with ``sparse`` (a league past :data:`~scheduler.information.SPARSE_ABOVE` bots) a SciPy CSR matrix."""
        p = self._probabilities(theta)
        width = self.rest.shape[1]
        rows, cols, vals = [], [], []
        for a in range(width):
            for b in range(width):
                both = self.mask[:, a] & self.mask[:, b]
                h = self.weight * ((p[:, a] if a == b else 0.0) - p[:, a] * p[:, b])
                rows.append(self.rest[both, a])
                cols.append(self.rest[both, b])
                vals.append(h[both])
        teams = self.A.shape[0]
        where = (np.concatenate(rows), np.concatenate(cols))
        s = sigmoid(theta)
        if sparse:
            from scipy.sparse import coo_matrix, csr_matrix, diags

            teams_of = csr_matrix(self.A)
            h_sparse = coo_matrix((np.concatenate(vals), where), shape=(teams, teams)).tocsr()
            out = (teams_of.T @ h_sparse @ teams_of + diags(self.prior * s * (1 - s))).tocsr()
            out.sort_indices()
            return out
        if isinstance(self.A, np.ndarray):
            h_dense = np.zeros((teams, teams))
            np.add.at(h_dense, where, np.concatenate(vals))
            info = np.asarray(self.A.T @ h_dense @ self.A)
        else:
            from scipy.sparse import coo_matrix

            h_u = coo_matrix((np.concatenate(vals), where), shape=(teams, teams))
            info = np.asarray((self.A.T @ h_u.tocsr() @ self.A).todense())
        info[np.diag_indices(self.n)] += self.prior * s * (1 - s)
        return info

    def maximize(self, start: np.ndarray | None = None, fixed: dict[int, float] | None = None) -> np.ndarray:
        """Newton's method with a backtracking line search (the log-likelihood is concave);
        ``fixed`` coordinates are held at their values."""
        theta = np.zeros(self.n) if start is None else start.copy()
        fixed = fixed or {}
        for i, v in fixed.items():
            theta[i] = v
        free = np.array([i for i in range(self.n) if i not in fixed], dtype=np.int64)
        if not len(free):
            return theta
        value = self.loglik(theta)
        for _ in range(200):
            g = self.gradient(theta)[free]
            if np.abs(g).max() < 1e-9:
                break
            if len(free) == self.n > SPARSE_ABOVE:
                step = sparse_newton_step(self.information(theta, sparse=True), g)
            else:
                step = newton_step(self.information(theta)[np.ix_(free, free)], g)
            t = 1.0
            while True:  # halve the step until the likelihood rises
                trial = theta.copy()
                trial[free] += t * step
                new = self.loglik(trial)
                if new >= value - 1e-12 or t < 1e-6:
                    break
                t /= 2
            theta, value = trial, new
            if np.abs(t * step).max() < 1e-10:
                break
        return theta

    def _deviance(self, best: float, theta: np.ndarray) -> float:
        return max(2 * (best - self.loglik(theta)), 0.0)

    def maximize_on(self, c: np.ndarray, v: float, start: np.ndarray) -> np.ndarray:
        """The maximum subject to ``c @ theta == v`` (Newton with backtracking in the plane's coordinates)."""
        basis = np.linalg.svd(c[None, :])[2][1:].T  # n x (n-1): the directions that keep c @ theta fixed
        theta = start + c * (v - c @ start) / (c @ c)
        value = self.loglik(theta)
        for _ in range(200):
            g = basis.T @ self.gradient(theta)
            if np.abs(g).max() < 1e-9:
                break
            step = basis @ newton_step(basis.T @ self.information(theta) @ basis, g)
            t = 1.0
            while (new := self.loglik(theta + t * step)) < value - 1e-12 and t > 1e-6:
                t /= 2
            theta, value = theta + t * step, new
            if np.abs(t * step).max() < 1e-10:
                break
        return np.asarray(theta)

    def profile_interval(self, theta: np.ndarray, i: int, level: float = DEVIANCE_95) -> tuple[float, float]:
        """The values of bot ``i``'s rating over the mean (natural-log scale) its profile deviance keeps within
        ``level``: the likelihood-based interval of what the ladder shows."""
        best = self.loglik(theta)
        c = -np.ones(self.n) / self.n
        c[i] += 1.0
        here = float(c @ theta)

        def excess(v: float) -> float:  # the signed root of the deviance is nearly straight in v: few steps
            return math.sqrt(self._deviance(best, self.maximize_on(c, v, theta))) - math.sqrt(level)

        bounds = []
        for direction in (-1.0, 1.0):
            reach = 0.5
            while excess(here + direction * reach) < 0 and reach < PROFILE_REACH:
                reach *= 2  # widen until the deviance passes the level (the prior makes sure it does)
            far = here + direction * reach
            bounds.append(root(excess, here, far, xtol=1e-4) if excess(far) > 0 else far)
        return bounds[0], bounds[1]

    def signed_root(self, theta: np.ndarray, a: int, b: int, cov: np.ndarray | None = None) -> float:
        """``sign(r_a - r_b) * sqrt(deviance of r_a = r_b)``: a z-score for "a is stronger than b".

        Given ``cov`` (the inverse information, for large leagues), the Wald z-score instead.
        """
        c = np.zeros(self.n)
        c[a], c[b] = 1.0, -1.0
        if cov is not None:
            var = float(c @ cov @ c)
            return float((theta[a] - theta[b]) / math.sqrt(max(var, 1e-12)))
        deviance = self._deviance(self.loglik(theta), self.maximize_on(c, 0.0, theta))
        return float(np.sign(theta[a] - theta[b]) * math.sqrt(deviance))


def _finite(values: Sequence[float], digits: int = 2) -> list[float] | None:
    """Rounded values, or None when one is not finite (too little to say)."""
    return [round(v, digits) for v in values] if all(math.isfinite(v) for v in values) else None
