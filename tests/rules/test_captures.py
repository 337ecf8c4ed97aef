"""Captures: the worked examples of docs/rules.md and hand-solved positions for every preset.

Each case is (preset, table, played card, the legal plays of that card in
canonical order). A play is written ``card:captured`` or just ``card`` for a
trail; canonical order is the trail first (when legal), then fewer captured
cards first, then lexicographic by card number (A..K, then C<D<H<S).
"""

from __future__ import annotations

from typing import Any

import pytest
from rules_testkit import m, names, plays_of, position

from engine_service.rules import CaptureFinder, Card, Rules
from engine_service.rules.reference import naive_captures

PAGAT_TABLE = "AH 3S 6D 7C 8H QS"


# --------------------------------------------------------- docs/rules.md worked examples


def test_worked_example_6c_takes_only_the_six() -> None:
    deal = position("tablic-pagat", PAGAT_TABLE)
    assert plays_of(deal, "6C") == ["6C", "6C:6D"]


def test_worked_example_9c_takes_either_pair_or_both_at_once() -> None:
    deal = position("tablic-pagat", PAGAT_TABLE)
    assert plays_of(deal, "9C") == ["9C", "9C:AH,8H", "9C:3S,6D", "9C:AH,3S,6D,8H"]


def test_worked_example_tc_takes_either_group_never_both() -> None:
    deal = position("tablic-pagat", PAGAT_TABLE)
    assert plays_of(deal, "TC") == ["TC", "TC:3S,7C", "TC:AH,3S,6D"]
    # The two groups share 3S, so their union is not a capture.
    assert "TC:AH,3S,6D,7C" not in plays_of(deal, "TC")


def test_worked_example_kc_has_exactly_six_capture_sets() -> None:
    deal = position("tablic-pagat", PAGAT_TABLE)
    captures = plays_of(deal, "KC")[1:]
    assert captures == [
        "KC:AH,3S",  # 11 + 3
        "KC:AH,QS",  # 1 + 13
        "KC:6D,8H",  # 6 + 8
        "KC:AH,6D,7C",  # 1 + 6 + 7
        "KC:AH,3S,6D,8H",  # (11 + 3) + (6 + 8)
        "KC:AH,6D,8H,QS",  # (1 + 13) + (6 + 8)
    ]
    assert len(captures) == 6


def test_worked_example_5c_captures_nothing() -> None:
    deal = position("tablic-pagat", PAGAT_TABLE)
    assert plays_of(deal, "5C") == ["5C"]


def test_worked_example_9c_on_2h_3s_4d_7c() -> None:
    deal = position("tablic-pagat", "2H 3S 4D 7C")
    assert plays_of(deal, "9C") == ["9C", "9C:2H,7C", "9C:2H,3S,4D"]


def test_worked_example_numeric_jack_takes_two_aces_as_11_plus_1() -> None:
    deal = position("tablic-pagat", "AH AS")
    assert plays_of(deal, "JC") == ["JC", "JC:AH,AS"]


def test_worked_examples_agree_with_the_naive_oracle() -> None:
    rules = Rules.preset("tablic-pagat")
    finder = CaptureFinder(rules)
    for table, played in [
        (PAGAT_TABLE, "6C 9C TC KC 5C AC 2C QC JC"),
        ("2H 3S 4D 7C", "9C"),
        ("AH AS", "JC 2C QC"),
    ]:
        for card in played.split():
            fast = [c.mask for c in finder.captures(m(table), Card.parse(card))]
            assert fast == naive_captures(rules, m(table), Card.parse(card)), (table, card)


# --------------------------------------------------------- hand-solved, per preset

