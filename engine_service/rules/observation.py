"""What one seat may see: the only view of a match a bot ever gets.

An :class:`Observation` holds the seat's own hand, the table, every play of the
deal so far (public: everybody saw them), each team's captured pile, the scores,
how many cards each seat holds and how many are still to be dealt, and the cards
this seat has not seen. It never holds another seat's hand or the stock order.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import FULL_DECK, Card, cards_of
from .deal import PlayRecord
from .play import Play
from .rules import Rules


@dataclass(frozen=True)
class Observation:
    """One seat's view at its turn (or any time); all card sets are masks."""

    rules: Rules
    seat: int
    turn: int
    deal_index: int
    dealer: int
    round: int
    rounds_left: int
    hand: int
    table: int
    piles: tuple[int, ...]
    hand_counts: tuple[int, ...]
    plays: tuple[PlayRecord, ...]
    deal_bonus: tuple[int, ...]
    scores: tuple[int, ...]
    """Match totals per team before this deal."""
    legal_plays: tuple[Play, ...]
    """The legal plays if it is this seat's turn, else empty."""

    @property
    def team(self) -> int:
        return self.rules.team_of(self.seat)

    @property
    def hand_cards(self) -> tuple[Card, ...]:
        return cards_of(self.hand)

    @property
    def table_cards(self) -> tuple[Card, ...]:
        return cards_of(self.table)

    @property
    def unseen(self) -> int:
        """Cards this seat has not seen: other hands and the stock, as a mask."""
        seen = self.hand | self.table
        for pile in self.piles:
            seen |= pile
        return FULL_DECK & ~seen

    @property
    def stock_count(self) -> int:
        """Cards still to be dealt in later rounds of this deal."""
        return self.unseen.bit_count() - sum(c for s, c in enumerate(self.hand_counts) if s != self.seat)

    @property
    def is_last_play_of_deal(self) -> bool:
        return self.rounds_left == 0 and sum(self.hand_counts) == 1
