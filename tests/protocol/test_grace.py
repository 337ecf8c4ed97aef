"""The grace period a bot that is gone gets, and the arena's own faults never using it up (engine_service/grace.py).

One rule for both places that wait for a bot (the gateway, the match runner), checked here on a clock the test
moves by hand; the fault suite (tests/faults: Redis paused, replicas killed) checks it on real processes.
"""

from __future__ import annotations

import pytest

from engine_service.grace import ARENA_PATIENCE, SLOW_STORE_S, GracePeriod
from engine_service.turn_wait import turn_window


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bot_gone_gets_its_grace_period_from_when_it_went() -> None:
    clock = Clock()
    assert GracePeriod(10, clock=clock).remaining() == 10
    assert GracePeriod(10, since=96.0, clock=clock).remaining() == 6  # it went 4 s before the turn
    assert GracePeriod(10, since=200.0, clock=clock).remaining() == 10  # never more than a whole period


def test_the_arenas_fault_gives_a_whole_grace_period_from_then_and_marks_the_wait() -> None:
    clock = Clock()
    wait = GracePeriod(10, since=95.0, clock=clock)
    clock.now += 4  # 1 s of the bot's grace left
    wait.excuse("replica r1 did not answer")
    assert wait.remaining() == 10 and wait.fault == "replica r1 did not answer"
    clock.now += 2
    wait.excuse("replica r2 could not reach its store")  # the later fault's reason is kept
    assert wait.remaining() == 10 and wait.fault == "replica r2 could not reach its store"


def test_the_arenas_faults_wait_at_most_arena_patience_periods_in_all() -> None:
    clock = Clock()
    wait = GracePeriod(10, clock=clock)
    for _ in range(10):
        clock.now += 9
        wait.excuse("the store is down")
    assert clock.now + wait.remaining() == 100.0 + ARENA_PATIENCE * 10
    clock.now = 100.0 + ARENA_PATIENCE * 10
    assert wait.remaining() == 0


@pytest.mark.parametrize(("took", "excused"), [(SLOW_STORE_S / 2, False), (SLOW_STORE_S + 0.5, True)])
def test_a_lookup_the_store_held_up_is_excused_and_a_quick_one_is_not(took: float, excused: bool) -> None:
    clock = Clock()
    wait = GracePeriod(10, clock=clock)
    asked = clock.now
    clock.now += took
    wait.looked_up(asked, "bot 'alpha'")
    assert (wait.fault is not None) == excused
    assert wait.remaining() == pytest.approx(10 if excused else 10 - took)
    if excused:
        assert wait.fault == "the session registry (Redis) held up the lookup of bot 'alpha'"


def test_a_turn_waits_its_move_time_and_credit_on_the_wall_clock_and_the_wall_cap_when_metered() -> None:
    assert turn_window(1.0) == 1.0
    assert turn_window(1.0, credit_ms=150) == 1.15
    assert turn_window(1.0, credit_ms=150, wall_cap_ms=3000) == 3.0  # a metered bot earns no latency credit
    assert turn_window(5.0, wall_cap_ms=3000) == 5.0  # never less than the move time
