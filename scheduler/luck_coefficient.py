"""How much of each match's luck to take out: the luck term as a control variate, fitted on the league's results.

Each outcome carries, per team, its point margin ``y`` and the luck of its cards
``x`` (:mod:`engine_service.rules.luck`), both margins that sum to zero over a
match's teams. ``x`` has mean zero whatever the bots do, so for *any* coefficient
``b`` fixed before the match is known, ``y - b x`` keeps ``y``'s mean; its variance
is ``var(y) - 2 b cov(y, x) + b^2 var(x)``, least at ``b = cov(y, x) / var(x)``.
The estimator's scale was tuned on a close pair, where that slope is about 1; in a
mismatched pair (greedy against random) the value function rates cards for a
player that does not use them, ``var(x)`` outgrows ``cov(y, x)``, the best slope
falls to about a third, and ``b = 1`` doubles the variance it meant to cut.

So the slope is estimated from the league's own outcomes:

- **Units and pairings.** A row is one team's margin and luck summed over a
  *unit* (the games of one deal: a mirrored pair, a seat rotation, or a single
  game), the level at which the skill fit counts its variance. A *pairing* is
  the set of teams that met. Margins are centred within their pairing and team
  (each team's mean over the pairing's units): a mismatched pairing's margins have
  a large mean (the skill difference), which must not leak into the slope.
- **Shrinkage.** The league's slope is ``(Sxy + N0 s2) / (Sxx + N0 s2)``: the
  regression's sums with :data:`PRIOR_UNITS` units' worth of evidence (``s2``:
  the luck's centred square per unit) for the estimator's own scale, 1. Each
  pairing's slope is shrunk the same way (:data:`PAIRING_PRIOR_UNITS`) to the
  slope of the league's *other* pairings (its own units are not counted twice):
  a pairing with few units takes the league's slope, a league with few units
  takes 1, today's constant.
- **Cross-fitting.** The units fall into :data:`FOLDS` folds (by a hash of the
  unit, so the answer does not depend on the order results arrived in); the
  slope applied to an outcome is estimated from the *other* folds only. An
  outcome's luck is independent of the other units' deals, so it is independent
  of its own coefficient, and ``E[y - b x] = E[y] - E[b] E[x] = E[y]``: the
  adjusted margin stays unbiased, which a slope fitted on its own data would not
  promise.

The **variance ratio** is the adjusted margins' centred sum of squares over the
raw ones' (rows as above, each adjusted by its own cross-fitted slope): the
share of the spread left after the correction, out of sample. It is given beside
the ratio ``b = 1`` would give.

>>> from scheduler.outcomes import Outcome
>>> lc = luck_coefficient([Outcome("m", "u", (("a",), ("b",)), (1.0, 0.0), (101, 60), (12.0, -12.0))])
>>> lc.betas, lc.beta, lc.ratio  # one unit: nothing to learn from, the estimator's scale as it is
((1.0,), 1.0, None)
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler.outcomes import Outcome

FOLDS = 5
"""Folds of the cross-fitting: each outcome's slope comes from the units of the other four."""
PRIOR_UNITS = 5.0
"""Units of evidence the league's slope starts with for 1 (the luck estimator's own scale)."""
PAIRING_PRIOR_UNITS = 5.0
"""Units of evidence a pairing's slope starts with for the league's."""

Pairing = tuple[tuple[str, ...], ...]
"""The teams of a match, in sorted order."""


@dataclass
class _Sums:
    """Sufficient statistics of rows (y, x): count and the sums of y, x, xy, xx, yy."""

    n: int = 0
    y: float = 0.0
    x: float = 0.0
    xy: float = 0.0
    xx: float = 0.0
    yy: float = 0.0

    def add(self, y: float, x: float) -> None:
        self.n += 1
        self.y += y
        self.x += x
        self.xy += x * y
        self.xx += x * x
        self.yy += y * y

    def plus(self, other: _Sums) -> _Sums:
        return _Sums(
            self.n + other.n,
            self.y + other.y,
            self.x + other.x,
            self.xy + other.xy,
            self.xx + other.xx,
            self.yy + other.yy,
        )

    def sxy(self) -> float:
        return self.xy - self.x * self.y / self.n if self.n else 0.0

    def sxx(self) -> float:
        return max(self.xx - self.x * self.x / self.n, 0.0) if self.n else 0.0

    def syy(self) -> float:
        return max(self.yy - self.y * self.y / self.n, 0.0) if self.n else 0.0


