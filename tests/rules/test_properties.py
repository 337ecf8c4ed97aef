"""Properties checked with hypothesis on random rules, seeds and legal play sequences.

- the 52 cards are conserved at every step of every deal (hands + table + piles + stock);
- every legal play applies through the checked ``play()``; every other (card, table subset) is
  refused with :class:`IllegalPlayError` and leaves the state untouched;
- legal plays come in canonical order and agree with the naive oracle of ``reference.py``;
- deal scores follow docs/rules.md (an independent scorer) and add up to the match totals;
- records replay to the identical bytes;
- the fast :class:`CaptureFinder` equals ``reference.naive_captures`` on random tables.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rules_testkit import PRESET_PLAYERS, oracle_score, snapshot, stock_mask

from engine_service.rules import (
    CARDS,
    FULL_DECK,
    CaptureFinder,
    DealState,
    IllegalPlayError,
    Match,
    Play,
    Rules,
    deal_layout,
    dumps,
    iter_mask,
    loads,
    match_record,
    verify_record,
)
from engine_service.rules.reference import naive_captures

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Rule variants that every preset and player count accepts.
VARIANTS = st.fixed_dictionaries(
    {},
    optional={
        "ace_values": st.sampled_from([[1], [1, 11], [1, 14]]),
        "jack": st.sampled_from(["sweep", 11, 12]),
        "queen": st.sampled_from([12, 13]),
        "king": st.sampled_from([13, 14]),
        "sums": st.booleans(),
        "face_sums": st.booleans(),
        "multi_capture": st.booleans(),
        "rank_priority": st.booleans(),
        "capture_optional": st.booleans(),
        "initial_table_jacks": st.sampled_from(["keep", "replace"]),
        "tabla_points": st.sampled_from(["fixed", "card_value", "total_value", "none"]),
        "jack_sweep_tabla": st.sampled_from(["same", "one", "none"]),
        "last_play_tabla": st.booleans(),
        "leftover_to": st.sampled_from(["last_capturer", "dealer"]),
        "pisti_bonus": st.sampled_from([0, 10]),
        "most_cards_tie": st.sampled_from(["none", "all_tied"]),
        "most_suit": st.sampled_from([{}, {"D": 1}, {"S": 2, "C": 1}]),
    },
)


@st.composite
def rule_sets(draw: st.DrawFn, variants: bool = True) -> Rules:
    preset, players = draw(st.sampled_from(PRESET_PLAYERS))
    overrides: dict[str, Any] = draw(VARIANTS) if variants and draw(st.booleans()) else {}
    return Rules.preset(preset, players=players, **overrides)


def _key(play: Play) -> tuple[int, tuple[int, ...]]:
    return play.mask.bit_count(), tuple(iter_mask(play.mask))


def check_legal_plays(deal: DealState) -> list[Play]:
    """The legal plays of the position, checked against docs/rules.md and the naive oracle."""
    rules = deal.rules
    legal = deal.legal_plays()
    hand = deal.hands[deal.turn]
    assert legal, "a seat with cards always has a legal play"
    assert len(set(legal)) == len(legal)
    assert [p.card for p in legal] == sorted(p.card for p in legal)
    assert {int(p.card) for p in legal} == set(iter_mask(hand))
    for card in iter_mask(hand):
        plays = [p for p in legal if p.card == card]
        assert all(p.mask & ~deal.table == 0 for p in plays)
        if card >> 2 == 10 and rules.jack_sweeps:
            assert plays == [Play(CARDS[card], deal.table)]  # the whole table, or a trail if empty
            continue
        captures = [p for p in plays if p.mask]
        if deal.table.bit_count() <= 8:  # the oracle tries every subset: keep it small
            assert [p.mask for p in captures] == naive_captures(rules, deal.table, card)
        assert captures == sorted(captures, key=_key)
        trail = Play(CARDS[card], 0)
        if rules.capture_optional or not captures:
            assert plays[0] == trail
        else:
            assert trail not in plays
    return legal


def check_conservation(deal: DealState) -> None:
    parts = [*deal.hands, deal.table, *deal.piles, stock_mask(deal)]
    union = 0
    for part in parts:
        assert union & part == 0, "a card is in two places"
        union |= part
    assert union == FULL_DECK
    assert sum(p.bit_count() for p in parts) == 52


def check_refusals(deal: DealState, rng: random.Random, tries: int = 4) -> None:
    """Random (card, table subset) pairs: legal ones are accepted, the rest refused cleanly."""
    legal = set(deal.legal_plays())
    table = list(iter_mask(deal.table))
    for _ in range(tries):
        if rng.random() < 0.8 and deal.hands[deal.turn]:
            card = rng.choice(list(iter_mask(deal.hands[deal.turn])))
        else:
            card = rng.randrange(52)
        mask = sum(1 << c for c in table if rng.random() < 0.4)
        play = Play(CARDS[card], mask & ~(1 << card))
        if play in legal:
            deal.copy().play(play)
            continue
        before = snapshot(deal)
        try:
            deal.play(play)
        except IllegalPlayError as exc:
            assert f"illegal play {play}:" in str(exc)
            assert f"seat {deal.turn} to play" in str(exc)
        else:
            raise AssertionError(f"{play} was accepted but is not legal")
        assert snapshot(deal) == before


def expected_bonus(rules: Rules, play: Play, table_before: int, last: bool) -> int | None:
    """A play's sweep and pişti points by docs/rules.md, or None where it needs capture values."""
    if not play.mask or play.mask != table_before or (last and not rules.last_play_tabla):
        return 0
    rank = play.card >> 2
    lone = table_before.bit_count() == 1 and table_before.bit_length() - 1 >> 2 == rank
    pisti = rules.pisti_bonus * (2 if rank == 10 else 1) if lone else 0
    if rank == 10 and rules.jack_sweeps:
        policy = rules.jack_sweep_tabla
        return pisti + int(policy == "one" or (policy == "same" and rules.tabla_points != "none"))
    if rules.tabla_points in ("card_value", "total_value"):
        return None  # covered by the hand-solved cases of test_deal.py
    return pisti + int(rules.tabla_points == "fixed")


