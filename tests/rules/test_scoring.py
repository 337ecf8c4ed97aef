"""Scoring: card points, most cards (strictly, and its tie rules), most of a suit, partnerships."""

from __future__ import annotations

import random
from typing import Any

import pytest
from rules_testkit import build_layout, m, oracle_score, run_script

from engine_service.rules import FULL_DECK, DealState, Rules, score_piles

NO_MOST = {"most_cards": 0}


def first(n: int, exclude: int = 0) -> int:
    """A pile of ``n`` cards not in ``exclude``: first the 3s to 9s (no points in any preset), then the rest."""
    order = [r + s for r in "3456789A2TJQK" for s in "CDHS"]
    chosen = [c for c in order if not m(c) & exclude][:n]
    assert len(chosen) == n
    return m(" ".join(chosen))


@pytest.mark.parametrize(
    ("preset", "pile", "points"),
    [
        ("tablic", "TD 2C AC AD AH AS", 3 + 2 + 4),
        ("tablic", "TC 2D KS QS JS", 0),
        ("tablanette-1939", "TD 2C", 2 + 1),
        ("tablanette-1939", "AC KD QH JS TC", 5),
        ("tablanette-1939", "AC AD AH AS KC KD KH KS QC QD QH QS JC JD JH JS TC TD TH TS 2C", 16 + 5 + 1),
        ("tablic-pagat", "TD 2C AS", 2 + 1 + 1),
        ("tablanette-ro", "TD 2S 2C AH", 2 + 1 + 0 + 1),
        ("pisti", "TD 2C AH JS JD 2S", 3 + 2 + 1 + 1 + 1),
    ],
)
def test_card_points_per_preset(preset: str, pile: str, points: int) -> None:
    rules = Rules.preset(preset).with_overrides({**NO_MOST, "most_suit": {}})
    assert score_piles(rules, [m(pile), 0], [0, 0]) == [points, 0]


@pytest.mark.parametrize("preset", ["tablic", "tablanette-1939", "tablic-pagat", "tablanette-ro", "pisti"])
def test_a_whole_deck_is_worth_the_presets_card_points(preset: str) -> None:
    rules = Rules.preset(preset).with_overrides({**NO_MOST, "most_suit": {}})
    totals = {"tablic": 9, "tablanette-1939": 22, "tablic-pagat": 22, "tablanette-ro": 7, "pisti": 13}
    assert score_piles(rules, [FULL_DECK, 0], [0, 0]) == [totals[preset], 0]


def test_most_cards_goes_to_the_strictly_largest_pile() -> None:
    rules = Rules.preset("tablic", card_points={})
    a = first(27)
    assert score_piles(rules, [a, FULL_DECK & ~a], [0, 0]) == [3, 0]
    b = first(25)
    assert score_piles(rules, [b, FULL_DECK & ~b], [0, 0]) == [0, 3]


@pytest.mark.parametrize(("tie", "expected"), [("none", [0, 0]), ("all_tied", [3, 3])])
def test_most_cards_tie_two_players(tie: str, expected: list[int]) -> None:
    rules = Rules.preset("tablic", card_points={}, most_cards_tie=tie)
    a = first(26)
    assert score_piles(rules, [a, FULL_DECK & ~a], [0, 0]) == expected


@pytest.mark.parametrize(("tie", "expected"), [("none", [0, 0, 0]), ("all_tied", [3, 3, 0])])
def test_most_cards_tie_three_players_only_the_leaders_share(tie: str, expected: list[int]) -> None:
    rules = Rules.preset("tablic", players=3, card_points={}, most_cards_tie=tie)
    a = first(20)
    b = first(20, exclude=a)
    c = FULL_DECK & ~a & ~b
    assert c.bit_count() == 12
    assert score_piles(rules, [a, b, c], [0, 0, 0]) == expected


def test_a_tie_below_the_top_does_not_matter() -> None:
    rules = Rules.preset("tablic", players=3, card_points={})
    a = first(22)
    b = first(15, exclude=a)
    c = FULL_DECK & ~a & ~b
    assert score_piles(rules, [a, b, c], [0, 0, 0]) == [3, 0, 0]


def test_most_suit_romanian_diamonds() -> None:
    rules = Rules.preset("tablanette-ro", card_points={}, most_cards=0)
    diamonds = m("AD 2D 3D 4D 5D 6D 7D")
    others = m("8D 9D TD JD QD KD")
    assert score_piles(rules, [diamonds, others], [0, 0]) == [1, 0]
    assert score_piles(rules, [others | m("AC"), diamonds], [0, 0]) == [0, 1]
    # A tie scores nothing, whatever most_cards_tie says.
    tied = Rules.preset("tablanette-ro", card_points={}, most_cards=0, most_cards_tie="all_tied")
    half = m("AD 2D 3D")
    assert score_piles(tied, [half, m("4D 5D 6D")], [0, 0]) == [0, 0]


def test_most_suit_with_several_suits() -> None:
    rules = Rules.preset("tablic", card_points={}, most_cards=0, most_suit={"S": 2, "H": 1})
    assert score_piles(rules, [m("AS 2S AH"), m("3S 2H 3H")], [0, 0]) == [2, 1]


def test_bonus_is_added_to_the_deal_score() -> None:
    rules = Rules.preset("tablic")
    a = first(27)
    # 27 cards of no points + 3 tablas vs the rest: TD 3, 2C 2, four Aces 4.
    assert score_piles(rules, [a, FULL_DECK & ~a], [3, 1]) == [3 + 3, 1 + 9]


def test_negative_card_points_are_allowed() -> None:
    rules = Rules.preset("tablic", card_points={"QS": -5, "TD": 3}, most_cards=0)
    assert score_piles(rules, [m("QS TD"), m("2C")], [0, 0]) == [-2, 0]


@pytest.mark.parametrize(
    ("preset", "players", "overrides"),
    [
        ("tablic", 2, {}),
        ("tablic", 3, {"most_cards_tie": "all_tied"}),
        ("tablanette-ro", 4, {}),
        ("tablanette-ro", 3, {"most_suit": {"D": 1, "S": 2}}),
        ("pisti", 2, {}),
        ("tablanette-1939", 3, {}),
    ],
)
def test_engine_scoring_equals_an_independent_oracle(preset: str, players: int, overrides: dict[str, Any]) -> None:
    rules = Rules.preset(preset, players=players, **overrides)
    rng = random.Random(f"{preset}{players}")
    for _ in range(200):
        owner = [rng.randrange(players + 1) for _ in range(52)]  # players + 1: nobody's
        piles = [sum(1 << c for c in range(52) if owner[c] == t) for t in range(players)]
        bonus = [rng.randrange(4) for _ in range(players)]
        assert score_piles(rules, piles, bonus) == oracle_score(rules, piles, bonus)


def test_partnerships_pool_their_piles_and_score_together() -> None:
    """Seats 0 and 2 capture into one pile; the deal score has one entry per team."""
    rules = Rules.preset("tablic", players=4, jack=11)  # a numeric Jack: every filler trails
    layout = build_layout(rules, "2C 7D 4H 5S", {0: "9C", 2: "5C"})
    deal = DealState(rules, layout)
    run_script(deal, {0: "9C:2C,7D", 2: "5C:5S"}, stop=3)
    assert [p.seat for p in deal.plays] == [0, 1, 2]
    assert deal.piles == [m("9C 2C 7D 5C 5S"), 0]
    run_script(deal, {})
    assert deal.over and deal.leftover_team == 0  # seat 2 captured last
    assert deal.piles == [FULL_DECK, 0]
    assert deal.score() == [9 + 3, 0]  # every card point and most cards, for the partnership