@dataclass(frozen=True)
class PairingLuck:
    """One pairing: its units, its slope from all of them, and the variance ratios of its centred margins."""

    teams: Pairing
    units: int
    beta: float
    ratio: float | None
    ratio_at_one: float | None


@dataclass(frozen=True)
class LuckCoefficient:
    """The fitted coefficients of a set of outcomes.

    ``betas[i]`` is the cross-fitted slope for the ``i``-th outcome given (None: it has no luck);
    ``beta`` the league's slope from every unit, ``pairings`` each pairing's; ``ratio`` the adjusted
    margins' variance over the raw ones' (None: too few units to say), ``ratio_at_one`` the same with 1.
    """

    betas: tuple[float | None, ...]
    beta: float
    units: int
    ratio: float | None
    ratio_at_one: float | None
    pairings: tuple[PairingLuck, ...] = field(default=())
    folds: int = FOLDS

    def to_json(self) -> dict[str, Any]:
        """The league's figures (aggregates only: no match, no card)."""
        own = [p.beta for p in self.pairings if p.units >= 2]
        return {
            "beta": round(self.beta, 3),
            "pairing_betas": [round(min(own), 3), round(max(own), 3)] if own else None,
            "pairings": len(self.pairings),
            "units": self.units,
            "folds": self.folds,
            "prior_units": PRIOR_UNITS,
            "ratio": None if self.ratio is None else round(self.ratio, 3),
            "ratio_at_one": None if self.ratio_at_one is None else round(self.ratio_at_one, 3),
        }


def fold_of(unit: str, folds: int = FOLDS) -> int:
    """The fold of a unit: a hash of its name, so the same results give the same folds in any order."""
    return int.from_bytes(hashlib.blake2b(unit.encode(), digest_size=8).digest(), "big") % folds


def team_margins(o: Outcome) -> list[float]:
    """Each team's point margin: its points minus the mean of the other teams'."""
    total, others = sum(o.points), len(o.points) - 1
    return [p - (total - p) / others for p in o.points]


Key = tuple[Pairing, tuple[str, ...]]
"""A group whose rows are centred together: a pairing and one of its teams."""


@dataclass
class _Rows:
    """Per (pairing, unit, team), the summed margin and luck; which units each pairing and fold holds; each
    unit's fold."""

    rows: dict[tuple[Pairing, str, tuple[str, ...]], list[float]] = field(default_factory=dict)
    units: dict[Pairing, list[set[str]]] = field(default_factory=dict)
    of_outcome: list[tuple[Pairing, int] | None] = field(default_factory=list)
    fold: dict[str, int] = field(default_factory=dict)


def _collect(outcomes: Sequence[Outcome], folds: int) -> _Rows:
    out = _Rows()
    for o in outcomes:
        if o.luck is None or len(o.teams) < 2:
            out.of_outcome.append(None)
            continue
        if len(o.luck) != len(o.teams):
            raise ValueError(f"outcome {o.match_id}: luck for {len(o.luck)} teams, it has {len(o.teams)}")
        pairing = tuple(sorted(o.teams))
        fold = out.fold.get(o.unit)
        if fold is None:
            fold = out.fold[o.unit] = fold_of(o.unit, folds)
        if pairing not in out.units:
            out.units[pairing] = [set() for _ in range(folds)]
        out.units[pairing][fold].add(o.unit)
        out.of_outcome.append((pairing, fold))
        for team, y, x in zip(o.teams, team_margins(o), o.luck, strict=True):
            row = out.rows.setdefault((pairing, o.unit, team), [0.0, 0.0])
            row[0] += y
            row[1] += x
    return out


def _slopes(
    groups: dict[Key, _Sums], units: dict[Pairing, int], prior: float | None
) -> tuple[float, dict[Pairing, float]]:
    """The league's slope and each pairing's from centred sums (``units``: each pairing's), shrunk as the module
    says; ``prior``: the league's slope to use instead of estimating it (a fixed coefficient)."""
    sxy: dict[Pairing, float] = defaultdict(float)
    sxx: dict[Pairing, float] = defaultdict(float)
    for (pairing, _), s in groups.items():
        sxy[pairing] += s.sxy()
        sxx[pairing] += s.sxx()
    dof = sum(max(n - 1, 0) for n in units.values())
    total_xx = sum(sxx.values())
    s2 = total_xx / dof if dof else 0.0
    if prior is not None or s2 <= 0.0:
        league = 1.0 if prior is None else prior
        return league, dict.fromkeys(units, league)
    total_xy, prior_xy = sum(sxy.values()), PRIOR_UNITS * s2
    league = (total_xy + prior_xy) / (total_xx + prior_xy)
    weight, out = PAIRING_PRIOR_UNITS * s2, {}
    for p in units:  # each pairing towards the others' slope (its own units are not counted twice)
        others = (total_xy - sxy[p] + prior_xy) / (total_xx - sxx[p] + prior_xy)
        out[p] = (sxy[p] + weight * others) / (sxx[p] + weight)
    return league, out


