"""A two-player league's results as running sums per pair of bots: the rating fit without rereading them.

:func:`scheduler.ratings.fit_ratings` reads every outcome each time it fits: right for a league of a few
thousand results, and seconds of Python at a million. A standing ladder (:mod:`scheduler.standing`) never
stops, so its results are folded, as they land, into what the model actually needs of them:

- per pair of bots, the (weighted) game scores each way: its games on a deal of their own weigh 1, its
  mirrored pairs' games ``1 / design effect`` (:func:`scheduler.pairs.design_effect`, from running sums of
  the pairs' scores: count, sum, sum of squares and the sum of the products of a pair's two games);
- per bot, its games and the sums its point margin and that margin's cluster-robust standard error need
  (mirrored units as clusters, as :func:`scheduler.pairs.games_and_margins` computes them).

:meth:`DuelTally.fit` builds the model (:class:`scheduler.ratings._Model`: one event each way per pair of
bots that met) from those sums in a few vectorized steps, and maximizes it from a start: the last fit's
ratings (a *warm start*: after a thousand more results, a few Newton steps). The fit is the one
:func:`~scheduler.ratings.fit_ratings` makes of the same outcomes (the tests compare them), with one
assumption a standing ladder makes true: a mirrored unit is at most two games (its third would count as a
game of its own here, where ``fit_ratings`` counts the unit's games each on its own).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scheduler.outcomes import Outcome
from scheduler.ratings import ANCHOR_DRAWS, DENSE_TEAMS, Fit, _Model, fitted_model

SHRINK = 4.0
"""As :func:`scheduler.pairs.design_effect`: a pair's correlation is shrunk by ``n / (n + SHRINK)``."""
PAIR_COLUMNS = ("plain_lo", "plain_hi", "mirror_lo", "mirror_hi", "units", "sum", "squares", "products")
"""Per pair of bots (``lo`` the one indexed first): game scores of its plain games and of its mirrored ones
each way, and over its mirrored units: their count, and the sum, the sum of squares and the sum of products of
the two games' scores (from ``lo``'s side)."""
BOT_COLUMNS = ("games", "sum", "cluster_squares", "cluster_cross", "cluster_sizes", "clusters")
"""Per bot: games, sum of point margins, and over its units (clusters) the sums of ``S^2``, ``n S`` and
``n^2`` (``S`` a unit's margins summed, ``n`` its games) and their count."""


class TallyError(ValueError):
    """An outcome a two-player tally cannot hold (a table of three or four, or partners)."""


@dataclass
class _Open:
    """A unit with one game so far: its pair, the game's score from ``lo``'s side, its seat 0 and that seat's margin."""

    pair: int
    score: float
    bot: int
    """The bot in seat 0."""
    margin: float
    """Seat 0's margin."""