CASES: list[tuple[str, str, str, list[str], dict[str, Any]]] = [
    # tablic: Q and K capture only by rank (face_sums false); sums of A-10; one group per play.
    ("tablic", "5C 7D QH KS", "QC", ["QC", "QC:QH"], {}),
    ("tablic", "5C 7D QH KS", "KC", ["KC", "KC:KS"], {}),
    ("tablic", "5C 7D 2H TS", "QC", ["QC"], {}),  # 5 + 7 = 12, but a Queen does not sum
    ("tablic", "QH KD 2C 3S", "5C", ["5C", "5C:2C,3S"], {}),
    ("tablic", "2C 7D 4H 5S", "9C", ["9C", "9C:2C,7D", "9C:4H,5S"], {}),  # never both at once
    ("tablic", "AD 3C 6H 9S", "TC", ["TC", "TC:AD,9S", "TC:AD,3C,6H"], {}),  # the Ace is 1
    ("tablic", "AD 3C 6H 9S", "AC", ["AC", "AC:AD"], {}),
    ("tablic", "AD 3C 6H 9S", "4C", ["4C", "4C:AD,3C"], {}),
    ("tablic", "AD 2C 3H 4S", "TC", ["TC", "TC:AD,2C,3H,4S"], {}),
    # tablic with capture_optional=false: no trail when the card can capture.
    ("tablic", "2C 7D 4H 5S", "9C", ["9C:2C,7D", "9C:4H,5S"], {"capture_optional": False}),
    ("tablic", "2C 7D 4H 5S", "8C", ["8C"], {"capture_optional": False}),
    # tablic with multi_capture=true: the union of disjoint groups joins the list.
    ("tablic", "2C 7D 4H 5S", "9C", ["9C", "9C:2C,7D", "9C:4H,5S", "9C:2C,4H,5S,7D"], {"multi_capture": True}),
    # tablanette-1939: Ace 1 or 11 (played or inside a sum), Q 13, K 14, multi-capture unions.
    ("tablanette-1939", "5C 6D 2H 9S", "AC", ["AC", "AC:2H,9S", "AC:5C,6D", "AC:2H,5C,6D,9S"], {}),
    ("tablanette-1939", "AH 2C 8D 4S", "QC", ["QC", "QC:AH,2C", "QC:AH,4S,8D"], {}),  # 11+2 / 1+4+8
    ("tablanette-1939", "2C 3D 5H 4S", "7C", ["7C", "7C:2C,5H", "7C:3D,4S", "7C:2C,3D,4S,5H"], {}),
    ("tablanette-1939", "QH AS 6C 7D", "KC", ["KC", "KC:AS,QH", "KC:AS,6C,7D"], {}),  # Q inside a sum
    ("tablanette-1939", "KH 6C 8D 2S", "KC", ["KC", "KC:KH", "KC:6C,8D", "KC:6C,8D,KH"], {}),
    ("tablanette-1939", "6C 7D 9H 4S", "QC", ["QC", "QC:4S,9H", "QC:6C,7D", "QC:4S,6C,7D,9H"], {}),
    ("tablanette-1939", "AD AH 9S 2C", "JC", ["JC:AD,AH,2C,9S"], {}),  # the Jack still sweeps
    # tablanette-ro: rank priority, mandatory capture, Q and K capture sums (face_sums true).
    ("tablanette-ro", "5H 2C 3D 9S", "5C", ["5C:5H"], {}),  # not 2 + 3: rank priority
    ("tablanette-ro", "2C 3D 9S KH", "5C", ["5C:2C,3D"], {}),  # must capture: no trail
    ("tablanette-ro", "5C 7D 3H 9S", "QC", ["QC:3H,9S", "QC:5C,7D"], {}),  # Queen = 12 by sum
    ("tablanette-ro", "KD 6C 7H 2S", "KC", ["KC:KD"], {}),  # not 6 + 7
    ("tablanette-ro", "6C 7H 2S 3D", "KC", ["KC:6C,7H"], {}),  # King = 13 by sum
    ("tablanette-ro", "2C 3D 9S KH", "4H", ["4H"], {}),  # nothing to take: trail
    ("tablanette-ro", "AD 9S 4C 6H", "TC", ["TC:AD,9S", "TC:4C,6H"], {}),  # one group only
    ("tablanette-ro", "AD 9S 4C 6H", "AC", ["AC:AD"], {}),
    ("tablanette-ro", "9C 5D 2H 3S", "AC", ["AC"], {}),
    ("tablanette-ro", "9C 5D 2H 3S", "AC", ["AC:5D,9C", "AC:2H,3S,9C"], {"ace_values": [1, 14]}),
    # pisti: rank match only, rank priority, mandatory capture, Jack sweeps.
    ("pisti", "5H 2C 3D 9S", "5C", ["5C:5H"], {}),
    ("pisti", "5H 2C 3D 9S", "7C", ["7C"], {}),  # 2 + 5 is not a capture: no sums
    ("pisti", "5H 5D 2C 9S", "5C", ["5C:5D", "5C:5H"], {}),  # one card of the rank, either one
    ("pisti", "QH 5C 7D 2S", "QC", ["QC:QH"], {}),
    ("pisti", "5H 2C 3D 9S", "JC", ["JC:2C,3D,5H,9S"], {}),
    ("pisti", "JH 2C 3D 9S", "JC", ["JC:2C,3D,9S,JH"], {}),
    # tablic-pagat: the numeric Jack (12) captures by rank and by sum, in unions.
    ("tablic-pagat", "JD 5C 7H 2S", "JC", ["JC", "JC:JD", "JC:5C,7H", "JC:5C,7H,JD"], {}),
]


