"""The session registry's rules, the same for the arena's (Redis) and a local engine's (memory): a claim is
a compare-and-set, a refresh and a release touch only the caller's own session."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix
from redis.asyncio import Redis as AsyncRedis

from store.sessions import LocalSessions, SessionEntry, SessionRegistry, Sessions


def entry(bot: str, session: str) -> SessionEntry:
    return SessionEntry(bot, "127.0.0.1:1", session, "1.0", 2)


async def scenario(sessions: Sessions) -> list[Any]:
    """What each step answers; the two registries must answer alike."""
    a, b, c = entry("ann", "s1"), entry("ann", "s2"), entry("ann", "s3")
    seen: list[Any] = [await sessions.lookup("ann")]
    seen.append(await sessions.claim(a))  # none yet: registered
    seen.append(await sessions.claim(a))  # itself again: fine
    seen.append(await sessions.claim(b))  # another session holds the bot: refused, naming it
    seen.append(await sessions.claim(b, replaces="s9"))  # replacing a session that is not the one there: refused
    refreshed = await sessions.refresh([a, entry("bob", "s5")])
    seen.append(([e.session_id for e in refreshed.taken_over], [e.session_id for e in refreshed.missing]))
    seen.append(await sessions.claim(b, replaces="s1"))  # the takeover of s1
    refreshed = await sessions.refresh([a, b])
    seen.append(([e.session_id for e in refreshed.taken_over], [e.session_id for e in refreshed.missing]))
    await sessions.release(a)  # not its session any more: nothing happens
    found = await sessions.lookup("ann")
    seen.append(found.session_id if found else None)
    await sessions.release(b)
    seen.append(await sessions.lookup("ann"))
    seen.append(await sessions.claim(c, replaces="s2"))  # nothing there to replace: registered all the same
    found = await sessions.lookup("ann")
    seen.append((found.session_id, found.version, found.max_games, found.label) if found else None)
    return seen


def with_redis(body: Callable[[Sessions], Awaitable[list[Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        prefix = unique_prefix("sessions")
        client = AsyncRedis.from_url(REDIS_URL)
        try:
            return await body(SessionRegistry(client, prefix, 60_000))
        finally:
            await client.aclose()
            clear_prefix(redis.Redis.from_url(REDIS_URL), prefix)

    return asyncio.run(run())


def test_a_local_engine_keeps_sessions_by_the_arena_rules() -> None:
    arena = with_redis(scenario)
    local = asyncio.run(scenario(LocalSessions()))
    assert local == arena
    assert local[:4] == [None, None, None, "s1"]
    assert local[5] == ([], ["s5"]) and local[7] == (["s1"], [])
    assert local[-1] == ("s3", "1.0", 2, "ann@1.0")


@pytest.mark.parametrize("bot", ["ann", "ann@3"])
def test_labels_are_the_same_whoever_keeps_the_session(bot: str) -> None:
    async def body(sessions: Sessions) -> list[Any]:
        await sessions.claim(entry(bot, "s1"))
        found = await sessions.lookup(bot)
        return [found.label if found else None]

    assert asyncio.run(body(LocalSessions())) == with_redis(body)