@dataclass
class DuelTally:
    """Running sums of a two-player league's outcomes (see the module's doc)."""

    prior_draws: float = 2.0
    mirrored: bool = True
    """Whether a unit's two games may come (mirrored deals): its first game is kept until its second comes. On
    independent deals every game is a unit of its own, and nothing is kept."""
    names: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    pair_of: dict[tuple[int, int], int] = field(default_factory=dict)
    count: int = 0
    """Outcomes folded in."""
    _ends: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    _pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, len(PAIR_COLUMNS))))
    _bots: np.ndarray = field(default_factory=lambda: np.zeros((0, len(BOT_COLUMNS))))
    _open: dict[str, _Open] = field(default_factory=dict)

    def add(self, outcomes: Iterable[Outcome]) -> None:
        """Fold outcomes in (each once: the caller hands each outcome over once, as the ledger lists them).

        The loop only looks things up and lists what changes; the sums change in a few vectorized steps."""
        pairs: list[int] = []
        pair_rows: list[tuple[float, ...]] = []
        bots: list[int] = []
        margins: list[float] = []
        before: list[float] = []  # the bot's margin in the first game of the unit this game closes; NaN: none
        index, nan = self.index, math.nan
        for o in outcomes:
            t = o.teams
            if len(t) != 2 or len(t[0]) != 1 or len(t[1]) != 1:
                raise TallyError(f"match {o.match_id}: a standing ladder's tally holds one-against-one matches only")
            a, b = index.get(t[0][0]), index.get(t[1][0])
            a = self._bot(t[0][0]) if a is None else a
            b = self._bot(t[1][0]) if b is None else b
            if a == b:
                raise TallyError(f"match {o.match_id}: {t[0][0]} against itself")
            lo, hi = (a, b) if a < b else (b, a)
            k = self.pair_of.get((lo, hi))
            k = self._pair(lo, hi) if k is None else k
            p0, p1 = o.placing
            score = 1.0 if p0 > p1 else 0.5 if p0 == p1 else 0.0  # seat 0's
            if a > b:
                score = 1.0 - score  # lo's
            margin = float(o.points[0] - o.points[1])  # seat 0's
            first = self._open.pop(o.unit, None)
            pairs.append(k)
            bots += (a, b)
            margins += (margin, -margin)
            if first is None or first.pair != k:  # a game on its own (for now: its unit's second game may come)
                pair_rows.append((score, 1 - score, 0, 0, 0, 0, 0, 0))
                if self.mirrored:
                    self._open[o.unit] = _Open(k, score, a, margin)
                before += (nan, nan)
            else:  # the unit's second game: one mirrored unit, whose games weigh 1 / effect
                s1, s2 = first.score, score
                pair_rows.append((-s1, s1 - 1, s1 + s2, 2 - s1 - s2, 1, s1 + s2, s1 * s1 + s2 * s2, s1 * s2))
                sign = 1.0 if first.bot == a else -1.0  # the first game's margin as this game's seat 0 had it
                before += (sign * first.margin, -sign * first.margin)
            self.count += 1
        if pairs:
            np.add.at(self._pairs, np.array(pairs), np.array(pair_rows, dtype=float))
            np.add.at(self._bots, np.array(bots), _margin_rows(np.array(margins), np.array(before)))

    def _bot(self, name: str) -> int:
        i = self.index.get(name)
        if i is None:
            i = self.index[name] = len(self.names)
            self.names.append(name)
            if i >= len(self._bots):
                self._bots = _grown(self._bots)
        return i

    def _pair(self, lo: int, hi: int) -> int:
        k = self.pair_of.get((lo, hi))
        if k is None:
            k = self.pair_of[(lo, hi)] = len(self.pair_of)
            if k >= len(self._pairs):
                self._pairs, self._ends = _grown(self._pairs), _grown(self._ends)
            self._ends[k] = (lo, hi)
        return k

    def games(self) -> np.ndarray:
        """Per bot (in :attr:`names` order), its games."""
        return self._bots[: len(self.names), 0].astype(np.int64)

    def pair_games(self, a: str, b: str) -> int:
        """Games ``a`` and ``b`` played against each other."""
        i, j = self.index.get(a), self.index.get(b)
        k = None if i is None or j is None else self.pair_of.get((min(i, j), max(i, j)))
        return 0 if k is None else round(float(self._pairs[k, :4].sum()))

    def pair_games_of(self, first: Sequence[str], second: Sequence[str]) -> np.ndarray:
        """Games each bot of ``first`` played against the bot beside it in ``second``."""
        rows = np.full(len(first), -1, dtype=np.int64)
        index, pair_of = self.index, self.pair_of
        for k, (a, b) in enumerate(zip(first, second, strict=True)):
            i, j = index.get(a), index.get(b)
            if i is not None and j is not None:
                rows[k] = pair_of.get((i, j) if i < j else (j, i), -1)
        out = np.zeros(len(first), dtype=np.int64)
        seen = rows >= 0
        out[seen] = np.rint(self._pairs[rows[seen], :4].sum(axis=1)).astype(np.int64)
        return out

    def model(self) -> _Model:
        """The rating model of everything folded in: per pair, one event each way (prior draws included)."""
        m = len(self.pair_of)
        ends, p = self._ends[:m], self._pairs[:m]
        effect = design_effects(p[:, 4], p[:, 5], p[:, 6], p[:, 7])
        win_lo = p[:, 0] + p[:, 2] / effect + self.prior_draws / 2
        win_hi = p[:, 1] + p[:, 3] / effect + self.prior_draws / 2
        n = len(self.names)
        rest = np.concatenate([ends, ends])
        if n <= DENSE_TEAMS:
            teams_of: object = np.eye(n)
        else:
            from scipy.sparse import identity

            teams_of = identity(n, format="csr")
        return _Model(
            n,
            ANCHOR_DRAWS,
            teams_of,
            np.concatenate([ends[:, 0], ends[:, 1]]),
            np.concatenate([win_lo, win_hi]),
            rest,
            rest >= 0,
        )

    def margins(self) -> list[tuple[float, float]]:
        """Per bot, its mean point margin and that mean's standard error, mirrored units as clusters."""
        out = []
        for games, total, squares, cross, sizes, clusters in self._bots[: len(self.names)]:
            mean = total / games
            spread = max(squares - 2 * mean * cross + mean * mean * sizes, 0.0)
            se = math.sqrt(spread * clusters / (clusters - 1)) / games if clusters > 1 else math.inf
            out.append((float(mean), float(se)))
        return out

    def start(self, theta: Mapping[str, float], heirs: Mapping[str, str] | None = None) -> np.ndarray:
        """A warm start: each bot's strength (natural-log units, as :attr:`Fit.theta` holds them) from ``theta``,
        or for a bot without one its predecessor's (``heirs``: bot -> the bot it starts from), or 0."""
        heirs = heirs or {}
        return np.array([theta.get(b, theta.get(heirs.get(b, ""), 0.0)) for b in self.names], dtype=float)

    def fit(
        self,
        bots: Sequence[str] = (),
        *,
        initial: float = 1500.0,
        threshold: float = 0.975,
        intervals: bool = False,
        start: np.ndarray | None = None,
    ) -> Fit:
        """The ladder of everything folded in (:func:`scheduler.ratings.fitted_model`), from ``start``."""
        if not self.names:
            return fitted_model(None, {}, [], [], bots, initial=initial, threshold=threshold)
        return fitted_model(
            self.model(),
            dict(self.index),
            list(self.games()),
            self.margins(),
            bots,
            initial=initial,
            threshold=threshold,
            intervals=intervals,
            start=start,
        )


