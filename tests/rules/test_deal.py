"""Deals: dealing, sweep and pişti bonuses, leftovers, the timeout play and refused plays.

Positions are built by hand as whole 52-card :class:`DealLayout` objects (see
``rules_testkit.build_layout``): the cards a test cares about are placed
explicitly and the rest are fillers, which the scripted runs trail.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from rules_testkit import (
    PRESET_PLAYERS,
    build_layout,
    m,
    names,
    position,
    run_script,
    snapshot,
    stock_mask,
)

from engine_service.rules import (
    FULL_DECK,
    Card,
    DealLayout,
    DealState,
    GameOverError,
    IllegalPlayError,
    Play,
    RecordError,
    Rules,
    deal_layout,
    round_sizes,
    shuffled_deck,
)

# ------------------------------------------------------------------ dealing


@pytest.mark.parametrize(
    ("preset", "players", "sizes"),
    [
        ("tablic", 2, [6, 6, 6, 6]),
        ("tablic", 3, [6, 6, 4]),  # the final round splits what is left evenly
        ("tablic", 4, [6, 6]),
        ("tablanette-1939", 2, [6, 6, 6, 6]),
        ("tablanette-1939", 3, [4, 4, 4, 4]),
        ("tablic-pagat", 2, [6, 6, 6, 6]),
        ("tablic-pagat", 4, [6, 6]),
        ("tablanette-ro", 2, [4] * 6),
        ("tablanette-ro", 3, [4] * 4),
        ("tablanette-ro", 4, [4] * 3),
        ("pisti", 2, [4] * 6),
        ("pisti", 3, [4] * 4),
        ("pisti", 4, [4] * 3),
    ],
)
def test_round_sizes_use_the_whole_deck(preset: str, players: int, sizes: list[int]) -> None:
    rules = Rules.preset(preset, players=players)
    assert round_sizes(rules) == sizes
    assert sum(sizes) * players + rules.table_size == 52


def _spec_shuffle(seed: str, k: int) -> list[int]:
    """The shuffle exactly as the shuffle module's docstring specifies it, written independently."""
    words: list[int] = []
    block = 0
    deck = list(range(52))
    for i in range(51, 0, -1):
        while True:
            if not words:
                digest = hashlib.sha256(f"tablanette/1|{seed}|{k}|{block}".encode()).digest()
                words = [int.from_bytes(digest[j : j + 4], "big") for j in range(0, 32, 4)]
                block += 1
            w = words.pop(0)
            if w < 2**32 - 2**32 % (i + 1):
                break
        j = w % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _spec_deal(rules: Rules, seed: str, k: int) -> tuple[int, int, list[list[int]]]:
    """Deal k as the module docstring specifies: hands in play order, then the table, then rounds."""
    n = rules.players
    dealer = k % n
    stock = _spec_shuffle(seed, k)
    order = [(dealer + 1 + i) % n for i in range(n)]
    sizes = round_sizes(rules)
    rounds = [[0] * n for _ in sizes]
    for s in order:
        for _ in range(sizes[0]):
            rounds[0][s] |= 1 << stock.pop(0)
    table = 0
    for _ in range(rules.table_size):
        card = stock.pop(0)
        while rules.initial_table_jacks == "replace" and card >> 2 == 10 and any(c >> 2 != 10 for c in stock):
            stock.append(card)  # the Jack goes to the bottom of the stock
            card = stock.pop(0)
        table |= 1 << card
    for r, size in enumerate(sizes[1:], 1):
        for s in order:
            for _ in range(size):
                rounds[r][s] |= 1 << stock.pop(0)
    assert not stock
    return dealer, table, rounds


@pytest.mark.parametrize(("preset", "players"), PRESET_PLAYERS)
def test_deal_layout_follows_the_specified_shuffle_and_deal(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players=players)
    for seed in ("alpha", "beta", "γ-seed", ""):
        for k in range(3):
            assert shuffled_deck(seed, k) == _spec_shuffle(seed, k)
            layout = deal_layout(rules, seed, k)
            layout.check(rules)
            dealer, table, rounds = _spec_deal(rules, seed, k)
            assert layout.dealer == dealer == k % players
            assert layout.table == table
            assert [list(r) for r in layout.rounds] == rounds


