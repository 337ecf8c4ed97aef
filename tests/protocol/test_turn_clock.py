"""How a bot reads a turn's clock: the wall clock, or (a hosted bot in a league on the CPU clock) its CPU time."""

from __future__ import annotations

import time

import pytest

from bots.sdk import Clock
from engine_service.rules import Rules
from engine_service.time_control import TimeControl, wall_cap_ms
from store.leagues import League
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb


def test_the_wall_cap_of_a_cpu_turn_is_three_move_times_and_at_least_two_seconds_more() -> None:
    assert wall_cap_ms(300) == 2300
    assert wall_cap_ms(2000) == 6000
    assert wall_cap_ms(2000, given=2500) == 2500  # the league's own cap wins


def test_a_time_control_is_made_from_the_league_and_crosses_the_wire_whole() -> None:
    rules = Rules.preset("tablic", move_time_ms=400)
    league = League("tc", rules, clock="cpu", wall_cap_ms=900, latency_credit_ms=0, time_bank_ms=3000)
    control = TimeControl.of_league(league)
    assert control == TimeControl(400, "cpu", 900, 0, 3000)
    assert control.turn_wall_cap_ms == 900
    assert TimeControl.from_pb(control.to_pb()) == control
    assert control.to_pb().clock == apb.CLOCK_CPU
    wall = TimeControl(400, latency_credit_ms=250)
    assert (wall.turn_wall_cap_ms, TimeControl.from_pb(wall.to_pb())) == (0, wall)  # no cap on the wall clock
    assert TimeControl(400, "cpu").turn_wall_cap_ms == 2400
    assert wall.check(rules) is wall


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: TimeControl(400, "sundial"), "unknown clock 'sundial'"),
        (lambda: TimeControl(0), "move time must be positive"),
        (lambda: TimeControl(400, time_bank_ms=-1), "time_bank_ms must be between"),
        (lambda: TimeControl(400, latency_credit_ms=2**31), "latency_credit_ms must be between"),
        (lambda: TimeControl.from_pb(dpb.TimeControl(move_time_ms=-5)), "move time must be positive"),
        (lambda: TimeControl(300).check(Rules.preset("tablic", move_time_ms=400)), "300 ms a move for rules of 400"),
    ],
)
def test_a_bad_time_control_is_refused_with_a_clear_error(make: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        make()  # type: ignore[operator]


def test_a_cpu_clock_does_not_run_while_the_bot_waits_and_runs_while_it_computes() -> None:
    clock = Clock(500, cpu=True, cap_ms=60_000)
    time.sleep(0.3)  # waiting for a core (or anything else) costs no CPU time
    assert clock.remaining() > 0.45
    assert 30 < clock.wall_remaining() <= 60  # the cap runs on the wall clock
    end = time.process_time() + 0.2
    while time.process_time() < end:
        pass
    assert clock.remaining() < 0.31
    assert clock.budget == 0.5


def test_a_wall_clock_runs_whatever_the_bot_does() -> None:
    clock = Clock(500)
    time.sleep(0.3)
    assert clock.remaining() < 0.21
    assert clock.wall_deadline == clock.deadline  # on the wall clock the cap is the deadline
