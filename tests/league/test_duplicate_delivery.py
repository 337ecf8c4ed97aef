"""A match delivered twice: the second delivery, read before the first was committed, must not play it again.

A scheduler that restarts re-sends every match that was in flight (a message may
have been lost with it), so a worker may hold a second message for a match that
another worker is finishing. If it read the match before that commit and takes
the lease right after it is let go, it must see that the match is done, not
start it again (its games would be played twice, for nothing).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from arena_harness import REDIS_URL, scratch_redis

from config import load_settings
from engine_service.rules import Rules
from scheduler.league import prepare
from store.leagues import League, LeagueStore
from worker.league_match import _play


class StaleFirstRead(LeagueStore):
    """A store whose first read of a match is the one taken before the other runner's commit."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        super().__init__(client, prefix)
        self.stale: dict[str, str] = {}

    def match(self, league_id: str, match_id: str) -> dict[str, str]:
        if self.stale:
            spec, self.stale = self.stale, {}
            return spec
        return super().match(league_id, match_id)


@pytest.fixture
def store() -> Iterator[StaleFirstRead]:
    with scratch_redis("dup") as (r, prefix):
        yield StaleFirstRead(r, prefix)


def test_a_second_delivery_finds_the_match_done_once_it_holds_the_lease(store: StaleFirstRead) -> None:
    store.create(League("dup", Rules.preset(), bots=["a", "b"]))
    match_id = prepare(store, "dup")[0].match_id
    store.stale = {**store.match("dup", match_id), "status": "running"}  # what it read while the other played
    store.r.hset(store.keys("dup").match(match_id), "status", "done")  # the other runner committed, let go
    settings = load_settings(redis_url=REDIS_URL, prefix=store.prefix)
    assert _play(store, settings, "dup", match_id, "worker-2") == "already-done"
    assert store.r.hget(store.keys("dup").match(match_id), "starts") is None  # not started again
    assert not store.r.exists(store.keys("dup").lease(match_id))  # and the lease let go
