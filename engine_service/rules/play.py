"""A play: one card from the hand and the table cards it captures.

Its canonical string is the card, then ``:`` and the captured cards (ascending),
or the card alone for a trail. ``Play.parse(str(p)) == p`` always holds.

>>> p = Play.parse("9c: 8h ah")
>>> p, str(p), p.is_trail
(Play.parse('9C:AH,8H'), '9C:AH,8H', False)
>>> Play.parse("5C").is_trail
True
"""

from __future__ import annotations

from typing import NamedTuple

from .cards import CARDS, Card, cards_of, format_cards, mask_of, parse_cards
from .errors import InvalidCardError


class Play(NamedTuple):
    """``card`` played, capturing the cards of ``mask`` (0 for a trail)."""

    card: Card
    mask: int

    @classmethod
    def of(cls, card: int | str, captured: str | list[str] | tuple[int, ...] = ()) -> Play:
        """Build from a card and captured cards, each as names or numbers."""
        c = CARDS[int(card)] if isinstance(card, int) else Card.parse(card)
        if isinstance(captured, str):
            cap = mask_of(parse_cards(captured))
        else:
            cap = mask_of(Card.parse(x) if isinstance(x, str) else CARDS[int(x)] for x in captured)
        if cap & c.bit:
            raise InvalidCardError(f"play of {c} cannot capture the card it plays")
        return cls(c, cap)

    @classmethod
    def parse(cls, text: str) -> Play:
        """Parse ``'9C:AH,8H'`` (also ``'9C: AH 8H'``) or ``'5C'``."""
        card, _, captured = text.partition(":")
        return cls.of(card.strip(), captured)

    @property
    def captured(self) -> tuple[Card, ...]:
        return cards_of(self.mask)

    @property
    def is_trail(self) -> bool:
        return self.mask == 0

    def __str__(self) -> str:
        if not self.mask:
            return str(self.card)
        return f"{self.card}:" + format_cards(self.mask).replace(" ", ",")

    def __repr__(self) -> str:
        return f"Play.parse({str(self)!r})"
