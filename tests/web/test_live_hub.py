"""Live streams in Redis, the runner's side and the web's fan-out: ids that resume, tries that follow each
other, a spectator that never reads dropped with a bound, the others unaffected, and a match published only
once someone watches it, then from its first event (a real Redis, no web server)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix
from redis.asyncio import Redis as AsyncRedis

from cli.local import free_port
from engine_service.rules import Match, Rules
from engine_service.rules.spectator import PublicFeed
from store import live
from store.keys import Keys, LeagueKeys
from web import live as web_live
from worker import live as worker_live
from worker.live import LiveMatch


def events_of(seed: str, target: int = 21) -> list[dict[str, Any]]:
    rules = Rules.preset("tablic").with_overrides({"target": target})
    match, feed = Match(rules, seed), PublicFeed(rules)
    while not match.is_over:
        match.play(match.legal_plays()[0])
    return [e.to_json() for e in feed.update(match)]


async def with_redis(body: Any) -> None:
    prefix = unique_prefix("live")
    r = AsyncRedis.from_url(REDIS_URL)
    try:
        await body(r, Keys(prefix).league("lg"))
    finally:
        await r.aclose()
        clear_prefix(redis.Redis.from_url(REDIS_URL), prefix)


def test_events_resume_after_an_id_and_a_second_try_follows_the_first() -> None:
    async def body(r: AsyncRedis, keys: LeagueKeys) -> None:
        events = events_of("a")
        half = len(events) // 2
        await live.publish(r, keys, "m1", 1, events[:half])
        assert await r.ttl(keys.live("m1")) > live.FINISHED_TTL_S  # running: kept long
        got = await live.read_after_async(r, keys, "m1", None)
        assert [i for i, _ in got] == [f"1-{n}" for n in range(1, half + 1)]
        assert [e for _, e in await live.read_after_async(r, keys, "m1", (1, 3))] == events[3:half]
        again = events_of("b")  # the match played again after a fault: a new try, ids above the old ones
        await live.publish(r, keys, "m1", 2, again)
        rest = await live.read_after_async(r, keys, "m1", (1, half))
        assert [i for i, _ in rest] == [f"2-{n}" for n in range(1, len(again) + 1)]
        assert 0 < await r.ttl(keys.live("m1")) <= live.FINISHED_TTL_S  # over: kept a little while
        assert await live.wait_after(r, keys, "m1", f"2-{len(again)}", 10) == (f"2-{len(again)}", [])

    asyncio.run(with_redis(body))


def test_a_batch_is_one_entry_read_from_inside_it_and_old_one_event_entries_still_read() -> None:
    async def body(r: AsyncRedis, keys: LeagueKeys) -> None:
        events = events_of("d")
        await r.xadd(keys.live("m3"), {"e": json.dumps(events[0])}, id="1-1")  # as streams were before batches
        await live.publish(r, keys, "m3", 1, events[1:10])
        await live.publish(r, keys, "m3", 1, events[10:])
        assert await r.xlen(keys.live("m3")) == 3  # one entry a batch, not one an event
        assert [e for _, e in await live.read_after_async(r, keys, "m3", None)] == events
        last, inside = await live.wait_after(r, keys, "m3", "1-4", 10)  # resumed from inside the first batch
        assert [i for i, _ in inside] == [f"1-{n}" for n in range(5, len(events) + 1)]
        assert last == f"1-{len(events)}"
        await r.xadd(keys.live("m3"), {"x": "from a later version"}, id=f"1-{len(events) + 5}")
        assert await live.wait_after(r, keys, "m3", last, 10) == (f"1-{len(events) + 5}", [])  # passed over
        assert [e for _, e in await live.read_after_async(r, keys, "m3", (1, 12))] == events[12:]

    asyncio.run(with_redis(body))


def test_a_spectator_that_never_reads_is_dropped_and_the_others_get_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_live, "SPECTATOR_BUFFER", 20)
    monkeypatch.setattr(web_live, "BLOCK_MS", 100)

    async def body(r: AsyncRedis, keys: LeagueKeys) -> None:
        events = events_of("c")
        assert len(events) > 60
        hub = web_live.LiveHub(r)
        reader = web_live.stream(hub, keys, "m2", None)
        assert await reader.__anext__() == "retry: 2000\n\n"
        sleeper = hub.join(keys, "m2", "0-0")  # joins, never reads
        got: list[str] = []

        async def read_all() -> None:
            async for chunk in reader:
                got.append(chunk)

        task = asyncio.ensure_future(read_all())
        for i in range(0, len(events), 10):  # published as a runner does, in batches
            await live.publish(r, keys, "m2", 1, events[i : i + 10])
            await asyncio.sleep(0.01)
        await asyncio.wait_for(task, 20)
        assert re.findall(r"^id: (.*)$", "".join(got), re.M) == [f"1-{n}" for n in range(1, len(events) + 1)]
        assert sleeper.dropped and sleeper.waiting <= web_live.SPECTATOR_BUFFER
        assert hub.watching() == 0  # the reader left at its end; the sleeper was dropped
        hub.leave(keys, "m2", sleeper)  # leaving once dropped is harmless
        await hub.close()

    asyncio.run(with_redis(body))


@pytest.mark.parametrize("raw", ["", "7", "1-", "-1", "0-3", "1-2-3", "a-b", "1-99999999999999"])
def test_a_malformed_event_id_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="event id is <attempt>-<number>"):
        live.parse_event_id(raw)


# ------------------------------------------------------------------ the runner's side: published once watched


async def play_shown(match: Match, watched: LiveMatch, until: int | None = None) -> None:
    """Play the match's first legal plays (to its end, or ``until`` plays in all), showing it to ``watched`` as a
    runner does (as it starts and after each answer), with a turn of the event loop between answers."""
    watched.seen(match)  # showing it twice the same is harmless
    while not match.is_over and (until is None or sum(len(d.plays) for d in [*match.deals, match.deal]) < until):
        match.play(match.legal_plays()[0])
        watched.seen(match)
        await asyncio.sleep(0)


async def eventually(check: Any, what: str) -> None:
    for _ in range(2000):  # 20 s at most; a loaded machine only makes it slower, never wrong
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


def test_a_match_nobody_watches_writes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_live, "LOOK_S", 0.01)

    async def body(r: AsyncRedis, keys: LeagueKeys) -> None:
        rules = Rules.preset("tablic").with_overrides({"target": 21})
        match = Match(rules, "quiet")
        watched = LiveMatch(r, keys, "m4", 1, rules)
        await play_shown(match, watched)
        await watched.close()
        assert match.is_over and not watched.watched
        assert await r.exists(keys.live("m4")) == 0  # no stream, no events worked out
        assert watched.feed.events == []

    asyncio.run(with_redis(body))


@pytest.mark.parametrize("when", ["midway", "after-the-last-play"])
def test_a_spectator_who_comes_later_gets_every_event_from_the_first(
    monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """Marked watched midway (seen by a later look) or after the match's last play (seen by the last look, as
    the runner closes): the stream holds every event of the try, numbered from 1, the same as a feed that saw
    every play."""
    monkeypatch.setattr(worker_live, "LOOK_S", 0.01)

    async def body(r: AsyncRedis, keys: LeagueKeys) -> None:
        rules = Rules.preset("tablic").with_overrides({"target": 21})
        match = Match(rules, "late")
        watched = LiveMatch(r, keys, "m5", 2, rules)
        if when == "midway":
            await play_shown(match, watched, until=20)
            assert await r.exists(keys.live("m5")) == 0
            await live.mark_watched(r, keys, "m5")
            await eventually(lambda: r.exists(keys.live("m5")), "the runner never saw its spectator")
            assert watched.watched
        await play_shown(match, watched)
        if when != "midway":
            await live.mark_watched(r, keys, "m5")
        await watched.close()
        got = await live.read_after_async(r, keys, "m5", None)
        assert [i for i, _ in got] == [f"2-{n}" for n in range(1, len(got) + 1)]
        assert [e for _, e in got] == events_of("late")
        assert got[-1][1]["kind"] == "over" and 0 < await r.ttl(keys.live("m5")) <= live.FINISHED_TTL_S

    asyncio.run(with_redis(body))


def test_a_runner_that_cannot_look_plays_on(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Its Redis gone: the looks fail, each logged; the match is played to its end and closes."""
    monkeypatch.setattr(worker_live, "LOOK_S", 0.01)

    async def body(_: AsyncRedis, keys: LeagueKeys) -> None:
        nowhere = AsyncRedis(host="127.0.0.1", port=free_port(), socket_connect_timeout=1)
        rules = Rules.preset("tablic").with_overrides({"target": 21})
        match = Match(rules, "cut")
        watched = LiveMatch(nowhere, keys, "m6", 1, rules)
        await play_shown(match, watched)
        await watched.close()
        await nowhere.aclose()
        assert match.is_over and not watched.watched

    asyncio.run(with_redis(body))
    assert "cannot tell whether someone watches" in caplog.text


def test_the_hub_marks_a_match_watched_while_it_has_spectators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web_live, "BLOCK_MS", 50)

    async def body(r: AsyncRedis, keys: LeagueKeys) -> None:
        hub = web_live.LiveHub(r)
        assert not await live.is_watched(r, keys, "m7")
        spectator = hub.join(keys, "m7", "0-0")
        await eventually(lambda: live.is_watched(r, keys, "m7"), "a watched match was never marked")
        assert 0 < await r.ttl(keys.watched("m7")) <= live.WATCHED_TTL_S  # it lapses once nobody says it again
        hub.leave(keys, "m7", spectator)
        await hub.close()

    asyncio.run(with_redis(body))
