"""A standing ladder end to end: real Redis, Celery workers, engine service and bots.

It plays by itself, takes a bot added while it runs (and places it), drops a bot removed while it runs, and
survives a worker killed mid-match and a scheduler killed and started again without losing or doubling a
result.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Callable

import pytest
from arena_harness import Arena, Proc

from store.keys import LeagueKeys
from store.leagues import LeagueStore
from store.results import LeagueResults

pytestmark = pytest.mark.slow

FEED = [sys.executable, "-c", "from cli import main; main()", "league", "start", "ladder", "--window", "2"]
FAST = {
    "TABLANETTE_LEASE_MS": "2000",
    "TABLANETTE_GRACE_MS": "3000",
    "TABLANETTE_VISIBILITY_TIMEOUT": "12",
    "TABLANETTE_TASK_TIME_LIMIT": "10",
    "TABLANETTE_RESTORE_INTERVAL": "1",
}


def start_stack(arena: Arena, bots: dict[str, str]) -> tuple[dict[str, Proc], int]:
    """An engine, the bots connected to it, two workers; the workers and the engine's port."""
    arena.extra_env.update(FAST)
    _, port = arena.start_engine()
    for name, kind in bots.items():
        arena.start_python_bot(kind, name, arena.add_bot(name), port, "--think-ms", "2")
    workers = {w: arena.start_worker(w) for w in ("w1", "w2")}
    arena.wait_connected(*bots)
    return workers, port


def playing_on(arena: Arena, keys: LeagueKeys, worker: str) -> bool:
    """Whether ``worker`` is in the middle of a match of the league now."""
    for mid in arena.redis.smembers(keys.running):
        if (arena.redis.hget(keys.match(mid.decode()), "worker") or b"").decode().startswith(worker + "@"):
            return True
    return False


def tablanette(arena: Arena, *args: str) -> str:
    done = arena.tablanette(*args)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def wait_until(
    predicate: Callable[[], bool],
    timeout: float,
    what: Callable[[], str],
    every: float = 0.1,
    feeder: Proc | None = None,
) -> None:
    """Until ``predicate`` holds; a clear error after ``timeout``, or at once if ``feeder`` has exited."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline or (feeder is not None and not feeder.alive()):
            raise TimeoutError(what())
        time.sleep(every)


def finished_ids(arena: Arena, keys: LeagueKeys) -> list[str]:
    return [m.decode() for m in arena.redis.lrange(keys.finished_order, 0, -1)]


def played_by(arena: Arena, keys: LeagueKeys, bot: str) -> int:
    return sum(
        bot in json.loads(arena.redis.hget(keys.match(mid), "seats") or b"[]") for mid in finished_ids(arena, keys)
    )


def plan(arena: Arena, keys: LeagueKeys) -> list[str]:
    return [m.decode() for m in arena.redis.lrange(keys.plan, 0, -1)]


def test_a_standing_ladder_plays_on_takes_bots_and_survives_kills(arena: Arena) -> None:
    bots = {"s1": "greedy", "s2": "random", "s3": "greedy"}
    workers, port = start_stack(arena, bots)
    tablanette(arena, "league", "create", "ladder", "--format", "standing", "--rule", "deals=1")
    tablanette(arena, "league", "add-bot", "ladder", *bots)
    keys = LeagueKeys(arena.prefix, "ladder")
    done = lambda: arena.redis.llen(keys.finished_order)  # noqa: E731

    feeder: Proc = arena.spawn("feeder-1", FEED)
    wait_until(lambda: done() >= 8, 120, lambda: "the ladder did not play:\n" + feeder.text(), feeder=feeder)

    # a bot joins while it runs: it is placed and plays
    arena.start_python_bot("greedy", "late", arena.add_bot("late"), port, "--think-ms", "2")
    arena.wait_connected("late")
    tablanette(arena, "league", "add-bot", "ladder", "late")
    wait_until(
        lambda: played_by(arena, keys, "late") >= 4, 120, lambda: "the bot added did not play:\n" + feeder.text()
    )

    # a worker dies mid-match, then the scheduler dies; a new scheduler picks up where it was
    wait_until(lambda: playing_on(arena, keys, "w1"), 60, lambda: "w1 never played:\n" + feeder.text(), 0.005, feeder)
    workers["w1"].stop(signal.SIGKILL)
    at_kill = done()
    wait_until(
        lambda: done() >= at_kill + 4, 120, lambda: "no progress on one worker:\n" + feeder.text(), feeder=feeder
    )
    feeder.stop(signal.SIGKILL)
    stopped_at = done()
    again = arena.spawn("feeder-2", FEED)
    wait_until(
        lambda: done() >= stopped_at + 8,
        120,
        lambda: "the restarted scheduler did not go on:\n" + again.text(),
        feeder=again,
    )

    # a bot removed while it runs is paired no more; its games stay
    assert "retired" in tablanette(arena, "league", "remove-bot", "ladder", "s2")
    time.sleep(2.5)  # the scheduler reads the league again within a second, and withdraws s2's matches not begun
    since = len(plan(arena, keys))
    wait_until(
        lambda: done() >= stopped_at + 16, 120, lambda: "no progress after the removal:\n" + again.text(), feeder=again
    )
    assert not any(
        "s2" in json.loads(arena.redis.hget(keys.match(m), "seats") or b"[]") for m in plan(arena, keys)[since:]
    )

    status = json.loads(tablanette(arena, "league", "status", "ladder", "--json"))
    assert status["status"] == "running" and status["planner"]["format"] == "standing"  # it never finishes

    again.stop(signal.SIGKILL)
    wait_until(
        lambda: arena.redis.scard(keys.queued) + arena.redis.scard(keys.running) == 0,
        120,
        lambda: "the workers did not drain the queue",
    )
    finished = finished_ids(arena, keys)
    assert len(finished) == len(set(finished))  # no result doubled
    assert arena.redis.llen(keys.outcomes) == len(finished)
    ids = plan(arena, keys)
    assert len(ids) == len(set(ids))  # no match id reused across the restart
    states = {mid: (arena.redis.hget(keys.match(mid), "status") or b"").decode() for mid in ids}
    assert set(finished) <= set(ids) and {states[m] for m in finished} == {"done"}
    assert {s for m, s in states.items() if m not in set(finished)} <= {"planned"}  # nothing lost in flight
    rows = LeagueResults(arena.redis, arena.prefix).standings("ladder")
    assert sum(r.games for r in rows) == 2 * len(finished)
    league = LeagueStore(arena.redis, arena.prefix).load("ladder")
    assert league.bots == ["s1", "s3", "late"] and league.retired == ["s2"]
    fit = LeagueResults(arena.redis, arena.prefix).cached("ladder", "fit")
    assert fit is not None and {"s1", "s2", "s3", "late"} <= {r["bot"] for r in fit["ratings"]}
