"""Faults injected into a real league, with the arena's default settings: nothing lost, nothing
counted twice, no bot blamed, no process restarted but the one the test killed.

Each test prints (and writes to artifacts/fault-recovery.txt) the time from the
fault to the commit of the matches that were running when it struck.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_kit import FaultArena, wait_until

pytestmark = pytest.mark.slow
LEASE_S = 30  # the default TABLANETTE_LEASE_MS


@pytest.fixture
def fa(tmp_path: Path) -> Iterator[FaultArena]:
    arena = FaultArena.create(tmp_path)
    try:
        yield arena
    finally:
        arena.close()


def test_a_worker_killed_mid_match(fa: FaultArena) -> None:
    fa.start_league()
    match_id, worker = next(iter(fa.wait_mid_league().items()))
    at = fa.kill(fa.workers[worker.split("@")[0]])
    fa.recovery("worker killed mid-match (SIGKILL)", at, [match_id])
    fa.check_clean()
    victim = fa.arena.redis.hgetall(fa.keys.match(match_id))
    assert int(victim[b"starts"]) >= 2 and b"attempts" not in victim  # played again, never charged to the match
    assert int(victim[b"interruptions"]) >= 1


def test_a_worker_paused_past_its_lease_never_plays_beside_the_new_runner(fa: FaultArena) -> None:
    fa.start_league()
    match_id, worker = next(iter(fa.wait_mid_league().items()))
    paused = fa.workers[worker.split("@")[0]]
    paused.send_signal(signal.SIGSTOP)
    at = time.time()
    fa.recovery("worker paused past its lease (SIGSTOP)", at, [match_id])  # another runner plays it meanwhile
    time.sleep(max(0.0, at + LEASE_S + 3 - time.time()))
    committed = fa.arena.redis.hgetall(fa.keys.match(match_id))
    assert committed[b"status"] == b"done" and int(committed[b"starts"]) >= 2, committed
    paused.send_signal(signal.SIGCONT)
    # Resumed mid-match, it finds its lease gone and stops playing at once (the lease cancels the play):
    # it neither plays on beside the runner that took the match over nor gets as far as a commit.
    stopped = f"lost the lease of match {match_id} while playing it; leaving it to the new holder"
    wait_until(lambda: stopped in paused.text(), 60, lambda: f"{worker} to stop playing {match_id}:\n{paused.tail()}")
    fa.check_clean()
    assert fa.arena.redis.hgetall(fa.keys.match(match_id)) == committed  # nothing of the match changed after


@pytest.mark.parametrize("delay", [1, 8])  # at once, and near the end of the grace period
def test_an_engine_replica_killed_and_restarted_within_the_grace_period(fa: FaultArena, delay: int) -> None:
    fa.start_league(single_address=True)  # its bots know only this replica: they must wait for it
    running = fa.wait_mid_league()
    child, port = fa.engines["engine-a"]
    at = fa.kill(child)
    time.sleep(delay)
    fa.start_engine("engine-a", port)
    fa.recovery(f"engine replica killed, restarted after {delay} s", at, list(running))
    fa.check_clean()


def test_an_engine_replica_killed_for_good_its_bots_move_to_the_other(fa: FaultArena) -> None:
    fa.start_league(single_address=False)
    running = fa.wait_mid_league()
    at = fa.kill(fa.engines["engine-a"][0])
    fa.recovery("engine replica killed for good", at, list(running))
    fa.check_clean()


def test_redis_killed_and_restarted_from_its_append_only_file(fa: FaultArena) -> None:
    fa.start_league()
    running = fa.wait_mid_league()
    assert fa.redis_proc is not None
    at = fa.kill(fa.redis_proc)
    time.sleep(3)
    fa.start_redis()
    fa.recovery("Redis killed, restarted from its AOF 3 s later", at, list(running))
    fa.check_clean()


def test_redis_paused(fa: FaultArena) -> None:
    fa.start_league()
    running = fa.wait_mid_league()
    assert fa.redis_proc is not None
    fa.redis_proc.send_signal(signal.SIGSTOP)
    at = time.time()
    time.sleep(7)
    fa.redis_proc.send_signal(signal.SIGCONT)
    fa.recovery("Redis paused for 7 s (SIGSTOP)", at, list(running))
    fa.check_clean()


def test_the_scheduler_killed_and_started_again(fa: FaultArena) -> None:
    """A second scheduler of the league, started while the first feeds it (a standby on another machine, a
    supervisor's restart), waits and says why; the first killed, it takes over by itself and ends the league."""
    fa.start_league()
    fa.wait_mid_league()
    first = fa.feeder
    assert first is not None
    fa.start_feeder()
    standby = fa.feeder
    assert standby is not None and standby is not first
    standby.wait_for(r"is fed by another scheduler \(\S+\); this one waits", "the standby to say it waits")
    fa.kill(first)
    fa.check_clean()
    plan = [m.decode() for m in fa.arena.redis.lrange(fa.keys.plan, 0, -1)]
    starts = [int(fa.arena.redis.hget(fa.keys.match(m), "starts") or 0) for m in plan]
    assert starts == [1] * len(starts)  # nothing replayed
