"""A standing ladder's fitted ratings over time (store/rating_history.py) on the test Redis: what is read back is
what was written, a bot's line stays bounded however long the ladder runs (its recent points whole, its older
ones evenly thinned, its first kept), and a refit's points for every bot go in one round trip."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix

from store.keys import Keys
from store.rating_history import (
    EVERY,
    MAX_POINTS,
    MOVE,
    RECENT,
    SPREAD,
    THINNED,
    Point,
    RatingHistory,
    limit,
    worth_recording,
)


class CountingConnection(redis.Connection):
    """A connection that counts its writes to the socket: one per command, one per whole pipeline."""

    sent = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        CountingConnection.sent += 1
        super().send_packed_command(command, check_health)


@pytest.fixture
def history() -> Iterator[RatingHistory]:
    pool = redis.ConnectionPool.from_url(REDIS_URL, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    prefix = unique_prefix("fitted-history")
    yield RatingHistory(client, prefix)
    clear_prefix(client, prefix)
    client.close()


def point(i: int, rating: float | None = None) -> Point:
    return Point(1_700_000_000.0 + 5 * i, 10 * i, 1500.0 + i if rating is None else rating, 1400.0 + i, 1600.0 + i)


def test_what_is_read_back_is_what_was_written(history: RatingHistory) -> None:
    written = [point(i) for i in range(30)]
    written[3] = Point(written[3].at, written[3].results, 1520.5, None, 1700.2)  # an end without bound
    written[4] = Point.of(written[4].at + 0.4, 44, 1499.96, float("-inf"), float("inf"))
    for p in written:
        history.record("L", {"ann": p})
    assert history.of("L", "ann") == written
    assert written[4] == Point(written[4].at, 44, 1500.0, None, None)
    assert history.of("L", "nobody") == [] and history.last("L", ["ann", "nobody"]) == {"ann": written[-1]}
    assert history.of("other", "ann") == []  # another league's lines are its own


def test_a_line_stays_bounded_keeps_its_recent_points_and_thins_the_older_evenly(history: RatingHistory) -> None:
    key = Keys(history.keys.prefix).league("L").fitted_history("ann")
    written = [point(i) for i in range(2_000)]
    thinned = 0
    for i, p in enumerate(written):
        thinned += history.record("L", {"ann": p})
        assert history.r.llen(key) <= MAX_POINTS, i
    kept = history.of("L", "ann")
    assert 0 < thinned <= 2_000 // (MAX_POINTS - SPREAD - RECENT - THINNED)  # at most once every 25 points
    assert RECENT < len(kept) <= MAX_POINTS
    index = [p.results // 10 for p in kept]  # the sequence number of each point kept
    assert all(p == written[n] for p, n in zip(kept, index, strict=True))  # each exactly as written
    assert index[0] == 0 and index[-RECENT:] == list(range(2_000 - RECENT, 2_000))  # the first, the last RECENT
    gaps = [b - a for a, b in itertools.pairwise(index)]
    assert gaps == sorted(gaps, reverse=True)  # never wider towards the present
    assert all(n % gaps[0] == 0 for n in index[: len(index) // 4])  # the oldest evenly spaced
    assert max(gaps) <= 2 * 2_000 // THINNED  # and the whole history is covered evenly: no hole


def test_bots_that_record_together_thin_apart(history: RatingHistory) -> None:
    bots = [f"bot{i:03d}" for i in range(200)]
    assert len({limit(b) for b in bots}) > SPREAD // 2
    thinned = [history.record("L", {b: point(k) for b in bots}) for k in range(3 * MAX_POINTS)]
    assert sum(thinned) >= len(bots) * 2 and max(thinned) < len(bots) // 4  # never all at one refit
    assert all(RECENT < len(history.of("L", b)) <= limit(b) for b in bots)


def test_a_refit_writes_every_bot_in_one_round_trip(history: RatingHistory) -> None:
    bots = [f"bot{i:03d}" for i in range(500)]
    history.record("L", {"warm-up": point(0)})  # the script is loaded once, at the first call
    before = CountingConnection.sent
    assert history.record("L", {bot: point(i) for i, bot in enumerate(bots)}) == 0
    assert CountingConnection.sent - before == 1
    before = CountingConnection.sent
    last = history.last("L", bots)
    assert CountingConnection.sent - before == 1  # the restarted scheduler's read: one pipeline
    assert last == {bot: point(i) for i, bot in enumerate(bots)}
    assert history.record("L", {}) == 0 and CountingConnection.sent - before == 1  # nothing moved: nothing sent


def test_a_point_is_worth_recording_when_it_moved_or_time_passed() -> None:
    last = point(0)
    assert worth_recording(None, last)
    assert not worth_recording(last, Point(last.at + 5, 99, last.rating + MOVE / 2, last.low, last.high))
    assert worth_recording(last, Point(last.at + 5, 99, last.rating + MOVE, last.low, last.high))
    assert worth_recording(last, Point(last.at + 5, 99, last.rating, last.low, (last.high or 0) - MOVE))
    assert worth_recording(last, Point(last.at + 5, 99, last.rating, None, last.high))  # an end lost its bound
    assert worth_recording(last, Point(last.at + EVERY, 99, last.rating, last.low, last.high))


def test_bad_points_and_names_are_refused_in_one_line(history: RatingHistory) -> None:
    with pytest.raises(ValueError, match="finite rating"):
        Point(0.0, 1, float("nan"), None, None)
    with pytest.raises(ValueError, match="number of results >= 0"):
        Point(0.0, -1, 1500.0, None, None)
    with pytest.raises(ValueError, match="bot's name"):
        history.record("L", {" ann": point(1)})
    with pytest.raises(ValueError, match="6 fields"):
        Point.decode(b"1 2 3")
