"""Cards, card sets and their canonical notation.

A card is a small ``int`` (0..51) with a canonical two-character name: rank
``A 2 3 4 5 6 7 8 9 T J Q K`` followed by suit ``C D H S``. The number is
``rank * 4 + suit``, so the natural integer order *is* the order docs/rules.md uses
for "lowest card" (Ace lowest, King highest, then clubs < diamonds < hearts <
spades). Sets of cards (a hand, the table, a pile) are 52-bit masks, which keeps
the whole state of a deal a handful of integers: cheap to copy for search.

>>> Card.parse("td")
Card.parse('TD')
>>> str(Card.parse("10D")), Card.parse("2C").rank, Card.parse("2C").suit
('TD', 1, 0)
>>> format_cards(mask_of(parse_cards("QS AH 3S")))
'AH 3S QS'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .errors import InvalidCardError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
ACE, JACK, QUEEN, KING = 0, 10, 11, 12
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
DECK_SIZE = 52
FULL_DECK = (1 << DECK_SIZE) - 1


class Card(int):
    """One of the 52 cards. Use :meth:`parse` or :data:`CARDS`; never ``Card(n)``."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        """0 for Ace, 1..9 for 2..10, 10 Jack, 11 Queen, 12 King."""
        return int(self) >> 2

    @property
    def suit(self) -> int:
        """0 clubs, 1 diamonds, 2 hearts, 3 spades."""
        return int(self) & 3

    @property
    def bit(self) -> int:
        """This card as a one-card mask."""
        return 1 << int(self)

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``TD``, ``10D``, ``td`` or ``10d``; raise :class:`InvalidCardError`."""
        return CARDS[card_index(text)]

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card.parse({_NAMES[self]!r})"

    def __format__(self, spec: str) -> str:
        return format(_NAMES[self], spec)


def card_index(text: str) -> int:
    """The number of the card named ``text`` (accepts ``10`` for ``T``, any case)."""
    if not isinstance(text, str):
        raise InvalidCardError(f"a card must be a string like 'TD', not {text!r}")
    exact = _INDEX.get(text)  # the canonical form every API sends: no normalising needed
    if exact is not None:
        return exact
    name = text.strip().upper()
    if name.startswith("10"):
        name = "T" + name[2:]
    if len(name) != 2 or name[0] not in RANKS or name[1] not in SUITS:
        raise InvalidCardError(
            f"{text!r} is not a card: expected rank {' '.join(RANKS)} (or 10) "
            f"followed by suit {' '.join(SUITS)}, e.g. 'TD' or '2C'"
        )
    return RANKS.index(name[0]) * 4 + SUITS.index(name[1])


_NAMES = tuple(r + s for r in RANKS for s in SUITS)
_INDEX = {name: i for i, name in enumerate(_NAMES)}
CARDS: tuple[Card, ...] = tuple(int.__new__(Card, i) for i in range(DECK_SIZE))
"""Every card, indexed by its number."""

# Lookup tables for iterating masks quickly: the cards of every 8-bit chunk.
_CHUNK_CARDS: tuple[tuple[int, ...], ...] = tuple(tuple(i for i in range(8) if b >> i & 1) for b in range(256))


def iter_mask(mask: int) -> Iterator[int]:
    """Card numbers in ``mask``, ascending."""
    base = 0
    while mask:
        chunk = mask & 0xFF
        if chunk:
            for i in _CHUNK_CARDS[chunk]:
                yield base + i
        mask >>= 8
        base += 8


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask, ascending."""
    return tuple(CARDS[i] for i in iter_mask(mask))


def mask_of(cards: Iterable[int]) -> int:
    """The mask of some cards; raises on a repeated card."""
    mask = 0
    for c in cards:
        bit = 1 << int(c)
        if mask & bit:
            raise InvalidCardError(f"card {CARDS[int(c)]} appears twice")
        mask |= bit
    return mask


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse ``"AH 3S 6D"`` (spaces or commas) or a list of card strings."""
    if isinstance(text, str):
        parts: Iterable[str] = text.replace(",", " ").split()
    else:
        parts = text
    return tuple(Card.parse(p) for p in parts)


def format_cards(cards: Iterable[int] | int) -> str:
    """Canonical space-separated names; an ``int`` argument is read as a mask."""
    if isinstance(cards, int):
        cards = iter_mask(cards)
    return " ".join(_NAMES[c] for c in cards)


def card_names(mask: int) -> list[str]:
    """Canonical names of the cards of a mask, ascending (the record's form)."""
    return [_NAMES[c] for c in iter_mask(mask)]


def popcount(mask: int) -> int:
    """Number of cards in a mask."""
    return mask.bit_count()