def test_deal_layout_is_deterministic_per_seed_and_deal() -> None:
    rules = Rules.preset("tablic")
    assert deal_layout(rules, "s", 3) == deal_layout(rules, "s", 3)
    assert deal_layout(rules, "s", 3) != deal_layout(rules, "s", 4)
    assert deal_layout(rules, "s", 3) != deal_layout(rules, "t", 3)
    assert sorted(shuffled_deck("s", 0)) == list(range(52))


def test_initial_table_jacks_replace_and_keep() -> None:
    jacks = m("JC JD JH JS")
    replaced = [deal_layout(Rules.preset("tablic"), f"s{i}", 0) for i in range(200)]
    kept = [deal_layout(Rules.preset("tablic", initial_table_jacks="keep"), f"s{i}", 0) for i in range(200)]
    assert not any(layout.table & jacks for layout in replaced)
    with_jacks = [i for i, layout in enumerate(kept) if layout.table & jacks]
    assert with_jacks, "some of 200 deals put a Jack on the table"
    for i in with_jacks:
        # The replaced Jack went to the bottom of the stock: the last card the dealer receives.
        before, after = kept[i], replaced[i]
        assert after.rounds[0] == before.rounds[0]
        moved = before.table & jacks
        assert after.rounds[-1][after.dealer] & moved == moved


def test_layout_check_refuses_broken_deals() -> None:
    rules = Rules.preset("tablic")
    good = build_layout(rules, "2C 7D 4H 5S")
    with pytest.raises(RecordError, match="dealer 2 is not a seat of 2 players"):
        DealLayout(2, good.table, good.rounds).check(rules)
    with pytest.raises(RecordError, match="the table has 3 cards, the rules deal 4"):
        DealLayout(1, m("2C 7D 4H"), good.rounds).check(rules)
    with pytest.raises(RecordError, match="3 rounds dealt, the rules deal 4"):
        DealLayout(1, good.table, good.rounds[:3]).check(rules)
    twice = (good.rounds[0][0] | m("2C"), *good.rounds[0][1:])
    with pytest.raises(RecordError, match="round 0: seat 0 got 7 cards, not 6"):
        DealLayout(1, good.table, (twice, *good.rounds[1:])).check(rules)


def test_first_player_is_the_seat_after_the_dealer_and_play_goes_in_seat_order() -> None:
    for players in (2, 3, 4):
        rules = Rules.preset("tablic", players=players)
        for dealer in range(players):
            deal = DealState(rules, build_layout(rules, "2C 7D 4H 5S", dealer=dealer))
            seats = []
            for _ in range(2 * players):
                seats.append(deal.turn)
                deal.play(deal.legal_plays()[0])
            assert seats == [(dealer + 1 + i) % players for i in range(2 * players)]


def test_new_rounds_go_to_the_players_only() -> None:
    rules = Rules.preset("tablic")
    deal = DealState(rules, build_layout(rules, "2C 7D 4H 5S"))
    run_script(deal, {}, stop=11)
    table = deal.table
    assert deal.round == 0 and deal.rounds_left == 3
    deal.play(deal.legal_plays()[0])  # the twelfth card trailed: round 0 is over
    assert deal.round == 1
    assert deal.hands == list(deal.layout.rounds[1])
    assert deal.table == table | (1 << deal.plays[-1].card)  # nothing was dealt to the table
    assert deal.turn == 0


# ------------------------------------------------------------------ tabla bonus


