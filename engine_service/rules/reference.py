"""A deliberately naive capture enumerator: the oracle and the baseline.

It tries every subset of the table and checks each one straight from the
definition in docs/rules.md, sharing no code with :mod:`engine_service.rules.captures`.
Tests compare the fast enumerator against it on random positions, and
``bench/rules.py`` measures the speed-up over it. Never use it in play.

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.cards import Card, mask_of, parse_cards, format_cards
>>> table = mask_of(parse_cards("AH 3S 6D 7C 8H QS"))
>>> [format_cards(m) for m in naive_captures(Rules.preset("tablic-pagat"), table, Card.parse("TC"))]
['3S 7C', 'AH 3S 6D']
"""

from __future__ import annotations

from itertools import combinations

from .cards import JACK, iter_mask
from .rules import Rules


def naive_captures(rules: Rules, table: int, card: int) -> list[int]:
    """Capture masks for ``card`` on ``table``, canonical order; sweeping Jacks excluded."""
    cards = list(iter_mask(table))
    rank = card >> 2
    if rank == JACK and rules.jack_sweeps:
        raise ValueError("a sweeping Jack captures the whole table; nothing to enumerate")
    found = []
    for size in range(1, len(cards) + 1):
        for subset in combinations(cards, size):
            if _is_capture(rules, list(subset), cards, rank):
                mask = 0
                for c in subset:
                    mask |= 1 << c
                found.append(mask)
    return found  # combinations() already yields (size, lexicographic) order


def _is_capture(rules: Rules, subset: list[int], table: list[int], rank: int) -> bool:
    same = [c for c in table if c >> 2 == rank]
    if rules.rank_priority and same:
        return len(subset) == 1 and subset[0] >> 2 == rank
    values = rules.rank_values(rank)
    targets = values if rules.summable(rank) else ()
    if not targets:
        # Only rank matches: each group is one card of the played rank.
        ok = all(c >> 2 == rank for c in subset)
        return ok and (rules.multi_capture or len(subset) == 1)
    return any(_splits(rules, subset, rank, t, rules.multi_capture) for t in targets)


def _splits(rules: Rules, cards: list[int], rank: int, target: int, many: bool) -> bool:
    """Can ``cards`` be split into groups for ``target`` (one group unless ``many``)?"""
    if not cards:
        return True
    first, rest = cards[0], cards[1:]
    for k in range(len(rest) + 1):
        for others in combinations(rest, k):
            group = [first, *others]
            if not _is_group(rules, group, rank, target):
                continue
            remaining = [c for c in rest if c not in others]
            if not remaining:
                return True
            if many and _splits(rules, remaining, rank, target, many):
                return True
    return False


def _is_group(rules: Rules, group: list[int], rank: int, target: int) -> bool:
    if len(group) == 1 and group[0] >> 2 == rank:
        return True
    if not all(rules.summable(c >> 2) for c in group):
        return False
    totals = {0}
    for c in group:
        totals = {t + v for t in totals for v in rules.rank_values(c >> 2)}
    return target in totals
