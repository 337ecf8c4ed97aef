"""Matches: the target and its tie rule, fixed deals, forfeit, abort, dealer rotation, observations."""

from __future__ import annotations

import dataclasses
import random

import pytest
from rules_testkit import PRESET_PLAYERS, play_match, random_policy, stock_mask, trail_first

from engine_service.rules import (
    CARDS,
    DealLayout,
    DealState,
    GameOverError,
    IllegalPlayError,
    Match,
    MatchResult,
    Observation,
    Play,
    Rules,
    iter_mask,
)


def capture_if_you_can(deal: DealState) -> Play:
    """Seat 0 takes the widest capture it can find; every other seat trails when it may."""
    plays = deal.legal_plays()
    if deal.turn == 0:
        return max(plays, key=lambda p: p.mask.bit_count())
    return plays[0]


# The only points of these rules are 3 for most cards, shared on a tie; a non-sweeping
# Jack lets every card trail, so a deal where everybody trails is a 0-0 tie.
TIE_RULES = dict(jack=11, card_points={}, most_cards=3, most_cards_tie="all_tied", target=3)


def test_match_ends_after_the_deal_in_which_a_side_reaches_the_target() -> None:
    match = play_match(Match(Rules.preset("tablic", target=40), seed="t"), random_policy(random.Random(1)))
    result = match.result
    assert result is not None and result.reason == "target"
    totals = [0, 0]
    for k, deal in enumerate(match.deals):
        for t, pts in enumerate(deal.score):
            totals[t] += pts
        top = max(totals)
        decided = top >= 40 and totals.count(top) == 1
        assert decided == (k == len(match.deals) - 1), f"deal {k}: {totals}"
    assert totals == match.totals
    assert result.winner == match.totals.index(max(match.totals))
    assert match.totals[result.winner] >= 40


def test_a_tie_at_the_top_plays_another_deal() -> None:
    match = Match(Rules.preset("tablic", **TIE_RULES), seed="tie")
    while match.deal_index == 0:
        match.play(trail_first(match.deal))
    assert match.deals[0].score == (3, 3)  # nobody captured: 0-0, shared
    assert match.totals == [3, 3] and not match.is_over  # both reached 3, tied: another deal
    play_match(match, capture_if_you_can)
    assert len(match.deals) == 2
    assert match.deals[1].score == (3, 0)
    assert match.result == MatchResult(0, "target")


def test_fixed_number_of_deals() -> None:
    # deals=3 wins over target: the match goes on although a side passes 1 point.
    match = play_match(Match(Rules.preset("tablic", deals=3, target=1), seed="d"), random_policy(random.Random(2)))
    assert len(match.deals) == 3
    assert match.result is not None and match.result.reason == "deals"
    top = max(match.totals)
    assert match.result.winner == (match.totals.index(top) if match.totals.count(top) == 1 else None)


def test_fixed_deals_may_end_in_a_draw() -> None:
    match = play_match(Match(Rules.preset("tablic", deals=1, **TIE_RULES), seed="draw"), trail_first)
    assert match.totals == [3, 3]
    assert match.result == MatchResult(None, "deals")


@pytest.mark.parametrize(("preset", "players"), PRESET_PLAYERS)
def test_dealer_rotates_and_the_next_seat_leads(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players=players, deals=players + 2)
    match = play_match(Match(rules, seed="rot"), random_policy(random.Random(3)))
    for k, deal in enumerate(match.deals):
        assert deal.layout.dealer == k % players
        assert deal.plays[0].seat == (k + 1) % players
        assert [p.seat for p in deal.plays] == [(k + 1 + i) % players for i in range(len(deal.plays))]


def test_forfeit_mid_deal() -> None:
    match = Match(Rules.preset("tablic"), seed="f")
    for _ in range(5):
        match.play(match.legal_plays()[0])
    match.forfeit(0)
    assert match.result == MatchResult(1, "forfeit", 0)
    assert match.totals == [0, 0]
    unfinished = match.deals[-1]
    assert not unfinished.complete and len(unfinished.plays) == 5 and unfinished.score == (0, 0)
    assert match.legal_plays() == []
    with pytest.raises(GameOverError, match=r"the match is over \(forfeit\)"):
        match.play(Play.parse("AC"))


def test_forfeit_between_deals_leaves_no_empty_deal() -> None:
    match = Match(Rules.preset("tablic", players=3), seed="f3")
    while match.deal_index == 0:
        match.play(match.legal_plays()[0])
    totals = list(match.totals)
    match.forfeit(1)
    assert len(match.deals) == 1 and match.deals[0].complete
    others = {0: totals[0], 2: totals[2]}
    best = max(others.values())
    leaders = [t for t, v in others.items() if v == best]
    assert match.result == MatchResult(leaders[0] if len(leaders) == 1 else None, "forfeit", 1)


def test_forfeit_with_the_other_sides_tied_is_a_draw() -> None:
    match = Match(Rules.preset("pisti", players=3), seed="f")
    match.forfeit(2)
    assert match.result == MatchResult(None, "forfeit", 2)
    assert match.deals == []


def test_forfeit_by_a_partner_loses_for_the_partnership() -> None:
    match = Match(Rules.preset("tablic", players=4), seed="p")
    match.forfeit(2)
    assert match.result == MatchResult(1, "forfeit", 2)


def test_forfeit_needs_a_real_seat() -> None:
    match = Match(Rules.preset("tablic"), seed="f")
    with pytest.raises(ValueError, match="seat 5 is not a seat"):
        match.forfeit(5)
    assert match.result is None