@pytest.mark.parametrize(
    ("preset", "table", "play", "tabla_points", "bonus"),
    [
        ("tablic", "AD 2C 3H 4S", "TC:AD,2C,3H,4S", "fixed", 1),
        ("tablic", "AD 2C 3H 4S", "TC:AD,2C,3H,4S", "card_value", 10),
        ("tablic", "AD 2C 3H 4S", "TC:AD,2C,3H,4S", "total_value", 20),  # (1 group + 1) x 10
        ("tablic", "AD 2C 3H 4S", "TC:AD,2C,3H,4S", "none", 0),
        ("tablanette-1939", "AC 9D 3H 7S", "TC:AC,3H,7S,9D", "total_value", 30),  # (2 + 1) x 10
        ("tablanette-1939", "AC 9D 3H 7S", "TC:AC,3H,7S,9D", "card_value", 10),
        ("tablanette-1939", "AC 9D 3H 7S", "TC:AC,3H,7S,9D", "fixed", 1),
        ("tablanette-1939", "5C 6D 2H 9S", "AD:2H,5C,6D,9S", "total_value", 33),  # Ace as 11
        ("tablanette-1939", "5C 6D 2H 9S", "AD:2H,5C,6D,9S", "card_value", 11),
        ("tablic-pagat", "AH AS", "JC:AH,AS", "fixed", 1),
        ("tablic-pagat", "AH AS", "JC:AH,AS", "card_value", 12),
    ],
)
def test_tabla_bonus_per_tabla_points(preset: str, table: str, play: str, tabla_points: str, bonus: int) -> None:
    card = play.split(":")[0]
    deal = position(preset, table, hand=card, tabla_points=tabla_points)
    record = deal.play(Play.parse(play))
    assert deal.table == 0
    assert record.bonus == bonus
    assert deal.bonus == [bonus, 0]
    assert deal.tablas == [1, 0]


@pytest.mark.parametrize(
    ("preset", "overrides", "bonus"),
    [
        ("tablic", {}, 1),  # same + fixed
        ("tablic", {"tabla_points": "card_value"}, 1),  # same + card_value: 1
        ("tablic", {"tabla_points": "none"}, 0),  # same + none
        ("tablic", {"jack_sweep_tabla": "one", "tabla_points": "none"}, 1),
        ("tablic", {"jack_sweep_tabla": "one", "tabla_points": "card_value"}, 1),
        ("tablic", {"jack_sweep_tabla": "none"}, 0),
        ("tablanette-1939", {}, 0),  # the 1939 preset: Jack sweeps score nothing
        ("tablanette-1939", {"jack_sweep_tabla": "one"}, 1),
        ("tablanette-1939", {"jack_sweep_tabla": "same"}, 1),  # a Jack has no value: 1, as for card_value
        ("tablanette-ro", {}, 1),
        ("tablanette-ro", {"jack_sweep_tabla": "none"}, 0),
        ("pisti", {}, 0),
        ("pisti", {"jack_sweep_tabla": "one"}, 1),
    ],
)
def test_jack_sweep_tabla(preset: str, overrides: dict[str, Any], bonus: int) -> None:
    deal = position(preset, "2C 5D 9H KS", hand="JC", **overrides)
    record = deal.play(Play.parse("JC:2C,5D,9H,KS"))
    assert deal.table == 0
    assert record.bonus == bonus
    assert deal.piles[0] == m("2C 5D 9H KS JC")


def test_a_capture_that_leaves_cards_is_no_tabla() -> None:
    deal = position("tablic", "2C 7D 4H 5S", hand="9C")
    record = deal.play(Play.parse("9C:2C,7D"))
    assert record.bonus == 0
    assert deal.tablas == [0, 0]
    assert names(deal.table) == "4H 5S"


def test_a_jack_trailed_on_an_empty_table_scores_nothing() -> None:
    deal = position("tablic", "", hand="JC")
    record = deal.play(Play.parse("JC"))
    assert record.bonus == 0 and record.mask == 0
    assert names(deal.table) == "JC"


# ------------------------------------------------------------------ the deal's last play


def _last_play_deal(**overrides: Any) -> DealState:
    """Tablic, two players, dealer 1: seat 1 makes the deal's last play (play 47).

    Play 45: seat 1 sweeps with JC; play 46: seat 0 trails 5H; play 47: seat 1
    takes the lone 5H with 5S, clearing the table with the deal's very last play.
    The other Jacks are dealt in round 0 so no filler sweeps in the last round.
    """
    rules = Rules.preset("tablic", **overrides)
    layout = build_layout(rules, "2C 7D 4H 5D", {(0, 0): "JD JH JS", (3, 1): "JC 5S", (3, 0): "5H"})
    return run_script(DealState(rules, layout), {45: "JC:*", 46: "5H", 47: "5S:5H"})


