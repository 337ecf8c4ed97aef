"""Which table cards a played card can capture.

The answer depends only on the *ranks* on the table and the played rank (suits
never matter to a capture), so :class:`CaptureFinder` solves each
``(table ranks, played rank)`` question once per rule set and caches the answer
as bitmasks over the table's sorted positions. Because a card's number is
``rank * 4 + suit``, the table sorted by card number is also sorted by rank, and
position masks map straight back to card masks.

Each answer is a :class:`Capture`: the captured cards and what a tabla with them
is worth (the played card's value, and the largest ``(groups + 1) * value`` of
any split of the capture into groups, for ``tabla_points = total_value``).

Captures come in the canonical order used everywhere: fewer cards first, then
lexicographically by card number.

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.cards import Card, mask_of, parse_cards, format_cards
>>> finder = CaptureFinder(Rules.preset("tablic-pagat"))
>>> table = mask_of(parse_cards("AH 3S 6D 7C 8H QS"))
>>> [format_cards(c.mask) for c in finder.captures(table, Card.parse("9C"))]
['AH 8H', '3S 6D', 'AH 3S 6D 8H']
"""

from __future__ import annotations

from typing import NamedTuple

from .cards import iter_mask
from .errors import TooManyPlaysError
from .rules import Rules

_CACHE_LIMIT = 200_000


class Capture(NamedTuple):
    """One legal capture set: its card mask and the tabla values it would score."""

    mask: int
    value: int
    """The played card's value for this capture (``tabla_points = card_value``)."""
    total: int
    """``(groups + 1) * value`` for the best split (``tabla_points = total_value``)."""


# A solved question: (table positions, value, total) per capture set, in canonical order.
_Solution = tuple[tuple[tuple[int, ...], int, int], ...]


class CaptureFinder:
    """Enumerates capture sets under one :class:`Rules`; not for sweeping Jacks."""

    def __init__(self, rules: Rules, limit: int | None = None) -> None:
        """``limit``: the most capture sets (and search steps) one question may take before
        :class:`TooManyPlaysError`; None for no limit (a real deal never gets near one)."""
        self.rules = rules
        self.limit = limit
        self._values = tuple(rules.rank_values(r) for r in range(13))
        self._summable = tuple(rules.summable(r) for r in range(13))
        # _relevant[p][r]: can a table card of rank r take part in a capture by played rank p?
        # Only same-rank cards and summable cards no bigger than the largest target can, so
        # the rest stay out of the cache key (and the cache settles on few entries).
        self._relevant = tuple(
            tuple(
                r == p or (self._summable[p] and self._summable[r] and min(self._values[r]) <= max(self._values[p]))
                for r in range(13)
            )
            for p in range(13)
        )
        self._cache: dict[tuple[tuple[int, ...], int], _Solution] = {}

    def captures(self, table: int, card: int) -> list[Capture]:
        """Every legal capture set for ``card`` played on ``table`` (may be empty).

        Rank priority applies; the trail and mandatory capture are the caller's
        business (see :mod:`engine_service.rules.deal`).
        """
        bits, solved = self._lookup(table, card)
        return [Capture(_mask_of(bits, idxs), value, total) for idxs, value, total in solved]

    def capture_masks(self, table: int, card: int) -> list[int]:
        """The card masks of :meth:`captures`, same order, without the tabla values: the hot path
        of every turn (a legal-play list is built from these)."""
        bits, solved = self._lookup(table, card)
        return [_mask_of(bits, idxs) for idxs, _, _ in solved]

    def _lookup(self, table: int, card: int) -> tuple[list[int], _Solution]:
        """The table's relevant cards (as one-card masks, sorted) and the cached solution over them."""
        played = card >> 2
        relevant = self._relevant[played]
        positions = [c for c in iter_mask(table) if relevant[c >> 2]]
        key = (tuple(c >> 2 for c in positions), played)
        solved = self._cache.get(key)
        if solved is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            found = self._solve(key[0], played)
            solved = self._cache[key] = tuple((_positions(m), v, t) for m, v, t in found)
        return [1 << c for c in positions], solved

    # ------------------------------------------------------------ solving

    def _solve(self, ranks: tuple[int, ...], played: int) -> tuple[tuple[int, int, int], ...]:
        """All capture sets for a played rank on a table of sorted ranks, as (position mask, value, total)."""
        rules = self.rules
        same_rank = [1 << i for i, r in enumerate(ranks) if r == played]
        played_values = self._values[played]
        if rules.rank_priority and same_rank:
            value = max(played_values, default=1)
            return tuple((m, value, 2 * value) for m in same_rank)
        targets = played_values if self._summable[played] else ()
        # best[mask] = (value, total): the highest tabla values over all targets.
        best: dict[int, tuple[int, int]] = {}
        for target in targets or (max(played_values, default=1),):
            groups = set(same_rank)
            if targets:
                groups.update(self._sum_groups(ranks, target))
            if not groups:
                continue
            unions = _disjoint_unions(sorted(groups), self.limit) if rules.multi_capture else {g: 1 for g in groups}
            for mask, count in unions.items():
                value, total = best.get(mask, (0, 0))
                best[mask] = (max(value, target), max(total, (count + 1) * target))
        order = sorted(best, key=lambda m: (m.bit_count(), _positions(m)))
        return tuple((m, best[m][0], best[m][1]) for m in order)

    def _sum_groups(self, ranks: tuple[int, ...], target: int) -> set[int]:
        """Masks of summable positions whose values can add up to ``target``.

        Depth-first over positions with the running remainder; values are
        positive, so a branch stops as soon as the remainder is spent. An Ace
        branches on each of its values.
        """
        items = [(i, self._values[r]) for i, r in enumerate(ranks) if self._summable[r]]
        found: set[int] = set()
        n = len(items)
        steps = [0]

        def walk(start: int, remaining: int, mask: int) -> None:
            steps[0] += 1
            if self.limit is not None and steps[0] > 20 * self.limit:
                raise TooManyPlaysError(f"more than {self.limit} capture sets to look through on this table")
            for k in range(start, n):
                pos, values = items[k]
                for v in values:
                    if v == remaining:
                        found.add(mask | 1 << pos)
                    elif v < remaining:
                        walk(k + 1, remaining - v, mask | 1 << pos)

        walk(0, target, 0)
        return found


def _disjoint_unions(groups: list[int], limit: int | None = None) -> dict[int, int]:
    """Every non-empty union of pairwise-disjoint groups, with its largest group count."""
    unions: dict[int, int] = {}
    steps = [0]

    def extend(start: int, mask: int, count: int) -> None:
        steps[0] += 1
        if limit is not None and (len(unions) > limit or steps[0] > 20 * limit):
            raise TooManyPlaysError(f"more than {limit} capture sets on this table")
        for k in range(start, len(groups)):
            g = groups[k]
            if not mask & g:
                union = mask | g
                if unions.get(union, 0) < count + 1:
                    unions[union] = count + 1
                extend(k + 1, union, count + 1)

    extend(0, 0, 0)
    return unions


def _mask_of(bits: list[int], idxs: tuple[int, ...]) -> int:
    mask = 0
    for i in idxs:
        mask |= bits[i]
    return mask


def _positions(mask: int) -> tuple[int, ...]:
    return tuple(iter_mask(mask))
