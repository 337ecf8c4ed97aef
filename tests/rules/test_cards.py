"""Cards: the 52 canonical names, the accepted spellings, card sets and plays (docs/rules.md "Cards")."""

from __future__ import annotations

import pytest

from engine_service.rules import (
    CARDS,
    FULL_DECK,
    Card,
    InvalidCardError,
    Play,
    card_names,
    cards_of,
    format_cards,
    iter_mask,
    mask_of,
    parse_cards,
)

RANKS = "A23456789TJQK"
SUITS = "CDHS"
ALL_NAMES = [r + s for r in RANKS for s in SUITS]


def test_there_are_52_distinct_cards_in_rank_then_suit_order() -> None:
    assert len(CARDS) == 52
    assert [str(c) for c in CARDS] == ALL_NAMES
    assert [int(c) for c in CARDS] == list(range(52))
    assert FULL_DECK == (1 << 52) - 1


@pytest.mark.parametrize("name", ALL_NAMES)
def test_parse_format_round_trip(name: str) -> None:
    card = Card.parse(name)
    assert str(card) == name
    assert Card.parse(str(card)) == card
    assert RANKS[card.rank] + SUITS[card.suit] == name
    assert card.bit == 1 << int(card)
    assert eval(repr(card), {"Card": Card}) == card


@pytest.mark.parametrize("name", ALL_NAMES)
def test_lower_case_and_ten_spellings_are_accepted(name: str) -> None:
    card = Card.parse(name)
    assert Card.parse(name.lower()) == card
    assert Card.parse(f"  {name} ") == card
    if name[0] == "T":
        assert Card.parse("10" + name[1]) == card
        assert Card.parse("10" + name[1].lower()) == card


def test_accepted_spellings_print_canonically() -> None:
    assert str(Card.parse("10D")) == "TD"
    assert str(Card.parse("td")) == "TD"
    assert str(Card.parse("qs")) == "QS"
    assert format_cards(parse_cards("10d, ah 2C")) == "TD AH 2C"


@pytest.mark.parametrize("bad", ["", "T", "1D", "11D", "ZD", "TX", "TDX", "D10", "10", "AH AS", "joker"])
def test_invalid_card_error_names_the_input(bad: str) -> None:
    with pytest.raises(InvalidCardError) as info:
        Card.parse(bad)
    assert repr(bad) in str(info.value)
    assert "is not a card" in str(info.value)


@pytest.mark.parametrize("bad", [None, 10, 3.5, ["TD"]])
def test_non_string_card_is_refused_with_its_value(bad: object) -> None:
    with pytest.raises(InvalidCardError) as info:
        Card.parse(bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value)


def test_invalid_card_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Card.parse("XX")


def test_lowest_card_order_is_ace_to_king_then_clubs_diamonds_hearts_spades() -> None:
    order = sorted(ALL_NAMES, key=lambda n: int(Card.parse(n)))
    assert order[:5] == ["AC", "AD", "AH", "AS", "2C"]
    assert order[-4:] == ["KC", "KD", "KH", "KS"]
    assert Card.parse("AS") < Card.parse("2C") < Card.parse("2D") < Card.parse("KC")


def test_masks_iterate_ascending_and_round_trip() -> None:
    cards = parse_cards("QS AH 3S TD 2C")
    mask = mask_of(cards)
    assert format_cards(mask) == "AH 2C 3S TD QS"
    assert card_names(mask) == ["AH", "2C", "3S", "TD", "QS"]
    assert [str(c) for c in cards_of(mask)] == card_names(mask)
    assert list(iter_mask(mask)) == sorted(int(c) for c in cards)
    assert list(iter_mask(FULL_DECK)) == list(range(52))
    assert card_names(0) == []


def test_a_repeated_card_in_a_set_is_refused() -> None:
    with pytest.raises(InvalidCardError, match="AH appears twice"):
        mask_of(parse_cards("AH 3S ah"))


def test_parse_cards_accepts_a_list_and_reports_the_bad_item() -> None:
    assert parse_cards(["td", "10h"]) == (Card.parse("TD"), Card.parse("TH"))
    with pytest.raises(InvalidCardError, match="'1H'"):
        parse_cards("TD 1H")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("9c: 8h ah", "9C:AH,8H"), ("9C:AH,8H", "9C:AH,8H"), ("5c", "5C"), ("10d:5h,5s", "TD:5H,5S")],
)
def test_play_strings_are_canonical_and_round_trip(text: str, canonical: str) -> None:
    play = Play.parse(text)
    assert str(play) == canonical
    assert Play.parse(str(play)) == play
    assert play.is_trail == (":" not in canonical)


def test_play_cannot_capture_its_own_card() -> None:
    with pytest.raises(InvalidCardError, match="cannot capture the card it plays"):
        Play.parse("9C:9C")