def test_last_play_clearing_the_table_scores_no_tabla() -> None:
    deal = _last_play_deal()
    assert deal.over and len(deal.plays) == 48
    jack, trail, last = deal.plays[45:]
    assert (jack.seat, str(jack.play).split(":")[0], jack.bonus) == (1, "JC", 1)  # an ordinary tabla
    assert str(trail.play) == "5H"
    assert (last.seat, str(last.play), last.bonus) == (1, "5S:5H", 0)
    assert deal.table == 0 and deal.leftover == 0 and deal.leftover_team is None


def test_last_play_tabla_true_scores_the_last_sweep() -> None:
    deal = _last_play_deal(last_play_tabla=True)
    assert (str(deal.plays[-1].play), deal.plays[-1].bonus) == ("5S:5H", 1)


@pytest.mark.parametrize(("last_play_tabla", "bonus"), [(False, 0), (True, 1)])
def test_last_play_jack_sweep(last_play_tabla: bool, bonus: int) -> None:
    rules = Rules.preset("tablic", last_play_tabla=last_play_tabla)
    layout = build_layout(rules, "2C 7D 4H 5D", {(0, 0): "JD JH JS", (3, 1): "JC", (3, 0): "5H"})
    deal = run_script(DealState(rules, layout), {46: "5H", 47: "JC:*"})
    last = deal.plays[-1]
    assert deal.over and str(last.play).startswith("JC:") and "5H" in str(last.play)
    assert last.bonus == bonus
    assert deal.table == 0


@pytest.mark.parametrize(("last_play_tabla", "bonus"), [(False, 0), (True, 10)])
def test_pisti_with_the_last_play_follows_last_play_tabla(last_play_tabla: bool, bonus: int) -> None:
    # A pişti clears the table, so a pişti made with the deal's last play scores only
    # when last_play_tabla is true. capture_optional lets the fillers trail.
    rules = Rules.preset("pisti", capture_optional=True, last_play_tabla=last_play_tabla)
    layout = build_layout(rules, "2C 3D 5H 9S", {(0, 0): "JD JH JS", (5, 1): "JC 7S", (5, 0): "7D"})
    deal = run_script(DealState(rules, layout), {45: "JC:*", 46: "7D", 47: "7S:7D"})
    assert deal.over
    assert [str(p.play) for p in deal.plays[46:]] == ["7D", "7S:7D"]
    assert deal.plays[-1].bonus == bonus


# ------------------------------------------------------------------ pişti


def _pisti(script: dict[int, str], hands: dict[Any, str], preset: str = "pisti", **overrides: Any) -> DealState:
    rules = Rules.preset(preset, **overrides)
    deal = DealState(rules, build_layout(rules, "2C 3D 5H 9S", hands))
    return run_script(deal, script, stop=max(script) + 1)


def test_pisti_lone_card_taken_by_the_same_rank_scores_10() -> None:
    deal = _pisti({0: "JC:2C,3D,5H,9S", 1: "7D", 2: "7S:7D"}, {0: "JC 7S", 1: "7D"})
    assert [p.bonus for p in deal.plays] == [0, 0, 10]
    assert deal.bonus == [10, 0]


def test_pisti_jack_on_jack_scores_20() -> None:
    deal = _pisti({0: "JC:2C,3D,5H,9S", 1: "JD", 2: "JH:JD"}, {0: "JC JH", 1: "JD"})
    assert [str(p.play) for p in deal.plays] == ["JC:2C,3D,5H,9S", "JD", "JH:JD"]
    assert [p.bonus for p in deal.plays] == [0, 0, 20]


def test_jack_sweeping_a_lone_other_card_is_no_pisti() -> None:
    deal = _pisti({0: "JC:2C,3D,5H,9S", 1: "7D", 2: "JH:7D"}, {0: "JC JH", 1: "7D"})
    assert [p.bonus for p in deal.plays] == [0, 0, 0]


def test_taking_one_of_two_cards_is_no_pisti() -> None:
    deal = _pisti({0: "JC:2C,3D,5H,9S", 1: "7D", 2: "8S", 3: "7H:7D"}, {0: "JC 8S", 1: "7D 7H"})
    assert [p.bonus for p in deal.plays] == [0, 0, 0, 0]
    assert names(deal.table) == "8S"


