"""A finished match as the rating model reads it: its teams' placings, points, mirrored unit and luck.

:class:`Outcome` is what the ledger keeps of each match for the fit (its JSON is the ledger's), made from a
finished match by :func:`outcome_of`; :func:`game_score` scores it for one team.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine_service.rules import LuckError, Match, luck_of_match
from store.units import mirror_unit, placing


@dataclass(frozen=True)
class Outcome:
    """One finished match as the model sees it."""

    match_id: str
    unit: str
    """Matches sharing a unit are one mirrored group (one deal, seats rotated)."""
    teams: tuple[tuple[str, ...], ...]
    placing: tuple[float, ...]
    """Per team, higher is better; equal values are a tie."""
    points: tuple[int, ...]
    luck: tuple[float, ...] | None = None
    """Per team, the cards' share of its point margin (:mod:`engine_service.rules.luck`); None: not known."""

    def to_json(self) -> dict[str, Any]:
        teams = [list(t) for t in self.teams]
        out = {"m": self.match_id, "u": self.unit, "t": teams, "p": list(self.placing), "s": list(self.points)}
        return out if self.luck is None else {**out, "l": list(self.luck)}

    @classmethod
    def from_json(cls, d: dict[str, Any] | list[Any]) -> Outcome:
        """From :meth:`to_json`'s object, or the ledger's list ``[m, u, t, p, s]`` or ``[m, u, t, p, s, l]``."""
        m, u, t, p, s = (d["m"], d["u"], d["t"], d["p"], d["s"]) if isinstance(d, dict) else d[:5]
        lk = d.get("l") if isinstance(d, dict) else (d[5] if len(d) > 5 else None)
        luck = None if lk is None else tuple(float(x) for x in lk)
        return cls(m, u, tuple(tuple(team) for team in t), tuple(float(x) for x in p), tuple(s), luck)


def outcome_of(match_id: str, seed: str, seats: Sequence[str], match: Match, luck: bool = True) -> Outcome:
    """What the ledger stores of a finished match, for the rating model.

    ``luck=False`` leaves its luck out (about 80 ms of CPU a match saved, when only win/loss is fitted).
    """
    rules, result = match.rules, match.result
    assert result is not None
    forfeit = rules.team_of(result.forfeit_seat) if result.forfeit_seat is not None else None
    teams = tuple(tuple(seats[s] for s in team) for team in rules.teams)
    placed = tuple(placing(match.totals, result.winner, forfeit))
    margins: tuple[float, ...] | None = None
    if luck:
        try:
            margins = tuple(round(x, 2) for x in luck_of_match(match, match_id).luck)
        except LuckError:  # a forfeit or abort: no luck, as the ledger stores it
            margins = None
    return Outcome(match_id, mirror_unit(seed, seats), teams, placed, tuple(match.totals), margins)


def game_score(o: Outcome, team: int) -> float:
    """``team``'s game score against the others: 1 ahead of all, 0 behind all, 1/2 a tie (two sides)."""
    mine = o.placing[team]
    others = [p for t, p in enumerate(o.placing) if t != team]
    return sum(1.0 if mine > p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def finishing_orders(placing: Sequence[float]) -> list[tuple[list[int], float]]:
    """Every finishing order of the teams the placing allows (ties in every order), each weighted.

    >>> finishing_orders((1.0, 0.0)), finishing_orders((0.5, 0.5))
    ([([0, 1], 1.0)], [([0, 1], 0.5), ([1, 0], 0.5)])
    """
    groups: dict[float, list[int]] = defaultdict(list)
    for t, p in enumerate(placing):
        groups[p].append(t)
    perms = [list(itertools.permutations(groups[p])) for p in sorted(groups, reverse=True)]
    count = math.prod(len(x) for x in perms)
    return [([t for g in combo for t in g], 1 / count) for combo in itertools.product(*perms)]