def test_abort() -> None:
    match = Match(Rules.preset("tablic"), seed="a")
    match.play(match.legal_plays()[0])
    match.abort()
    assert match.result == MatchResult(None, "aborted")
    assert not match.deals[-1].complete
    for action in (match.abort, lambda: match.forfeit(0), match.timeout_play):
        with pytest.raises(GameOverError, match=r"the match is over \(aborted\)"):
            action()


def test_illegal_play_on_a_match_changes_nothing() -> None:
    match = Match(Rules.preset("tablic"), seed="i")
    hand = match.deal.hands[match.turn]
    other = next(c for c in range(52) if not hand >> c & 1)
    before = (match.deal.hands[:], match.deal.table, list(match.totals))
    with pytest.raises(IllegalPlayError, match="is not in the hand"):
        match.play(Play(CARDS[other], 0))
    assert (match.deal.hands, match.deal.table, match.totals) == before


def test_timeout_play_through_the_match_is_marked_auto() -> None:
    match = Match(Rules.preset("tablanette-ro"), seed="auto")
    play = match.timeout_play()
    record = match.play(play, auto=True)
    assert record.auto and record.play == play


# ------------------------------------------------------------------ observations

OBSERVATION_FIELDS = [
    "rules",
    "seat",
    "turn",
    "deal_index",
    "dealer",
    "round",
    "rounds_left",
    "hand",
    "table",
    "piles",
    "hand_counts",
    "plays",
    "deal_bonus",
    "scores",
    "legal_plays",
]


def test_observation_fields_are_the_reviewed_ones() -> None:
    # Adding a field to Observation must come with a review of what it exposes.
    assert [f.name for f in dataclasses.fields(Observation)] == OBSERVATION_FIELDS


def _check_observation(match: Match, seat: int) -> None:
    deal = match.deal
    obs = match.observation(seat)
    n = match.rules.players
    others = 0
    for t in range(n):
        if t != seat:
            others |= deal.hands[t]
    assert obs.hand == deal.hands[seat]
    assert obs.hand_counts == tuple(h.bit_count() for h in deal.hands)
    assert obs.unseen & obs.hand == 0
    assert obs.unseen & others == others
    assert obs.unseen == others | stock_mask(deal)
    assert obs.stock_count == stock_mask(deal).bit_count()
    # Nothing public holds a card of another seat's hand.
    assert obs.table & others == 0
    assert all(p & others == 0 for p in obs.piles)
    assert all((1 << p.card | p.mask) & others == 0 for p in obs.plays)
    assert all(p.card not in iter_mask(others) for p in obs.legal_plays)
    assert (obs.legal_plays != ()) == (seat == deal.turn)
    if seat == deal.turn:
        assert list(obs.legal_plays) == deal.legal_plays()
    assert obs.scores == tuple(match.totals)
    assert obs.deal_index == len(match.deals)
    assert obs.dealer == deal.layout.dealer
    assert obs.is_last_play_of_deal == (deal.rounds_left == 0 and sum(h.bit_count() for h in deal.hands) == 1)


def _with_unseen_cards_redealt(match: Match, seat: int, rng: random.Random) -> Match:
    """The same match so far, except that every card ``seat`` has not seen is dealt differently.

    The cards still in other seats' hands and every card of the later rounds are
    shuffled among those places; the plays made so far are replayed unchanged.
    """
    deal = match.deal
    layout = deal.layout
    r = deal.round
    rounds = [list(hands) for hands in layout.rounds]
    slots = [(r, t, deal.hands[t].bit_count()) for t in range(len(deal.hands)) if t != seat]
    slots += [(rr, t, rounds[rr][t].bit_count()) for rr in range(r + 1, len(rounds)) for t in range(len(deal.hands))]
    pool = [c for t in range(len(deal.hands)) if t != seat for c in iter_mask(deal.hands[t])]
    pool += [c for c in iter_mask(stock_mask(deal))]
    rng.shuffle(pool)
    for rr, t, size in slots:
        # Keep the cards already played this round; later rounds are dealt afresh.
        rounds[rr][t] = rounds[rr][t] & ~deal.hands[t] if rr == r else 0
        for c in pool[:size]:
            rounds[rr][t] |= 1 << c
        del pool[:size]
    assert not pool
    new = DealLayout(layout.dealer, layout.table, tuple(tuple(h) for h in rounds))
    new.check(match.rules)
    twin = Match(match.rules, match.seed, [d.layout for d in match.deals] + [new])
    for d in match.deals:
        for p in d.plays:
            twin.play(p.play, p.auto)
    for p in deal.plays:
        twin.play(p.play, p.auto)
    return twin


@pytest.mark.parametrize(("preset", "players"), PRESET_PLAYERS)
def test_observations_never_expose_another_seats_hand(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players=players, target=25)
    match = Match(rules, seed=f"obs-{preset}-{players}")
    rng = random.Random(f"{preset}{players}")
    policy = random_policy(rng)
    step = 0
    while not match.is_over:
        for seat in range(players):
            _check_observation(match, seat)
        if step % 23 == 5:
            # The strongest form: the observation is identical whatever the unseen cards are.
            seat = rng.randrange(players)
            twin = _with_unseen_cards_redealt(match, seat, rng)
            assert twin.observation(seat) == match.observation(seat)
            # ...while a seat whose hand was redealt does see the difference.
            for t in range(players):
                if twin.deal.hands[t] != match.deal.hands[t]:
                    assert twin.observation(t) != match.observation(t)
        match.play(policy(match.deal))
        step += 1
    for seat in range(players):
        assert match.observation(seat).legal_plays == ()