def luck_coefficient(outcomes: Sequence[Outcome], folds: int = FOLDS, fixed: float | None = None) -> LuckCoefficient:
    """Fit the coefficients of ``outcomes`` (those without luck get None); ``fixed``: use that coefficient
    everywhere instead (the figures then say what it does)."""
    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, not {folds}")
    data = _collect(outcomes, folds)
    per_fold: dict[Key, list[_Sums]] = defaultdict(lambda: [_Sums() for _ in range(folds)])
    for (pairing, unit, team), (y, x) in data.rows.items():
        per_fold[(pairing, team)][data.fold[unit]].add(y, x)
    whole = {key: _total(sums) for key, sums in per_fold.items()}
    counts = {p: sum(len(u) for u in by_fold) for p, by_fold in data.units.items()}
    crossed: list[dict[Pairing, float]] = []
    for k in range(folds):  # each fold's slopes, from the others
        train = {key: _total([s for j, s in enumerate(sums) if j != k]) for key, sums in per_fold.items()}
        left = {p: counts[p] - len(by_fold[k]) for p, by_fold in data.units.items()}
        crossed.append(_slopes(train, left, fixed)[1])
    betas = tuple(None if at is None else crossed[at[1]][at[0]] for at in data.of_outcome)
    league, by_pairing = _slopes(whole, counts, fixed)
    squares = _squares(data, crossed)
    pairings = tuple(PairingLuck(p, counts[p], by_pairing[p], *_ratio([squares[p]])) for p in sorted(data.units))
    overall = _ratio(list(squares.values()))
    return LuckCoefficient(betas, league, sum(counts.values()), *overall, pairings, folds)


def _total(sums: Sequence[_Sums]) -> _Sums:
    out = _Sums()
    for s in sums:
        out = out.plus(s)
    return out


Squares = tuple[float, float, float]
"""Centred sums of squares: raw, adjusted by the cross-fitted slopes, adjusted with the whole luck."""


def _squares(data: _Rows, crossed: list[dict[Pairing, float]]) -> dict[Pairing, Squares]:
    """Per pairing, the centred sums of squares of its rows (each team's rows centred on their own mean)."""
    raw: dict[Key, _Sums] = defaultdict(_Sums)
    adjusted: dict[Key, _Sums] = defaultdict(_Sums)
    at_one: dict[Key, _Sums] = defaultdict(_Sums)
    for (pairing, unit, team), (y, x) in data.rows.items():
        b = crossed[data.fold[unit]][pairing]
        raw[(pairing, team)].add(y, 0.0)
        adjusted[(pairing, team)].add(y - b * x, 0.0)
        at_one[(pairing, team)].add(y - x, 0.0)
    squares: dict[Pairing, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for key in raw:
        sq = squares[key[0]]
        sq[0] += raw[key].syy()
        sq[1] += adjusted[key].syy()
        sq[2] += at_one[key].syy()
    return {p: (sq[0], sq[1], sq[2]) for p, sq in squares.items()}


def _ratio(squares: Sequence[Squares]) -> tuple[float | None, float | None]:
    """The cross-fitted and the whole-luck ratios of summed squares (None when the raw margins do not vary)."""
    raw = sum(s[0] for s in squares)
    if raw <= 0.0:
        return None, None
    return sum(s[1] for s in squares) / raw, sum(s[2] for s in squares) / raw


def summary_line(d: dict[str, Any] | None) -> str:
    """The coefficient and the variance ratio in one line (``LuckCoefficient.to_json``'s dict), or ''."""
    if not d or not d.get("units"):
        return ""
    spread = d.get("pairing_betas")
    by_pairing = f", {spread[0]:.2f} to {spread[1]:.2f} by pairing" if spread and spread[0] != spread[1] else ""
    text = f"luck coefficient {d['beta']:.2f}{by_pairing} ({d['units']} units, cross-fitted)"
    if d.get("ratio") is not None:
        text += f"; adjusted/raw variance {d['ratio']:.2f} (whole luck: {d['ratio_at_one']:.2f})"
    return text
