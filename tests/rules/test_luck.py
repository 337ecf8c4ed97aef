"""The luck estimator and the position value: identities, determinism, errors, every seat count.

Whether the estimator is unbiased is measured over many deals in test_luck_unbiased.py.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from rules_testkit import build_layout, m

from bots import make_bot, play_match
from engine_service.rules import (
    PRESETS,
    DealState,
    IllegalPositionError,
    LuckError,
    Match,
    RecordError,
    Rules,
    check_position,
    deal_layout,
    dumps,
    layout_of_deck,
    loads,
    luck_of_match,
    luck_of_record,
    match_record,
    position_value,
    round_sizes,
)
from engine_service.rules.cards import JACK
from engine_service.rules.luck import SCALE, V_FACTOR, scale_for
from engine_service.rules.stock import StockSampler
from engine_service.rules.value import capture_options, tables_for

SEATINGS = [("tablic", 2), ("tablic", 3), ("tablic", 4), ("pisti", 3), ("tablanette-ro", 4)]


def _match(preset: str = "tablic", players: int = 2, seed: str = "luck", **overrides: Any) -> Match:
    rules = Rules.preset(preset, players=players, **overrides)
    specs = ["greedy", "random", "greedy:eps=0.2", "random"][:players]
    return play_match(rules, seed, [make_bot(s, f"{seed}/{i}") for i, s in enumerate(specs)])


def _record(match: Match, rid: str = "luck/1") -> dict[str, Any]:
    return loads(dumps(match_record(match, [f"p{s}" for s in range(match.rules.players)], rid)))


@pytest.mark.parametrize(("preset", "players"), SEATINGS)
def test_raw_is_luck_plus_skill_and_margins_balance(preset: str, players: int) -> None:
    match = _match(preset, players, target=40)
    luck = luck_of_record(_record(match))
    rules = match.rules
    assert luck.teams == rules.teams and len(luck.raw) == rules.team_count
    assert luck.points == tuple(match.totals)
    for raw, lk, skill in zip(luck.raw, luck.luck, luck.skill, strict=True):
        assert raw == pytest.approx(lk + skill, abs=1e-9)
    for values in (luck.raw, luck.luck, luck.skill):
        assert sum(values) == pytest.approx(0, abs=1e-9)  # each team against the mean of the others
    others = [sum(match.totals) - p for p in match.totals]
    assert list(luck.raw) == pytest.approx(
        [p - o / (rules.team_count - 1) for p, o in zip(match.totals, others, strict=True)]
    )


def test_two_teams_margin_is_the_point_difference() -> None:
    match = _match("tablic", 4, target=40)  # partnerships: two teams of two seats
    luck = luck_of_match(match, "p")
    assert luck.teams == ((0, 2), (1, 3))
    assert luck.raw == (match.totals[0] - match.totals[1], match.totals[1] - match.totals[0])


def test_one_event_per_deal_and_round_and_the_curve_ends_at_the_total() -> None:
    match = _match("tablic", 2, target=60)
    luck = luck_of_match(match, "curve")
    rounds = len(round_sizes(match.rules))
    assert [(e.deal, e.round) for e in luck.events] == [(d, r) for d in range(len(match.deals)) for r in range(rounds)]
    assert luck.events[-1].luck == pytest.approx(luck.luck)
    total = [sum(e.correction[t] for e in luck.events) for t in range(2)]
    assert luck.luck[0] == pytest.approx(total[0] - total[1])


def test_same_record_same_numbers_and_the_record_form_does_not_matter() -> None:
    match = _match("tablic", 3, target=40)
    rec = _record(match)
    first = luck_of_record(rec)
    assert luck_of_record(copy.deepcopy(rec)) == first
    assert luck_of_match(match, "luck/1") == first
    assert luck_of_record(match_record(match, ["p0", "p1", "p2"], "luck/1")) == first  # a GameRecord too
    other = luck_of_record(rec, samples=3)
    assert other.samples == 3 and other.luck != first.luck  # fewer samples: a different (still unbiased) estimate
    assert other.raw == first.raw


def test_the_scale_shrinks_every_correction_and_nothing_else() -> None:
    """Luck at the arena's scale is V's differences times SCALE, event by event; raw stays raw and
    raw = luck + skill; a scale outside 0..1 (or not a number) is refused."""
    match = _match("tablic", 3, target=40)
    whole, scaled = luck_of_match(match, "s", scale=1), luck_of_match(match, "s")
    assert scaled.scale == SCALE < 1 and whole.scale == 1 and scaled.raw == whole.raw
    for a, b in zip(scaled.events, whole.events, strict=True):
        assert a.correction == pytest.approx([SCALE * c for c in b.correction])
    assert scaled.luck == pytest.approx([SCALE * lk for lk in whole.luck])
    assert all(abs(r - (lk + s)) < 1e-9 for r, lk, s in zip(scaled.raw, scaled.luck, scaled.skill, strict=True))
    assert luck_of_match(match, "s", scale=0).luck == (0.0, 0.0, 0.0)
    assert luck_of_record(_record(match, "s"), scale=1) == whole  # as luck was counted before it had a scale
    assert luck_of_match(match, "s", samples=3).scale == scale_for(3) == V_FACTOR * 3 / 4  # fewer draws, less
    for bad in (-0.1, 1.5, True, "0.5"):
        with pytest.raises(LuckError, match="scale"):
            luck_of_match(match, "s", scale=bad)  # type: ignore[arg-type]


def test_to_json_carries_every_number() -> None:
    luck = luck_of_match(_match(target=30), "j")
    data = luck.to_json()
    assert data["raw"] == [round(v, 3) for v in luck.raw] and len(data["events"]) == len(luck.events)
    assert data["events"][-1]["luck"] == [round(v, 3) for v in luck.luck]
    assert data["samples"] == luck.samples and data["scale"] == SCALE


@pytest.mark.parametrize("ending", ["forfeit", "aborted"])
def test_forfeits_and_aborts_are_refused(ending: str) -> None:
    match = Match(Rules.preset("tablic"), seed="cut")
    for _ in range(30):
        match.play(match.legal_plays()[0])
    match.forfeit(1) if ending == "forfeit" else match.abort()
    with pytest.raises(LuckError, match=f"ended by {ending}"):
        luck_of_record(_record(match))
    with pytest.raises(LuckError, match=f"ended by {ending}"):
        luck_of_match(match)


def test_corrupt_and_unfinished_input_is_refused() -> None:
    rec = _record(_match(target=30))
    bad = copy.deepcopy(rec)
    bad["deals"][0]["plays"][0]["card"] = "KS" if bad["deals"][0]["plays"][0]["card"] != "KS" else "QS"
    with pytest.raises(LuckError, match="deal 0, play 0"):
        luck_of_record(bad)
    assert issubclass(LuckError, RecordError)  # callers that skip bad records catch one type
    with pytest.raises(LuckError, match="missing field"):
        luck_of_record({k: v for k, v in rec.items() if k != "seed"})
    with pytest.raises(LuckError, match="JSON object"):
        luck_of_record([1, 2])  # type: ignore[arg-type]
    with pytest.raises(LuckError, match="not over"):
        luck_of_match(Match(Rules.preset("tablic"), seed="x"))
    with pytest.raises(LuckError, match="samples"):
        luck_of_record(rec, samples=0)


def test_a_dealt_fortune_shows_as_luck_for_its_team() -> None:
    """Seat 0 dealt every Jack and the big point cards: the first event credits its team, by points."""
    rules = Rules.preset("tablic", deals=1)
    lucky = build_layout(rules, "3H 4H 5H 6H", {0: "JC JD JH JS TD 2C"}, dealer=1)
    unlucky = build_layout(rules, "3H 4H 5H 6H", {1: "JC JD JH JS TD 2C"}, dealer=1)
    seen = []
    for layout in (lucky, unlucky):
        match = Match(rules, seed="fortune", layouts=[layout])
        while not match.is_over:
            match.play(match.legal_plays()[0])
        seen.append(luck_of_match(match, "f").events[0].correction)
    assert seen[0][0] - seen[0][1] > 4 and seen[1][1] - seen[1][0] > 4


def test_position_value_of_a_finished_deal_is_its_score() -> None:
    rules = Rules.preset("pisti")
    state = DealState(rules, deal_layout(rules, "done", 0))
    while not state.over:
        play = state.legal_plays()[-1]
        state.push(play.card, play.mask)
    assert position_value(state) == tuple(float(x) for x in state.score())


def test_sampled_deals_are_whole_legal_deals() -> None:
    rng = random.Random(5)
    for preset, players in SEATINGS:
        rules = Rules.preset(preset, players=players)
        deck = list(range(52))
        rng.shuffle(deck)
        layout = layout_of_deck(rules, deck, players - 1)
        layout.check(rules)
        check_position(DealState(rules, layout))


def test_illegal_positions_are_refused_with_a_reason() -> None:
    rules = Rules.preset("tablic")
    layout = build_layout(rules, "3H 4H 5H 6H", {0: "AC AD AH AS TD 2C"})
    state = DealState(rules, layout)
    twice = state.copy()
    twice.table |= m("AC")
    with pytest.raises(IllegalPositionError, match="AC appear twice"):
        position_value(twice)
    lost = state.copy()
    lost.hands[1] &= lost.hands[1] - 1  # one card of seat 1 vanishes
    with pytest.raises(IllegalPositionError, match="unaccounted"):
        position_value(lost)
    empty = state.copy()
    empty.piles[0] |= empty.hands[0]
    empty.hands[0] = 0
    with pytest.raises(IllegalPositionError):
        position_value(empty)
    wrong_turn = state.copy()
    wrong_turn.turn = 5
    with pytest.raises(IllegalPositionError, match="seat 5"):
        position_value(wrong_turn)


@pytest.mark.parametrize("preset", ["tablic", "tablanette-ro"])
def test_the_stock_is_sampled_as_the_dealer_leaves_it(preset: str) -> None:
    """Under replace, Jacks drawn for the table sit at the bottom: the dealer's last hand holds more Jacks.

    The sampler (drawn before round 1) must agree with real deals on that count; a uniform
    shuffle of the hidden cards would not (0.77 against 0.52 Jacks in tablic). Under keep both agree.
    """
    rules = Rules.preset(preset)
    jacks = m("JC JD JH JS")
    rng = random.Random(7)
    real, sampled, deals = 0, 0, 3000
    for i in range(deals):
        layout = deal_layout(rules, f"stock/{i}", 1)  # seat 1 deals, and takes the last cards
        real += (layout.rounds[-1][1] & jacks).bit_count()
        stock = StockSampler(rules, layout, 1).sample(rng)
        sampled += sum(1 for c in stock[-rules.hand_size :] if c >> 2 == 10)
    spread = 4 * 0.75 / deals**0.5  # four standard errors of each mean (a hand's Jack count varies by < 0.75)
    assert abs(real - sampled) / deals < 2 * spread
    if preset == "tablic":
        assert real / deals > 0.7 and real / deals - 0.52 > 2 * spread  # the effect the sampler must reproduce


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_capture_options_are_the_legal_plays_of_each_card(preset: str) -> None:
    """The rollouts' shared enumeration (remembered across play-outs) gives each card exactly the plays the
    rules allow it, 0 standing for a trail, at every position of a few played-out deals."""
    rules = Rules.preset(preset)
    tables = tables_for(rules)
    rng = random.Random(preset)
    for d in range(6):
        state = DealState(rules, deal_layout(rules, f"opt-{d}", 0))
        while not state.over:
            legal: dict[int, set[int]] = {}
            for play in state.legal_plays():
                legal.setdefault(play.card, set()).add(play.mask)
            for card, masks in legal.items():
                got = capture_options(state, card, tables)
                assert sorted(got) == sorted(masks), (card, state.table)
                if not (rules.jack_sweeps and card >> 2 == JACK):
                    assert capture_options(state, card, tables) is got  # remembered, not found again
            play = rng.choice(state.legal_plays())
            state.push(play.card, play.mask)
