"""Mirrored pairs as units: how much a pair's two games vary together, and point margins with pairs as clusters.

One deal played twice with the seats swapped is one unit. Its score varies as ``2 var(game) (1 + rho)``,
``rho`` the correlation of its two games; :func:`design_effect` estimates ``1 + rho`` per pair of bots, and
:func:`pair_weights` gives each mirrored game its weight ``1 / effect`` in the fit (:mod:`scheduler.ratings`).
:func:`games_and_margins` gives each bot's mean point margin with its standard error, the units as clusters.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from scheduler.outcomes import Outcome, game_score


def duel(o: Outcome) -> tuple[str, str] | None:
    """The two bots of a one-against-one match, in seat order, or None for tables and partnerships."""
    if len(o.teams) != 2 or any(len(t) != 1 for t in o.teams):
        return None
    return o.teams[0][0], o.teams[1][0]


def pair_weights(outcomes: Sequence[Outcome]) -> list[float]:
    """Per outcome, 1 / the design effect of its bots' mirrored pairs (1 when it is in none)."""
    units: dict[str, list[int]] = defaultdict(list)
    for m, o in enumerate(outcomes):
        units[o.unit].append(m)
    pair_units: dict[frozenset[str], list[tuple[float, float]]] = defaultdict(list)
    members: dict[int, frozenset[str]] = {}
    for ms in units.values():
        duels = [duel(outcomes[m]) for m in ms]
        pairs = {frozenset(d) for d in duels if d is not None}
        if len(ms) != 2 or None in duels or len(pairs) != 1:
            continue
        (pair,) = pairs
        first = min(pair)  # both games scored from the same bot's side
        s1, s2 = (game_score(outcomes[m], 0 if d and d[0] == first else 1) for m, d in zip(ms, duels, strict=True))
        pair_units[pair].append((s1, s2))
        members.update({m: pair for m in ms})
    effect = {pair: design_effect(scores) for pair, scores in pair_units.items()}
    return [1 / effect[members[m]] if m in members else 1.0 for m in range(len(outcomes))]


def design_effect(units: Sequence[tuple[float, float]], shrink: float = 4.0) -> float:
    """``1 + rho``: how much a mirrored pair's score varies against two independent games.

    ``rho`` is the correlation of the two games of a pair (scored from one bot's
    side), shrunk toward 0 by ``n / (n + shrink)`` so a few pairs say little; with
    no spread at all (one bot won everything) it is 0. Clipped to [0.2, 2].

    >>> design_effect([(1.0, 0.0), (0.0, 1.0)] * 8) < 0.5  # every pair split: the deal decided, luck cancels
    True
    >>> design_effect([(1.0, 1.0), (0.0, 0.0)] * 8) > 1.5  # pairs won or lost whole
    True
    >>> design_effect([(1.0, 1.0)] * 8)  # a perfect score says nothing about the correlation
    1.0
    """
    n = len(units)
    if n < 2:
        return 1.0
    values = [s for u in units for s in u]
    mean = sum(values) / len(values)
    var = sum((s - mean) ** 2 for s in values) / len(values)
    if var < 1e-9:
        return 1.0
    rho = sum((a - mean) * (b - mean) for a, b in units) / n / var
    return float(np.clip(1 + rho * n / (n + shrink), 0.2, 2.0))


def games_and_margins(
    outcomes: Sequence[Outcome], index: dict[str, int]
) -> tuple[list[int], list[tuple[float, float]]]:
    """Per bot: games played, and (mean point margin, its standard error with mirrored units as clusters)."""
    per_bot: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in outcomes:
        for t, team in enumerate(o.teams):
            others = [s for u, s in enumerate(o.points) if u != t]
            margin = o.points[t] - sum(others) / len(others)
            for b in team:
                per_bot[index[b]][o.unit].append(margin)
    games = [0] * len(index)
    margins = [(0.0, math.inf)] * len(index)
    for i, units in per_bot.items():
        values = [v for vs in units.values() for v in vs]
        games[i] = len(values)
        mean = sum(values) / len(values)
        clusters = [sum(v - mean for v in vs) for vs in units.values()]
        c = len(clusters)
        se = math.sqrt(sum(x * x for x in clusters) * c / (c - 1)) / len(values) if c > 1 else math.inf
        margins[i] = (mean, se)
    return games, margins