def test_pisti_bonus_adds_to_a_tabla_and_is_off_at_zero() -> None:
    script = {0: "JC:2C,3D,5H,9S", 1: "7D", 2: "7S:7D"}
    hands = {0: "JC 7S", 1: "7D"}
    assert _pisti(script, hands, preset="tablic").plays[2].bonus == 1  # a plain tabla
    assert _pisti(script, hands, preset="tablic", pisti_bonus=5).plays[2].bonus == 6


# ------------------------------------------------------------------ leftover


def _leftover_deal(players: int = 2, capture_at: int | None = None, **overrides: Any) -> DealState:
    """Tablic with a non-sweeping Jack (jack=11), so every filler trails.

    The only capture is ``9C:2C,7D`` at play ``capture_at`` (by seat ``capture_at % players``,
    since seat 0 plays first), or none at all.
    """
    rules = Rules.preset("tablic", players=players, jack=11, **overrides)
    hands = {} if capture_at is None else {capture_at % players: "9C"}
    script = {} if capture_at is None else {capture_at: "9C:2C,7D"}
    return run_script(DealState(rules, build_layout(rules, "2C 7D 4H 5S", hands)), script)


def test_leftover_goes_to_the_last_capturer() -> None:
    deal = _leftover_deal(capture_at=10)
    assert deal.over
    assert [i for i, p in enumerate(deal.plays) if p.mask] == [10]
    assert deal.leftover_team == 0
    assert deal.leftover == FULL_DECK & ~m("9C 2C 7D")
    assert deal.piles == [FULL_DECK, 0]
    assert deal.table == 0
    assert all(p.bonus == 0 for p in deal.plays)  # taking the leftover is never a tabla


def test_leftover_to_the_dealer() -> None:
    deal = _leftover_deal(capture_at=10, leftover_to="dealer")
    assert deal.layout.dealer == 1
    assert deal.leftover_team == 1
    assert deal.piles == [m("9C 2C 7D"), FULL_DECK & ~m("9C 2C 7D")]


def test_leftover_goes_to_nobody_if_nobody_captured() -> None:
    deal = _leftover_deal()
    assert deal.over and not any(p.mask for p in deal.plays)
    assert deal.leftover_team is None
    assert deal.leftover == FULL_DECK
    assert deal.table == FULL_DECK  # the cards stay on the table, in nobody's pile
    assert deal.piles == [0, 0]
    assert deal.score() == [0, 0]  # no points; a 0-0 tie for most cards scores nothing


def test_leftover_to_the_dealer_goes_to_nobody_if_nobody_captured() -> None:
    # docs/rules.md (leftover_to): "nobody if no one captured"; docs/records.md: team null
    # "if nobody captured during the deal". Neither makes an exception for the dealer.
    deal = _leftover_deal(leftover_to="dealer")
    assert deal.leftover_team is None
    assert deal.piles == [0, 0] and deal.table == FULL_DECK


def test_leftover_goes_to_the_last_capturers_partnership() -> None:
    deal = _leftover_deal(players=4, capture_at=2)  # seat 2 captures; partners 0 + 2
    assert deal.rules.partnerships
    assert deal.plays[2].seat == 2
    assert deal.leftover_team == 0
    assert deal.piles == [FULL_DECK, 0]
    assert len(deal.score()) == 2


def test_leftover_goes_to_the_last_capturer_with_three_players() -> None:
    deal = _leftover_deal(players=3, capture_at=4)  # seat 1 captures
    assert deal.leftover_team == 1
    assert deal.piles == [0, FULL_DECK, 0]


# ------------------------------------------------------------------ timeout play


@pytest.mark.parametrize(
    ("preset", "table", "hand", "expected"),
    [
        # The lowest card is trailed when the rules allow it, even if it could capture.
        ("tablic", "AD 3C 6H 9S", "AS AH 5C 8D KC QD", "AH"),
        ("tablic", "AD 3C 6H 9S", "2S KD 2C 7H 9D AS", "AS"),  # A is lowest, whatever the suit
        ("tablic", "AD 3C 6H 9S", "2S 2H 3D 4H 7H 9D", "2H"),  # then C < D < H < S
        ("tablic", "AD 3C 6H 9S", "KS KC QH QD JS JD", "JD:AD,3C,6H,9S"),  # a Jack must sweep
        # Mandatory capture: the lowest card's first legal capture.
        ("tablanette-ro", "AC 4D 2H 3S", "5C 8D 9H KS", "5C:AC,4D"),
        ("tablanette-ro", "AC 4D 2H 3S", "KS QS KH QH", "QH"),  # cannot capture: trailed
        ("pisti", "AC 4D 2H 3S", "4S 4H 8D 9H", "4H:4D"),
    ],
)
def test_timeout_play_is_the_lowest_cards_first_legal_play(preset: str, table: str, hand: str, expected: str) -> None:
    deal = position(preset, table, hand=hand)
    assert names(deal.hands[0]) == names(m(hand))
    play = deal.timeout_play()
    assert str(play) == expected
    assert play in deal.legal_plays()
    record = deal.play(play, auto=True)
    assert record.auto is True