@pytest.mark.parametrize(
    ("preset", "table", "card", "expected", "overrides"),
    CASES,
    ids=[f"{c[0]}-{c[1].replace(' ', '')}-{c[2]}{'-variant' if c[4] else ''}" for c in CASES],
)
def test_hand_solved_positions(
    preset: str, table: str, card: str, expected: list[str], overrides: dict[str, Any]
) -> None:
    deal = position(preset, table, **overrides)
    assert plays_of(deal, card) == expected
    # The oracle agrees on the capture sets (sweeping Jacks aside).
    rules = deal.rules
    if not (card[0] == "J" and rules.jack_sweeps):
        got = [str(p).partition(":")[2].replace(",", " ") for p in deal.plays_for_card(Card.parse(card))]
        oracle = [names(x) for x in naive_captures(rules, m(table), Card.parse(card))]
        assert [g for g in got if g] == oracle


# --------------------------------------------------------- Jack sweeps


@pytest.mark.parametrize("preset", ["tablic", "tablanette-1939", "tablanette-ro", "pisti"])
def test_sweeping_jack_takes_the_whole_table_and_nothing_less(preset: str) -> None:
    deal = position(preset, "2C 5D 9H KS")
    # No trail and no partial capture, even where captures are optional.
    assert plays_of(deal, "JC") == ["JC:2C,5D,9H,KS"]
    assert plays_of(deal, "JS") == ["JS:2C,5D,9H,KS"]


@pytest.mark.parametrize("preset", ["tablic", "tablanette-1939", "tablanette-ro", "pisti"])
def test_sweeping_jack_on_an_empty_table_is_a_trail(preset: str) -> None:
    deal = position(preset, "")
    assert plays_of(deal, "JC") == ["JC"]
    assert deal.plays_for_card(Card.parse("JC"))[0].is_trail


def test_numeric_jack_does_not_sweep() -> None:
    deal = position("tablic-pagat", "2C 5D 9H KS")
    assert plays_of(deal, "JC") == ["JC"]


# --------------------------------------------------------- canonical order of a whole hand


def test_legal_plays_of_a_hand_in_canonical_order() -> None:
    deal = position("tablic", "2C 7D 4H 5S", hand="9C AS 5D JH KC QD")
    assert names(deal.hands[0]) == "AS 5D 9C JH QD KC"
    assert [str(p) for p in deal.legal_plays()] == [
        "AS",
        "5D",
        "5D:5S",
        "9C",
        "9C:2C,7D",
        "9C:4H,5S",
        "JH:2C,4H,5S,7D",
        "QD",
        "KC",
    ]


def test_legal_plays_of_a_hand_with_mandatory_capture() -> None:
    deal = position("tablanette-ro", "5H 2C 3D 9S", hand="2S 5C JD KH")
    assert [str(p) for p in deal.legal_plays()] == ["2S:2C", "5C:5H", "JD:2C,3D,5H,9S", "KH"]


def test_capture_values_and_totals_for_tabla_scoring() -> None:
    finder = CaptureFinder(Rules.preset("tablanette-1939"))
    got = [(names(c.mask), c.value, c.total) for c in finder.captures(m("5C 6D 2H 9S"), Card.parse("AC"))]
    # The Ace counts 11 here; a union of two groups is worth (2 + 1) * 11.
    assert got == [("2H 9S", 11, 22), ("5C 6D", 11, 22), ("2H 5C 6D 9S", 11, 33)]
    got = [(names(c.mask), c.value, c.total) for c in finder.captures(m("2C 3D 5H 4S"), Card.parse("7C"))]
    assert got == [("2C 5H", 7, 14), ("3D 4S", 7, 14), ("2C 3D 4S 5H", 7, 21)]


def test_suits_never_matter_to_a_capture() -> None:
    finder = CaptureFinder(Rules.preset("tablic-pagat"))
    a = [names(c.mask) for c in finder.captures(m("AH 3S 6D 8H"), Card.parse("9C"))]
    b = [names(c.mask) for c in finder.captures(m("AC 3D 6H 8S"), Card.parse("9S"))]
    assert a == ["AH 8H", "3S 6D", "AH 3S 6D 8H"]
    assert b == ["AC 8S", "3D 6H", "AC 3D 6H 8S"]


def test_a_lone_card_of_another_rank_but_equal_value_is_a_group() -> None:
    """With jack=13 beside a 13-point Queen, a Queen takes a Jack alone, and 5+8 (the cache must see both)."""
    rules = Rules.preset("tablic-pagat", jack=13)
    table = m("JH 5S 8D")
    found = [names(c.mask) for c in CaptureFinder(rules).captures(table, Card.parse("QC"))]
    assert found == ["JH", "5S 8D", "5S 8D JH"]
    assert [c.mask for c in CaptureFinder(rules).captures(table, Card.parse("QC"))] == naive_captures(
        rules, table, Card.parse("QC")
    )
