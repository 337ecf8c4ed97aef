"""A match's clocks: the round trip a bot's echoes measure (its latency credit) and each seat's time bank."""

from __future__ import annotations

import pytest

from bots.sdk import Clock
from engine_service.driver import Answer, SeatConduct, apply_answer
from engine_service.round_trips import OUTSTANDING, WINDOW, RoundTrips
from engine_service.rules import Match, Play, Rules, match_record
from engine_service.time_control import MatchClock, TimeControl
from engine_service.turn_builder import TurnBuilder
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb

Outcome = dpb.PlayResponse


# ---------------------------------------------------------------- round trips


def test_no_echo_no_credit_and_no_league_cap_no_credit() -> None:
    trips = RoundTrips()
    trips.ping(0.0)
    assert trips.estimate() is None and trips.credit_ms(500) == 0
    trips.echoed(trips.ping(1.0), 1.2)
    assert trips.credit_ms(0) == 0  # the league gives none


def test_the_estimate_is_the_smallest_recent_round_trip_rounded_up_and_capped() -> None:
    trips = RoundTrips()
    for sent, took in enumerate((0.25, 0.2004, 0.9, 0.3)):
        assert trips.echoed(trips.ping(float(sent)), sent + took) == pytest.approx(took)
    assert trips.estimate() == pytest.approx(0.2004)
    assert trips.credit_ms(1000) == 201  # rounded up: the credit never falls short of the round trip
    assert trips.credit_ms(150) == 150  # the league's cap is the most a bot gains


def test_an_old_minimum_leaves_the_window_so_a_changed_route_is_followed() -> None:
    trips = RoundTrips()
    trips.echoed(trips.ping(0.0), 0.05)
    for i in range(WINDOW):
        trips.echoed(trips.ping(10.0 + i), 10.0 + i + 0.3)
    assert trips.estimate() == pytest.approx(0.3)


def test_an_echo_must_be_of_an_outstanding_ping_so_a_bot_cannot_shorten_its_round_trip() -> None:
    trips = RoundTrips()
    first = trips.ping(0.0)
    assert trips.echoed(first + 1, 0.001) is None  # a guess
    assert trips.echoed(0, 0.001) is None  # a bot's own keepalive
    assert trips.echoed(first, 0.4) == pytest.approx(0.4)
    assert trips.echoed(first, 0.401) is None  # each ping counts once
    pings = [trips.ping(1.0 + i) for i in range(OUTSTANDING + 1)]
    assert trips.echoed(pings[0], 9.0) is None  # forgotten: only the newest OUTSTANDING can be echoed
    assert trips.echoed(pings[-1], 5.5) == pytest.approx(0.5)
    assert trips.estimate() == pytest.approx(0.4)


def test_pings_carry_distinct_nonzero_values() -> None:
    trips = RoundTrips()
    values = {trips.ping(0.0) for _ in range(1000)}
    assert len(values) == 1000 and 0 not in values


# ---------------------------------------------------------------- time banks


def played(used_ms: int) -> dpb.PlayResponse:
    return dpb.PlayResponse(outcome=Outcome.PLAYED, used_ms=used_ms)


def test_a_turn_gives_the_move_time_plus_what_is_left_of_the_seats_bank() -> None:
    clock = MatchClock(TimeControl(200, time_bank_ms=1000), seats=2)
    turn = clock.set_turn(apb.Turn(time_left_ms=200), 1)
    assert (turn.time_left_ms, turn.time_bank_ms) == (1200, 1000)
    clock.charge(1, played(500))  # 300 beyond the move time
    clock.charge(1, played(150))  # within the move time: the bank is untouched
    assert clock.banks == [1000, 700]
    clock.charge(1, played(2000))  # never below empty
    assert clock.banks == [1000, 0]
    turn = clock.set_turn(apb.Turn(), 1)
    assert (turn.time_left_ms, turn.time_bank_ms) == (200, 0)


def test_a_missed_deadline_empties_the_bank_and_a_disconnect_leaves_it() -> None:
    clock = MatchClock(TimeControl(200, time_bank_ms=1000), seats=2)
    clock.charge(0, dpb.PlayResponse(outcome=Outcome.TIMEOUT, used_ms=1200))
    clock.charge(1, dpb.PlayResponse(outcome=Outcome.DISCONNECTED))
    assert clock.banks == [0, 1000]


def test_without_a_bank_every_turn_is_the_move_time() -> None:
    clock = MatchClock(TimeControl(300, time_bank_ms=0), seats=2)
    clock.charge(0, played(5000))
    turn = clock.set_turn(apb.Turn(time_left_ms=300), 0)  # as TurnBuilder makes it
    assert (turn.time_left_ms, turn.time_bank_ms, clock.banks) == (300, 0, [0, 0])


