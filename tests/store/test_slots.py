"""Game slots: no bot plays more matches at once than the max_games of its Hello."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
import redis
from arena_harness import scratch_redis

from store.keys import Keys
from store.slots import GameSlots


@pytest.fixture
def client() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("slots") as scratch:
        yield scratch


def connect(r: redis.Redis, prefix: str, bot: str, max_games: int) -> None:
    r.set(Keys(prefix).session(bot), json.dumps({"replica": "x", "session_id": "s", "max_games": max_games}))


def test_a_bot_gets_no_more_slots_than_its_hello_allows(client: tuple[redis.Redis, str]) -> None:
    r, prefix = client
    connect(r, prefix, "a", 2)
    connect(r, prefix, "b", 5)
    assert GameSlots(r, prefix).acquire(["a", "b"], "m1", 10_000)
    assert GameSlots(r, prefix).acquire(["a", "b"], "m2", 10_000)
    assert not GameSlots(r, prefix).acquire(["a", "b"], "m3", 10_000)  # a is full ...
    assert r.zcard(Keys(prefix).slots("b")) == 2  # ... so b was not taken either (all or none)
    assert GameSlots(r, prefix).acquire(["a", "b"], "m1", 10_000)  # the same match again is no new game
    GameSlots(r, prefix).release(["a", "b"], "m1")
    assert GameSlots(r, prefix).acquire(["a", "b"], "m3", 10_000)


def test_a_crashed_workers_slots_expire(client: tuple[redis.Redis, str]) -> None:
    r, prefix = client
    connect(r, prefix, "a", 1)
    assert GameSlots(r, prefix).acquire(["a", "c"], "m1", 200)
    assert not GameSlots(r, prefix).acquire(["a", "c"], "m2", 200)
    time.sleep(0.3)
    assert GameSlots(r, prefix).acquire(["a", "c"], "m2", 200)


def test_an_unknown_bot_counts_as_one_game_at_a_time(client: tuple[redis.Redis, str]) -> None:
    r, prefix = client
    assert GameSlots(r, prefix).max_games("ghost") == 1
    assert GameSlots(r, prefix).acquire(["ghost"], "m1", 10_000)
    assert not GameSlots(r, prefix).acquire(["ghost"], "m2", 10_000)
