"""The fitted-ladder cache is parsed once per change, and no reader ever serves a stale parse.

Every ladder and bot page reads the league's cached fit (a few hundred KB of
JSON for a big league). A reader keeps its parse with the stamp written beside
the cache, and reads only the stamp while it is unchanged. These tests use two
readers (two web processes) against one real Redis.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix

from engine_service.rules import Rules
from store.keys import Keys
from store.leagues import League, LeagueStore
from store.results import LeagueResults


@pytest.fixture
def store() -> Iterator[tuple[redis.Redis, str]]:
    client = redis.Redis.from_url(REDIS_URL)
    prefix = unique_prefix("fitcache")
    LeagueStore(client, prefix).create(League("L", Rules.preset("tablic", deals=1), games=1, seed="s"))
    yield client, prefix
    clear_prefix(client, prefix)
    client.close()


def fit(n: int) -> dict[str, object]:
    return {"results": n, "computed_at": float(n), "ratings": [{"bot": f"b{i}", "rating": 1500 + i} for i in range(n)]}


def test_a_reader_parses_the_cache_once_and_sees_every_new_one(store: tuple[redis.Redis, str]) -> None:
    client, prefix = store
    writer, reader = LeagueResults(client, prefix), LeagueResults(client, prefix)
    assert reader.cached("L") is None
    writer.cache("L", "fit", fit(3))
    first = reader.cached("L")
    assert first == fit(3)
    assert reader.cached("L") is first  # unchanged: the same parse, not a new one
    writer.cache("L", "fit", fit(5))  # another process refits
    assert reader.cached("L") == fit(5)
    writer.cache("L", "los", {"results": 5, "los": [[0.5]]})  # the other cache has a stamp of its own
    assert reader.cached("L") == fit(5) and reader.cached("L", "los") == {"results": 5, "los": [[0.5]]}


def test_a_cache_written_behind_the_stamps_back_is_never_served_from_an_old_parse(
    store: tuple[redis.Redis, str],
) -> None:
    """The stamp changes with the data in one transaction; data written without it is not a cache the
    arena writes, but a parse must still not outlive a stamp change."""
    client, prefix = store
    writer, reader = LeagueResults(client, prefix), LeagueResults(client, prefix)
    writer.cache("L", "fit", fit(1))
    assert reader.cached("L") == fit(1)
    keys = Keys(prefix).league("L")
    client.hset(keys.fit_stamps, "fit", "changed")  # a new stamp: whatever the data, it is read again
    client.set(keys.fit, '{"results": 9}')
    assert reader.cached("L") == {"results": 9}


def test_a_cache_from_before_stamps_is_stamped_and_then_parsed_once(store: tuple[redis.Redis, str]) -> None:
    client, prefix = store
    keys = Keys(prefix).league("L")
    client.set(keys.fit, '{"results": 2, "computed_at": 1.0}')  # as an older arena left it: no stamp
    reader = LeagueResults(client, prefix)
    assert reader.cached("L") == {"results": 2, "computed_at": 1.0}
    assert client.hget(keys.fit_stamps, "fit") is not None
    again = reader.cached("L")
    assert reader.cached("L") is again == {"results": 2, "computed_at": 1.0}