def _margin_rows(margins: np.ndarray, before: np.ndarray) -> np.ndarray:
    """What each game's margin adds to its bot's sums (:data:`BOT_COLUMNS`): a new unit (a cluster) where
    ``before`` is NaN, else the second game of the unit whose first game's margin (the same bot's) it holds."""
    second = ~np.isnan(before)
    s, n = np.where(second, before, 0.0), second.astype(float)
    total = s + margins
    return np.column_stack(
        [np.ones_like(margins), margins, total**2 - s * s, (n + 1) * total - n * s, 2 * n + 1, 1 - n]
    )


def design_effects(units: np.ndarray, total: np.ndarray, squares: np.ndarray, products: np.ndarray) -> np.ndarray:
    """:func:`scheduler.pairs.design_effect` of many pairs at once, from their running sums: ``1 + rho`` with
    ``rho`` shrunk, 1 where there are fewer than two units or no spread, clipped to [0.2, 2]."""
    n = np.maximum(units, 1)
    mean = total / (2 * n)
    var = squares / (2 * n) - mean * mean
    spread = var >= 1e-9
    cov = (products - mean * total + n * mean * mean) / n
    rho = np.where(spread, cov / np.where(spread, var, 1.0), 0.0)
    effect = np.clip(1 + rho * n / (n + SHRINK), 0.2, 2.0)
    return np.asarray(np.where((units >= 2) & spread, effect, 1.0))


def _grown(a: np.ndarray) -> np.ndarray:
    """``a`` with room for twice as many rows (zeros)."""
    out = np.zeros((max(2 * len(a), 64), *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out