def test_timeout_play_when_the_deal_is_over() -> None:
    deal = _leftover_deal()
    with pytest.raises(GameOverError, match="the deal is over"):
        deal.timeout_play()


# ------------------------------------------------------------------ refused plays

_TABLIC_TABLE = "2C 7D 4H 5S"
_TABLIC_HAND = "9C AS 5D JH KC QD"
_WHERE = "seat 0 to play, hand [AS 5D 9C JH QD KC], table [2C 4H 5S 7D], play 1 of the deal"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("3C", "3C is not in the hand"),
        ("TH:2C,4H,5S,7D", "TH is not in the hand"),
        ("9C:2C,4H,5S,7D", "9C may be played only as 9C, 9C:2C,7D, 9C:4H,5S"),  # no multi-capture
        ("9C:2C", "9C may be played only as"),
        ("5D:2C,4H", "5D may be played only as 5D, 5D:5S"),
        ("JH", "JH may be played only as JH:2C,4H,5S,7D"),  # no Jack trail on a full table
        ("JH:2C,7D", "JH may be played only as JH:2C,4H,5S,7D"),  # no partial Jack capture
        ("KC:KD", "KC may be played only as KC"),  # KD is not on the table
        ("QD:5S,7D", "QD may be played only as QD"),  # a tablic Queen does not sum
    ],
)
def test_illegal_play_is_refused_naming_the_play_and_the_position(text: str, why: str) -> None:
    deal = position("tablic", _TABLIC_TABLE, hand=_TABLIC_HAND)
    before = snapshot(deal)
    with pytest.raises(IllegalPlayError) as info:
        deal.play(Play.parse(text))
    message = str(info.value)
    assert message.startswith(f"illegal play {text}: ")
    assert why in message
    assert _WHERE in message
    assert snapshot(deal) == before
    assert not deal.is_legal(Play.parse(text))
    # The position still plays normally afterwards.
    deal.play(Play.parse("9C:2C,7D"))
    assert names(deal.table) == "4H 5S"


def test_mandatory_capture_refuses_the_trail() -> None:
    deal = position("tablanette-ro", "2C 3D 9S KH", hand="5C")
    before = snapshot(deal)
    with pytest.raises(IllegalPlayError, match=r"illegal play 5C: 5C may be played only as 5C:2C,3D \(seat 0"):
        deal.play(Play.parse("5C"))
    assert snapshot(deal) == before


def test_a_card_of_another_seat_is_not_in_the_hand() -> None:
    deal = position("tablic", _TABLIC_TABLE, hand=_TABLIC_HAND)
    other = next(iter(Card.parse(n) for n in names(deal.hands[1]).split()))
    with pytest.raises(IllegalPlayError, match=f"{other} is not in the hand"):
        deal.play(Play(other, 0))


def test_no_play_after_the_deal_is_over() -> None:
    deal = _leftover_deal()
    before = snapshot(deal)
    assert deal.legal_plays() == []
    with pytest.raises(GameOverError, match="the deal is over; 9C cannot be played"):
        deal.play(Play.parse("9C"))
    assert snapshot(deal) == before


def test_copy_is_independent() -> None:
    deal = position("tablic", _TABLIC_TABLE, hand=_TABLIC_HAND)
    twin = deal.copy()
    twin.play(Play.parse("9C:2C,7D"))
    assert names(deal.table) == "2C 4H 5S 7D"
    assert deal.plays == [] and deal.turn == 0
    assert stock_mask(deal) == stock_mask(twin)
