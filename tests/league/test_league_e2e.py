"""Leagues end to end: real Redis, real Celery worker processes, a real engine service, real bots.

Each test runs its own arena on a private key prefix (queue included).
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter

import pytest
from arena_harness import Arena, Proc

from engine_service.rules import verify_record
from scheduler.league import plan_league, prepare
from store.keys import LeagueKeys
from store.leagues import LeagueStore
from store.results import LeagueResults, stored_record

pytestmark = pytest.mark.slow

FAST_REDELIVERY = {
    "TABLANETTE_VISIBILITY_TIMEOUT": "12",
    "TABLANETTE_TASK_TIME_LIMIT": "10",
    "TABLANETTE_RESTORE_INTERVAL": "1",
    "TABLANETTE_LEASE_MS": "2000",
    "TABLANETTE_GRACE_MS": "3000",
}


def start_stack(arena: Arena, bots: dict[str, str], workers: int = 2, think_ms: int = 0) -> dict[str, Proc]:
    arena.extra_env.update(FAST_REDELIVERY)
    _, port = arena.start_engine()
    for name, kind in bots.items():
        extra = ("--think-ms", str(think_ms)) if think_ms else ()
        arena.start_python_bot(kind, name, arena.add_bot(name), port, *extra)
    procs = {f"w{i}": arena.start_worker(f"w{i}") for i in range(1, workers + 1)}
    arena.wait_connected(*bots)
    return procs


def create_league(arena: Arena, name: str, bots: list[str], *args: str) -> None:
    for cmd in (["league", "create", name, *args], ["league", "add-bot", name, *bots]):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stderr + done.stdout


def wait_until(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise TimeoutError(what)


def finished_ids(arena: Arena, league: str) -> list[str]:
    return [m.decode() for m in arena.redis.lrange(LeagueKeys(arena.prefix, league).finished_order, 0, -1)]


def test_double_round_robin_with_two_workers_counts_every_match_once(arena: Arena, tmp_path) -> None:  # type: ignore[no-untyped-def]
    bots = {"ann": "greedy", "bea": "random", "cid": "greedy", "dot": "random"}
    start_stack(arena, bots)
    create_league(
        arena, "rr", list(bots), "--format", "double-round-robin", "--games", "2", "--rule", "target=41", "--k", "32"
    )

    run = arena.tablanette("league", "start", "rr", "--window", "4", timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout

    store = LeagueStore(arena.redis, arena.prefix)
    league = store.load("rr")
    plan = plan_league(league)
    finished = finished_ids(arena, "rr")
    assert sorted(finished) == sorted(m.match_id for m in plan)  # every match, exactly once
    assert len(finished) == len(set(finished)) == 6 * 2 * 2
    meetings = Counter(frozenset(m.seats) for m in plan)
    assert set(meetings.values()) == {4}  # each pairing: 2 games x 2 cycles

    ladder = LeagueResults(arena.redis, arena.prefix).standings("rr")
    assert {r.bot for r in ladder} == set(bots)
    for row in ladder:
        assert row.wins + row.draws + row.losses == row.games == 12
    assert sum(r.rating for r in ladder) == pytest.approx(1500 * 4, abs=1e-3)

    out = tmp_path / "rr.jsonl"
    export = arena.tablanette("records", "export", "--league", "rr", "--out", str(out))
    assert export.returncode == 0, export.stderr
    verify = arena.tablanette("records", "verify", str(out))
    assert verify.returncode == 0, verify.stderr + verify.stdout
    assert "24 record(s) verified" in verify.stdout
    status = json.loads(arena.tablanette("league", "status", "rr", "--json").stdout)
    assert status["status"] == "finished" and status["done"] == 24 and status["failed"] == 0


def test_a_worker_killed_mid_match_has_its_match_played_again_and_counted_once(arena: Arena) -> None:
    bots = {"slow1": "random", "slow2": "random"}
    workers = start_stack(arena, bots, workers=2, think_ms=15)
    create_league(arena, "kill", list(bots), "--games", "2", "--rule", "deals=2")
    feeder = arena.spawn(
        "feeder", ["python", "-c", "from cli import main; main()", "league", "start", "kill", "--window", "1"]
    )
    keys = LeagueKeys(arena.prefix, "kill")

    def running_worker() -> str | None:
        for mid in arena.redis.lrange(keys.plan, 0, -1):
            m = arena.redis.hgetall(keys.match(mid.decode()))
            if m.get(b"status") == b"running":
                return m[b"worker"].decode()
        return None

    wait_until(lambda: running_worker() is not None, 60, "no match started")
    time.sleep(0.8)  # well inside the match (two deals of ~50 moves at 15 ms each)
    victim_name = running_worker()
    assert victim_name is not None
    victim_mid = next(
        mid.decode()
        for mid in arena.redis.lrange(keys.plan, 0, -1)
        if arena.redis.hget(keys.match(mid.decode()), "status") == b"running"
    )
    workers[victim_name.split("@")[0]].stop(signal.SIGKILL)

    wait_until(lambda: feeder.popen.poll() is not None, 120, "league did not finish:\n" + feeder.text())
    assert feeder.popen.returncode == 0, feeder.text()
    finished = finished_ids(arena, "kill")
    assert sorted(finished) == sorted(
        m.match_id for m in plan_league(LeagueStore(arena.redis, arena.prefix).load("kill"))
    )
    assert len(finished) == len(set(finished)) == 2
    victim = arena.redis.hgetall(keys.match(victim_mid))
    assert victim[b"status"] == b"done"
    assert int(victim[b"starts"]) == 2  # played again after the kill ...
    assert b"attempts" not in victim  # ... which the match is not charged for
    rows = LeagueResults(arena.redis, arena.prefix).standings("kill")
    assert [r.games for r in rows] == [2, 2]  # ... and counted once
    verify_record(stored_record(arena.redis.hget(keys.records, victim_mid), victim_mid))


def test_a_stopped_scheduler_resumes_without_replaying_or_skipping(arena: Arena) -> None:
    bots = {"p1": "random", "p2": "greedy", "p3": "random"}
    start_stack(arena, bots, workers=2)
    create_league(arena, "resume", list(bots), "--games", "4", "--rule", "target=31")
    keys = LeagueKeys(arena.prefix, "resume")
    total = 3 * 4

    first = arena.spawn(
        "feeder-1",
        ["python", "-c", "from cli import main; main()", "league", "start", "resume", "--window", "2"],
    )
    wait_until(lambda: arena.redis.llen(keys.finished_order) >= 3, 120, "no progress:\n" + first.text())
    first.stop(signal.SIGKILL)  # the scheduler dies mid-tournament
    stopped_at = arena.redis.llen(keys.finished_order)
    assert stopped_at < total

    second = arena.tablanette("league", "start", "resume", "--window", "2", timeout=300)
    assert second.returncode == 0, second.stderr + second.stdout

    finished = finished_ids(arena, "resume")
    plan_ids = [m.decode() for m in arena.redis.lrange(keys.plan, 0, -1)]
    assert sorted(finished) == sorted(plan_ids) and len(plan_ids) == total  # nothing skipped
    assert len(finished) == len(set(finished))  # nothing counted twice
    attempts = [int(arena.redis.hget(keys.match(mid), "starts")) for mid in plan_ids]
    assert attempts == [1] * total  # nothing replayed: every match was played exactly once
    rows = LeagueResults(arena.redis, arena.prefix).standings("resume")
    assert sum(r.games for r in rows) == 2 * total


def test_a_bot_never_plays_more_matches_at_once_than_its_max_games(arena: Arena) -> None:
    arena.extra_env.update(FAST_REDELIVERY)
    _, port = arena.start_engine()
    bots = {"solo": "1", "duo": "2", "trio": "3"}
    for name, limit in bots.items():
        arena.start_python_bot("random", name, arena.add_bot(name), port, "--max-games", limit, "--think-ms", "3")
    for w in ("w1", "w2", "w3"):
        arena.start_worker(w)
    arena.wait_connected(*bots)
    create_league(arena, "slots", list(bots), "--games", "4", "--rule", "deals=1")
    run = arena.tablanette("league", "start", "slots", "--window", "0", timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout

    keys = LeagueKeys(arena.prefix, "slots")
    spans: dict[str, list[tuple[float, float]]] = {b: [] for b in bots}
    for mid in arena.redis.lrange(keys.plan, 0, -1):
        m = arena.redis.hgetall(keys.match(mid.decode()))
        assert m[b"status"] == b"done"
        for bot in json.loads(m[b"seats"]):
            spans[bot].append((float(m[b"started_at"]), float(m[b"finished_at"])))
    for bot, limit in bots.items():
        events = sorted([(s, 1) for s, _ in spans[bot]] + [(f, -1) for _, f in spans[bot]])
        running = peak = 0
        for _, step in events:
            running += step
            peak = max(peak, running)
        assert peak <= int(limit), f"{bot} played {peak} matches at once (max_games {limit})"


@pytest.mark.parametrize(("players", "expected"), [("3", 4 * 3), ("4", 6)])
def test_multi_player_tables_and_partnerships_are_rated_and_verified(
    arena: Arena, tmp_path, players: str, expected: int
) -> None:  # type: ignore[no-untyped-def]
    bots = {"n1": "greedy", "n2": "random", "n3": "greedy", "n4": "random"}
    start_stack(arena, bots)
    create_league(arena, "tables", list(bots), "--players", players, "--rule", "deals=1")
    run = arena.tablanette("league", "start", "tables", "--window", "0", timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout

    store = LeagueStore(arena.redis, arena.prefix)
    assert store.status("tables").done == expected  # 3 seats: C(4,3) tables x 3 rotations; 4: 3 splits x 2
    rows = LeagueResults(arena.redis, arena.prefix).standings("tables")
    assert sum(r.rating for r in rows) == pytest.approx(1500 * 4, abs=1e-3)
    for row in rows:
        assert row.wins + row.draws + row.losses == row.games
    out = tmp_path / "tables.jsonl"
    assert arena.tablanette("records", "export", "--league", "tables", "--out", str(out)).returncode == 0
    verify = arena.tablanette("records", "verify", str(out))
    assert verify.returncode == 0 and f"{expected} record(s) verified" in verify.stdout, verify.stderr
    if players == "4":
        record = json.loads(out.read_text().splitlines()[0])
        assert record["teams"] == [[0, 2], [1, 3]]


def test_cancel_stops_a_running_league_and_keeps_the_results_it_has(arena: Arena) -> None:
    bots = {"c1": "random", "c2": "random", "c3": "random"}
    # A match is 48 moves of at least 100 ms (5 s); the 16 left after the first two would take the two workers
    # 40 s, far longer than the cancel command takes to start, however loaded the machine: with 10 ms a move,
    # one slow start of it let the whole league finish first.
    start_stack(arena, bots, think_ms=100)
    create_league(arena, "cancel", list(bots), "--games", "6", "--rule", "deals=1")
    keys = LeagueKeys(arena.prefix, "cancel")
    feeder = arena.spawn(
        "feeder",
        ["python", "-c", "from cli import main; main()", "league", "start", "cancel", "--window", "0"],
    )
    wait_until(lambda: arena.redis.llen(keys.finished_order) >= 2, 60, "no match finished:\n" + feeder.text())
    done = arena.tablanette("league", "cancel", "cancel")
    assert done.returncode == 0, done.stderr
    finished_at_cancel = arena.redis.llen(keys.finished_order)
    assert finished_at_cancel < 18, "the league finished before the cancel: nothing left to cancel"
    wait_until(lambda: feeder.popen.poll() is not None, 30, "the feeder did not stop on cancel")

    def settled() -> bool:  # matches already running finish; queued ones are skipped
        return arena.redis.scard(keys.state_set("running")) == 0

    wait_until(settled, 30, "running matches did not end")
    time.sleep(1.0)
    status = json.loads(arena.tablanette("league", "status", "cancel", "--json").stdout)
    assert status["status"] == "cancelled"
    assert 2 <= status["done"] < status["total"] == 18
    assert status["done"] <= finished_at_cancel + 2  # the two workers' running matches at most: no queued one
    finished = finished_ids(arena, "cancel")
    assert len(finished) == len(set(finished)) == status["done"]
    rows = LeagueResults(arena.redis, arena.prefix).standings("cancel")
    assert sum(r.games for r in rows) == 2 * status["done"]  # what was played stays counted, once


def test_a_match_that_keeps_failing_is_marked_failed_with_its_error_and_the_league_ends(arena: Arena) -> None:
    bots = {"f1": "random", "f2": "random"}
    start_stack(arena, bots)
    arena.extra_env["TABLANETTE_MAX_ATTEMPTS"] = "2"
    create_league(arena, "poison", list(bots), "--games", "1")
    store = LeagueStore(arena.redis, arena.prefix)
    prepare(store, "poison")
    keys = LeagueKeys(arena.prefix, "poison")
    arena.redis.hset(keys.match("r1/p1/g1"), "seats", '["f1"]')  # one bot for two seats: every attempt fails
    # restart the workers so they read the lower delivery cap
    for proc in [p for p in arena.children if p.name.startswith("w")]:
        proc.stop()
    arena.start_worker("w9")
    run = arena.tablanette("league", "start", "poison", "--window", "0", timeout=120)
    assert run.returncode == 0, run.stderr + run.stdout
    status = store.status("poison")
    assert (status.done, status.failed, status.total) == (0, 1, 1)
    failed = arena.redis.hgetall(keys.match("r1/p1/g1"))
    assert failed[b"status"] == b"failed"
    assert failed[b"attempts"] == b"2" and b"1 bots for 2 seats" in failed[b"first_error"]
    assert all(r.games == 0 for r in LeagueResults(arena.redis, arena.prefix).standings("poison"))
    arena.redis.hset(keys.meta, "rules", '{"preset": "no-such-preset"}')  # the scheduler says so, clearly
    broken = arena.tablanette("league", "status", "poison")
    assert broken.returncode == 0  # status does not need the rules
    broken = arena.tablanette("league", "start", "poison")
    assert broken.returncode == 2 and "has invalid rules: unknown preset 'no-such-preset'" in broken.stderr
