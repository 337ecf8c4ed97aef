"""Live streams in Redis and the web's fan-out: ids that resume, tries that follow each other, and a
spectator that never reads dropped with a bound, the others unaffected (a real Redis, no web server)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix
from redis.asyncio import Redis as AsyncRedis

from engine_service.rules import Match, Rules
from engine_service.rules.spectator import PublicFeed
from store import live
from store.keys import Keys, LeagueKeys
from web import live as web_live


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
