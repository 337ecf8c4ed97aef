"""A standing ladder's feeder and store on the test Redis (no workers: the queue is a list the test reads): a
stopped feeder never finishes the ladder, a bot that leaves has its matches not begun withdrawn, a withdrawn
match's late message is dropped by a worker, a match a worker holds is never withdrawn, and two owners adding
bots at once both land."""

from __future__ import annotations

import threading
from collections.abc import Callable

from arena_harness import scratch_redis

from config import load_settings
from engine_service.rules import Rules
from scheduler.league import Feeder
from store.keys import Keys
from store.leagues import League, LeagueStore
from store.leases import MatchLease
from worker.league_match import _play


def feed(store: LeagueStore, polls: int, sent: list[str], window: int = 2) -> Feeder:
    """The ladder's real feeder for ``polls`` polls; what it sends lands in ``sent``."""
    left = [polls]

    def stop() -> bool:
        left[0] -= 1
        return left[0] < 0

    feeder = Feeder(store, "L", lambda league, match: sent.append(match), window, poll=0, should_stop=stop)
    feeder.run()
    return feeder


def ladder(client: object, prefix: str, bots: list[str]) -> LeagueStore:
    store = LeagueStore(client, prefix)  # type: ignore[arg-type]
    store.create(League("L", Rules.preset("tablic", deals=1), "standing", deals="mirrored", bots=bots, seed="standing"))
    for bot in bots:  # connected: the registry holds a session for each
        store.r.set(Keys(prefix).session(bot), "{}")
    return store


def test_a_stopped_feeder_leaves_the_ladder_running_and_a_restart_plans_on() -> None:
    with scratch_redis("standing-stop") as (client, prefix):
        store = ladder(client, prefix, ["a", "b", "c"])
        sent: list[str] = []
        feed(store, 3, sent)
        assert store.status("L").status == "running"  # nothing left to play, and not finished
        assert len(sent) == 2 and store.note("L")["format"] == "standing"  # the window: 2 in flight
        first = store.match_ids("L")
        assert len(first) == 4  # twice the window planned: the queue just ahead of the workers
        feed(store, 3, sent)  # a restart: the same queue, nothing planned twice, nothing sent twice
        assert store.match_ids("L") == first and len(sent) == len(set(sent)) + 2  # in flight: sent again


def test_a_bot_that_leaves_has_its_matches_not_begun_withdrawn_and_late_messages_are_dropped() -> None:
    with scratch_redis("standing-leave") as (client, prefix):
        store = ladder(client, prefix, ["a", "b"])
        sent: list[str] = []
        feed(store, 3, sent)
        keys = store.keys("L")
        planned = store.match_ids("L")
        assert planned and all(set(store.seats("L")[m]) == {"a", "b"} for m in planned)
        held = planned[0]
        lease = MatchLease(client, keys, held, 10_000, "worker/test")
        assert lease.acquire()  # a worker is on this one: it is played, never withdrawn
        store.remove_bots("L", ["b"])
        feed(store, 3, sent)
        assert store.match_ids("L") == [held] and store.load("L").retired == ["b"]
        assert client.hget(keys.open_deals, store.match("L", held)["deal"]) == b"1"  # its partner counted out
        gone = planned[1]
        assert store.match("L", gone) == {} and not client.sismember(keys.queued, gone)
        settings = load_settings()
        settings.prefix = prefix
        assert _play(store, settings, "L", gone, "worker/late") == "unknown"  # its message, come late: dropped
        lease.release()


def test_two_owners_adding_bots_at_once_both_land() -> None:
    with scratch_redis("standing-join") as (client, prefix):
        store = ladder(client, prefix, ["a", "b"])
        store.set_status("L", "running")
        barrier = threading.Barrier(8)
        errors: list[BaseException] = []

        def join(bot: str) -> Callable[[], None]:
            def run() -> None:
                try:
                    barrier.wait()
                    LeagueStore(client, prefix).add_bots("L", [bot])
                except Exception as exc:  # reported below, with every thread joined
                    errors.append(exc)

            return run

        threads = [threading.Thread(target=join(f"n{i}")) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert sorted(store.load("L").bots) == sorted(["a", "b", *(f"n{i}" for i in range(8))])
