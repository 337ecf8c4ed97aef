"""A standing ladder's feeder records each bot's fitted rating over time as it refits (no workers: the matches it
plans are played in-process by built-in bots and committed by the ledger, as a worker commits them): each point is
the published ladder's rating and interval, a retired bot gets none, a refit where nothing moved writes nothing, and
a restarted feeder goes on from the points already there."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from arena_harness import scratch_redis

from bots import make_bot, play_match
from engine_service.rules import Rules, match_record
from scheduler.league import Feeder
from scheduler.standing import StandingPlanner
from scheduler.standing_feed import StandingKeeper
from store.keys import Keys
from store.leagues import League, LeagueStore
from store.ledger import Ledger
from store.rating_history import EVERY, Point, RatingHistory
from store.results import LeagueResults
from store.units import mirror_unit

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}


@pytest.fixture
def store() -> Iterator[LeagueStore]:
    """A standing ladder of three connected bots, on its own prefix of the test Redis."""
    with scratch_redis("standing-history") as (client, prefix):
        store = LeagueStore(client, prefix)
        bots = ["a", "b", "c"]
        store.create(League("L", Rules.preset("tablic", deals=1), "standing", deals="mirrored", bots=bots, seed="h"))
        for bot in bots:
            client.set(Keys(prefix).session(bot), "{}")
        yield store


def feed(store: LeagueStore, polls: int = 2) -> None:
    """The ladder's real feeder (a fresh one: a restarted scheduler) for ``polls`` polls; nothing is sent."""
    left = [polls]

    def stop() -> bool:
        left[0] -= 1
        return left[0] < 0

    Feeder(store, "L", lambda league, match: None, 2, poll=0, should_stop=stop).run()


def play_planned(store: LeagueStore) -> int:
    """Play every match planned and not finished, as a worker would, greedy against random; how many."""
    keys, ledger, league = store.keys("L"), Ledger(store.r), store.load("L")
    seats = store.seats("L")
    todo = [mid for mid, state in store.unfinished("L") if state in ("planned", "queued")]
    for mid in todo:
        seed, who = store.match("L", mid)["seed"], seats[mid]
        players = [make_bot("greedy" if i == 0 else "random", f"{mid}/{b}") for i, b in enumerate(who)]
        record = match_record(play_match(league.rules, seed, players), list(who), f"L/{mid}")
        unit = mirror_unit(seed, who)
        ledger.commit(keys, mid, record, who, [CLEAN] * 2, league.k, league.initial, unit=unit)
    return len(todo)


def published(store: LeagueStore) -> tuple[int, dict[str, Point]]:
    """The ladder the feeder published: its results, and each rated bot's rating and interval as a point."""
    fit = LeagueResults(store.r, store.prefix).cached("L", "fit")
    assert fit is not None
    out = {}
    for r in fit["ratings"]:
        if r["games"]:
            low, high = (float("inf") if x is None else x for x in r["interval"])
            out[r["bot"]] = Point.of(0, fit["results"], r["rating"], low, high)
    return fit["results"], out


def test_each_refit_records_the_published_rating_of_every_bot_that_plays(store: LeagueStore) -> None:
    history = RatingHistory(store.r, store.prefix)
    feed(store)  # plans; nothing played yet: nothing fitted, nothing recorded
    assert all(history.of("L", b) == [] for b in "abc")
    for refits in range(1, 4):
        assert play_planned(store) > 0
        feed(store)  # catches up, refits, publishes the ladder, records the points
        results, shown = published(store)
        assert results == LeagueResults(store.r, store.prefix).outcome_count("L") > 0
        assert sorted(shown) == ["a", "b", "c"]
        for bot, expected in shown.items():
            line = history.of("L", bot)
            assert 1 <= len(line) <= refits
            assert [(p.results, p.rating, p.low, p.high) for p in line[-1:]] == [
                (results, expected.rating, expected.low, expected.high)
            ], bot
            assert [p.results for p in line] == sorted({p.results for p in line})  # one point a refit, in order
    store.remove_bots("L", ["c"])  # retired: its games stay on the ladder, its line stops
    before = history.of("L", "c")
    assert play_planned(store) > 0
    feed(store)
    assert history.of("L", "c") == before and history.of("L", "a")[-1].results == published(store)[0]


def test_a_refit_where_nothing_moved_writes_nothing_and_a_restart_goes_on(store: LeagueStore) -> None:
    feed(store)
    play_planned(store)
    keeper = StandingKeeper(store, "L", StandingPlanner(store.load("L")))
    keeper.start(2, [])
    league, fit, count = store.load("L"), keeper.planner.shown(), keeper.planner.tally.count
    assert sorted(keeper.record(league, fit, count, 1_000.0)) == ["a", "b", "c"]
    assert keeper.record(league, fit, count, 1_005.0) == {}  # nothing moved: nothing written
    again = StandingKeeper(store, "L", StandingPlanner(store.load("L")))  # restarted: reads each bot's last point
    assert again.record(league, fit, count, 1_010.0) == {}
    assert sorted(again.record(league, fit, count, 1_000.0 + EVERY)) == ["a", "b", "c"]  # an hour on: one each
    history = RatingHistory(store.r, store.prefix)
    assert [[p.at for p in history.of("L", b)] for b in "abc"] == [[1_000.0, 1_000.0 + EVERY]] * 3