def test_two_copies_fed_the_same_responses_agree_turn_by_turn() -> None:
    """The runner and a replica playing the match keep one each (apply_answer charges it)."""
    rules = Rules.preset("tablic", deals=1, move_time_ms=100)
    matches = [Match(rules, "bank"), Match(rules, "bank")]
    clocks = [MatchClock(TimeControl(100, time_bank_ms=700), 2), MatchClock(TimeControl(100, time_bank_ms=700), 2)]
    builder = TurnBuilder(matches[0], "g")
    conduct = [SeatConduct(), SeatConduct()]
    turn_id = 0
    while not matches[0].is_over:
        turn_id += 1
        seat = matches[0].turn
        turn = clocks[0].set_turn(builder.turn(turn_id), seat)
        assert turn.time_left_ms == 100 + clocks[1].banks[seat]
        resp = played(100 + 40 * (turn_id % 3))
        resp.play.CopyFrom(convert.play_to_pb(convert.packed_play(turn.legal_cards[0], turn.legal_captured[0])))
        for match, clock in zip(matches, clocks, strict=True):
            apply_answer(match, seat, resp, conduct[seat], clock)
    assert clocks[0].banks == clocks[1].banks == [0, 0]  # 24 turns a seat at up to 80 ms over: both spent


def test_an_in_process_answer_applies_as_its_wire_twin() -> None:
    """A bot in this process answers with an ``Answer`` (its play the rules' own); the match, the clock and the
    conduct come out as the same answers over the wire make them: plays, timeouts, illegal and empty plays."""
    rules = Rules.preset("tablic", deals=1, move_time_ms=100)
    matches = [Match(rules, "twin"), Match(rules, "twin")]
    clocks = [MatchClock(TimeControl(100, time_bank_ms=300), 2) for _ in matches]
    conducts = [[SeatConduct(), SeatConduct()] for _ in matches]
    n = 0
    while not matches[0].is_over:
        n += 1
        seat, obs = matches[0].turn, matches[0].observation(matches[0].turn)
        play, outcome, used = obs.legal_plays[-1], Outcome.PLAYED, 90 + 20 * (n % 3)
        if n % 7 == 0:
            outcome = Outcome.TIMEOUT
        elif n % 11 == 0 and (theirs := matches[0].observation(1 - seat).hand_cards):
            play = Play.of(str(theirs[0]))  # a card not in the hand: refused, counted illegal, a timeout
        wire = Outcome(outcome=outcome, used_ms=used, elapsed_ms=used, rejected=int(n % 5 == 0))
        if outcome == Outcome.PLAYED:
            wire.play.CopyFrom(convert.play_to_pb(play))
        here = Answer(outcome, play if outcome == Outcome.PLAYED else None, used, used, int(n % 5 == 0))
        for answer, match, clock, conduct in zip((wire, here), matches, clocks, conducts, strict=True):
            apply_answer(match, seat, answer, conduct[seat], clock)
        assert clocks[0].banks == clocks[1].banks
    assert match_record(matches[0], ["a", "b"], "g") == match_record(matches[1], ["a", "b"], "g")
    assert conducts[0] == conducts[1]
    assert conducts[0][0].timeouts and conducts[0][0].illegal and conducts[0][0].auto
    for empty_answer in (Answer(Outcome.PLAYED), Outcome(outcome=Outcome.PLAYED)):  # PLAYED with no play
        empty = Match(rules, "twin")
        first, conduct = empty.turn, SeatConduct()
        apply_answer(empty, first, empty_answer, conduct, None)  # played as a timeout, counted illegal
        assert empty.turn != first and empty.deal.plays[0].auto and (conduct.illegal, conduct.timeouts) == (1, 1)


# ---------------------------------------------------------------- what the SDK tells the bot


def test_the_sdk_clock_says_which_part_of_the_budget_is_bank() -> None:
    clock = Clock(1200, bank_ms=1000)
    assert (clock.budget, clock.bank) == (1.2, 1.0)
    assert Clock(200).bank == 0.0
    assert Clock(100, bank_ms=5000).bank == 0.1  # never more than the budget


def test_a_new_stream_starts_from_the_bots_earlier_estimate_until_its_own_first_echo() -> None:
    trips = RoundTrips(earlier=0.3)
    assert trips.credit_ms(1000) == 300
    trips.echoed(trips.ping(0.0), 0.45)  # the new route is slower: its own samples take over
    assert trips.estimate() == pytest.approx(0.45)
