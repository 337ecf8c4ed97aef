"""How a bot reads a turn's clock: the wall clock, or (a hosted bot in a league on the CPU clock) its CPU time."""

from __future__ import annotations

import time

from bots.sdk import Clock
from engine_service.turns import wall_cap_ms


def test_the_wall_cap_of_a_cpu_turn_is_three_move_times_and_at_least_two_seconds_more() -> None:
    assert wall_cap_ms(300) == 2300
    assert wall_cap_ms(2000) == 6000
    assert wall_cap_ms(2000, given=2500) == 2500  # the league's own cap wins


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