def play_deal_checked(deal: DealState, rng: random.Random) -> None:
    """Play a deal to its end with random legal plays, checking every position."""
    rules = deal.rules
    last_capturer = None
    while not deal.over:
        check_conservation(deal)
        legal = check_legal_plays(deal)
        for play in legal:  # every legal play applies through the checked path
            deal.copy().play(play)
        check_refusals(deal, rng)
        play = rng.choice(legal)
        seat = deal.turn
        table_before = deal.table
        record = deal.play(play)
        assert (record.seat, record.card, record.mask) == (seat, play.card, play.mask)
        expected = expected_bonus(rules, play, table_before, last=deal.over)
        if expected is not None:
            assert record.bonus == expected, (str(play), table_before)
        if play.mask:
            last_capturer = seat
    check_conservation(deal)
    assert deal.hands == [0] * rules.players
    # The leftover went where docs/rules.md says.
    if deal.leftover:
        if last_capturer is None:
            assert deal.leftover_team is None  # nobody, whatever leftover_to says
        elif rules.leftover_to == "dealer":
            assert deal.leftover_team == rules.team_of(deal.layout.dealer)
        else:
            assert deal.leftover_team == rules.team_of(last_capturer)
    if deal.leftover_team is None:
        assert deal.table == deal.leftover
    else:
        assert deal.table == 0
    assert sum(p.bonus for p in deal.plays) == sum(deal.bonus)
    assert deal.score() == oracle_score(rules, deal.piles, deal.bonus)


@SETTINGS
@given(rules=rule_sets(), seed=st.text(max_size=8), index=st.integers(0, 20), policy=st.integers(0, 2**32))
def test_random_deals_conserve_cards_and_play_by_the_rules(rules: Rules, seed: str, index: int, policy: int) -> None:
    rng = random.Random(policy)
    deal = DealState(rules, deal_layout(rules, seed, index))
    play_deal_checked(deal, rng)


@SETTINGS
@given(rules=rule_sets(), seed=st.text(max_size=8), policy=st.integers(0, 2**32))
def test_random_matches_add_up_and_records_replay_identically(rules: Rules, seed: str, policy: int) -> None:
    rng = random.Random(policy)
    rules = rules.with_overrides({"target": rng.choice([15, 30, 60])})
    match = Match(rules, seed=seed)
    while not match.is_over and len(match.deals) < 30:
        match.play(rng.choice(match.legal_plays()))
    if not match.is_over:
        match.abort()
    totals = [sum(d.score[t] for d in match.deals) for t in range(rules.team_count)]
    assert totals == match.totals
    for d in match.deals:
        assert d.complete or match.result.reason == "aborted"  # type: ignore[union-attr]
    names = [f"p{s}" for s in range(rules.players)]
    line = dumps(match_record(match, names, "prop"))
    assert dumps(loads(line)) == line
    again = verify_record(loads(line))
    assert again.totals == match.totals and again.result == match.result
    assert dumps(match_record(again, names, "prop")) == line


@st.composite
def capture_questions(draw: st.DrawFn) -> tuple[Rules, int, int]:
    rules = draw(rule_sets())
    card, *table = draw(st.lists(st.integers(0, 51), min_size=1, max_size=9, unique=True))
    return rules, sum(1 << c for c in table), card


@settings(max_examples=400, deadline=None)
@given(capture_questions())
def test_capture_finder_equals_the_naive_oracle(question: tuple[Rules, int, int]) -> None:
    rules, table, card = question
    if card >> 2 == 10 and rules.jack_sweeps:
        return
    fast = [c.mask for c in CaptureFinder(rules).captures(table, card)]
    assert fast == naive_captures(rules, table, card)


def test_capture_finder_equals_the_naive_oracle_on_every_preset_exhaustively_by_rank() -> None:
    """Every played rank on 400 random tables of up to 8 cards, for each preset."""
    rng = random.Random(7)
    for preset, players in PRESET_PLAYERS:
        if players != 2 and (preset, 2) in PRESET_PLAYERS:
            continue  # captures do not depend on the player count
        rules = Rules.preset(preset, players=players)
        finder = CaptureFinder(rules)
        for _ in range(400):
            cards = rng.sample(range(52), rng.randint(0, 9))
            card, table = cards[0] if cards else 0, sum(1 << c for c in cards[1:])
            if card >> 2 == 10 and rules.jack_sweeps:
                continue
            assert [c.mask for c in finder.captures(table, card)] == naive_captures(rules, table, card), (
                preset,
                card,
                table,
            )
