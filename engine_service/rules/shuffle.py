"""Seeded, language-independent dealing.

Chance is explicit: deal ``k`` of a match with seed ``s`` is a pure function of
``(rules, s, k)``. The shuffle is Fisher-Yates driven by SHA-256 in counter mode,
specified here so that any language can reproduce it:

1. Words: block ``b`` is ``SHA-256("tablanette/1|<seed>|<k>|<b>")`` (UTF-8),
   read as eight big-endian unsigned 32-bit words; blocks ``b = 0, 1, ...``
   give the word stream.
2. Start from the deck ``[0, 1, ..., 51]`` (card number = rank * 4 + suit) and
   for ``i`` from 51 down to 1 draw ``j`` uniform in ``0..i``: take the next word
   ``w``, reject it if ``w >= 2**32 - 2**32 % (i + 1)``, else ``j = w % (i + 1)``;
   swap positions ``i`` and ``j``.
3. Index 0 is the top of the stock. Round 0: each seat in play order (the seat
   after the dealer first) takes the next ``hand_size`` cards; then the table
   takes ``table_size`` cards, and under ``initial_table_jacks = replace`` a Jack
   goes to the bottom of the stock and the next card is drawn instead (as long as
   the stock holds a card that is not a Jack). Later rounds deal to the players
   only, the final one splitting what is left evenly.

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.cards import format_cards
>>> layout = deal_layout(Rules.preset("tablic"), "demo", 0)
>>> layout.dealer, len(layout.rounds), format_cards(layout.table)
(0, 4, 'AC 4S 6D TH')
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from .cards import FULL_DECK, JACK, format_cards, popcount
from .errors import RecordError
from .rules import Rules


@dataclass(frozen=True)
class DealLayout:
    """How one deal's cards were dealt: the dealer, the table, every round's hands.

    ``rounds[r][s]`` is the mask of the cards seat ``s`` received in round ``r``.
    """

    dealer: int
    table: int
    rounds: tuple[tuple[int, ...], ...]

    def check(self, rules: Rules) -> None:
        """Raise :class:`RecordError` unless this is a whole, correctly sized deal."""
        n = rules.players
        if not 0 <= self.dealer < n:
            raise RecordError(f"dealer {self.dealer} is not a seat of {n} players")
        if popcount(self.table) != rules.table_size:
            raise RecordError(f"the table has {popcount(self.table)} cards, the rules deal {rules.table_size}")
        sizes = round_sizes(rules)
        if len(self.rounds) != len(sizes):
            raise RecordError(f"{len(self.rounds)} rounds dealt, the rules deal {len(sizes)}")
        seen = self.table
        for r, (hands, size) in enumerate(zip(self.rounds, sizes, strict=True)):
            if len(hands) != n:
                raise RecordError(f"round {r} deals to {len(hands)} seats, not {n}")
            for s, hand in enumerate(hands):
                if popcount(hand) != size:
                    raise RecordError(f"round {r}: seat {s} got {popcount(hand)} cards, not {size}")
                if seen & hand:
                    raise RecordError(f"round {r}: seat {s} got {format_cards(seen & hand)} twice")
                seen |= hand
        if seen != FULL_DECK:
            raise RecordError(f"the deal misses {format_cards(FULL_DECK & ~seen)}")


def round_sizes(rules: Rules) -> list[int]:
    """Cards per seat in each round of a deal."""
    left = 52 - rules.table_size
    per_round = rules.hand_size * rules.players
    sizes = [rules.hand_size] * (left // per_round)
    if left % per_round:
        sizes.append(left % per_round // rules.players)
    return sizes


def shuffled_deck(seed: str, deal_index: int) -> list[int]:
    """The deck of deal ``deal_index`` for ``seed``, top card first (see module doc)."""
    words = _words(seed, deal_index)
    deck = list(range(52))
    for i in range(51, 0, -1):
        bound = i + 1
        limit = (1 << 32) - (1 << 32) % bound
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _words(seed: str, deal_index: int) -> Iterator[int]:
    block = 0
    while True:
        digest = hashlib.sha256(f"tablanette/1|{seed}|{deal_index}|{block}".encode()).digest()
        for k in range(0, 32, 4):
            yield int.from_bytes(digest[k : k + 4], "big")
        block += 1


def deal_layout(rules: Rules, seed: str, deal_index: int) -> DealLayout:
    """Deal ``deal_index`` of the match with ``seed`` (dealer rotates from seat 0)."""
    return layout_of_deck(rules, shuffled_deck(seed, deal_index), deal_index % rules.players)


def layout_of_deck(rules: Rules, deck: list[int], dealer: int) -> DealLayout:
    """Deal a shuffled ``deck`` (top card first, all 52) as step 3 of the module doc says.

    The luck estimator deals its sampled decks through this same function, so a
    sample follows exactly the distribution of a real deal.
    """
    n = rules.players
    stock = list(deck)
    order = [(dealer + 1 + k) % n for k in range(n)]
    pos = 0
    rounds: list[tuple[int, ...]] = []
    sizes = round_sizes(rules)
    first = [0] * n
    for s in order:
        first[s] = _mask(stock[pos : pos + sizes[0]])
        pos += sizes[0]
    table = 0
    replace = rules.initial_table_jacks == "replace"
    for _ in range(rules.table_size):
        card = stock.pop(pos)
        tries = len(stock) - pos
        while replace and card >> 2 == JACK and tries > 0:
            stock.append(card)
            card = stock.pop(pos)
            tries -= 1
        table |= 1 << card
    rounds.append(tuple(first))
    for size in sizes[1:]:
        hands = [0] * n
        for s in order:
            hands[s] = _mask(stock[pos : pos + size])
            pos += size
        rounds.append(tuple(hands))
    return DealLayout(dealer, table, tuple(rounds))


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m
