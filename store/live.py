"""A running match's public events in Redis, for spectators: one stream per match, kept while it runs.

The runner playing a match appends the events of its spectator feed
(:class:`engine_service.rules.spectator.PublicFeed`: public facts only) to the
match's stream, ``LeagueKeys.live``, in batches, one stream entry a batch (one
entry a move cost the league a tenth of its moves a second, in Redis's work and
the runner's). An event's id is ``<attempt>-<event id>``: the try of the match
(its ``starts``) and the event's number in that try; an entry's id is that of the
last event it holds. So a match played again after a fault starts a new run of
ids above the old ones, and a spectator reading on sees the new try begin (its
first event is a ``deal`` event numbered 1). Readers get events, never entries:
what an entry holds at or before the id they read after is left out. The stream expires
:data:`RUNNING_TTL_S` after its last write while the match runs (a runner that
died leaves nothing for long), and :data:`FINISHED_TTL_S` after its ``over``
event: by then the finished match's replay is what spectators see.

A match nobody watches is not published at all: most are never watched, and a
stream each would cost the league Redis's work and memory and the runner its
time for nothing. While it has spectators of a match, the web keeps the match's
``LeagueKeys.watched`` key set (:func:`mark_watched`, :data:`WATCHED_TTL_S`); the
runner looks at it (:func:`is_watched`) as the match starts, every
``worker.live.LOOK_S`` after, and as it ends, and from the first time it is set
publishes every event of the try, from its first: a spectator who came before
then reads them all, only a moment later (each event holds the whole public
position, and none is missed).

Event ids travel to spectators as ``<attempt>-<id>`` too (the SSE ``id:`` field,
sent back as ``Last-Event-ID``); :func:`parse_event_id` reads one back and
refuses anything else.

>>> parse_event_id("2-17"), parse_event_id(" 1-1 ")
((2, 17), (1, 1))
>>> parse_event_id("17")
Traceback (most recent call last):
...
ValueError: an event id is <attempt>-<number>, e.g. 1-42, not '17'
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import redis
from redis.asyncio import Redis as AsyncRedis

from .codec import text
from .keys import LeagueKeys

RUNNING_TTL_S = 3600
"""How long a running match's stream outlives its last write (a runner that died leaves nothing for long)."""
FINISHED_TTL_S = 120
"""How long a finished match's stream stays, for spectators still reading its last events."""
WATCHED_TTL_S = 30
"""How long a match counts as watched after the web last said so (it says so every :data:`WATCHED_EVERY_S`
while it has spectators of the match)."""
WATCHED_EVERY_S = 10.0
MAX_EVENT_NUMBER = 10**12
_EVENT_ID = re.compile(r"^\s*([0-9]{1,6})-([0-9]{1,13})\s*$")


def parse_event_id(raw: str) -> tuple[int, int]:
    """``(attempt, number)`` from ``"<attempt>-<number>"``; ValueError for anything else."""
    m = _EVENT_ID.match(raw)
    if m is None or not int(m.group(1)) > 0 or int(m.group(2)) > MAX_EVENT_NUMBER:
        raise ValueError(f"an event id is <attempt>-<number>, e.g. 1-42, not {raw[:40]!r}")
    return int(m.group(1)), int(m.group(2))


async def publish(
    r: AsyncRedis, keys: LeagueKeys, match_id: str, attempt: int, events: Sequence[dict[str, Any]]
) -> None:
    """Append ``events`` (each with its ``id``, numbered from 1 in this attempt) to the match's stream."""
    if not events:
        return
    key = keys.live(match_id)
    pipe = r.pipeline(transaction=False)
    pipe.xadd(key, {"b": json.dumps(list(events), separators=(",", ":"))}, id=f"{attempt}-{events[-1]['id']}")
    over = events[-1].get("kind") == "over"
    pipe.expire(key, FINISHED_TTL_S if over else RUNNING_TTL_S)
    await pipe.execute()


async def mark_watched(r: AsyncRedis, keys: LeagueKeys, match_id: str) -> None:
    """Someone watches the match: its runner publishes it (for :data:`WATCHED_TTL_S` unless said again)."""
    await r.set(keys.watched(match_id), 1, ex=WATCHED_TTL_S)


async def is_watched(r: AsyncRedis, keys: LeagueKeys, match_id: str) -> bool:
    """Whether someone watches the match (or did within :data:`WATCHED_TTL_S`)."""
    return bool(await r.exists(keys.watched(match_id)))


def event_order(event_id: str) -> tuple[int, int]:
    """``(attempt, number)`` of an id the stream itself gave (``"0-0"``: before any event)."""
    attempt, _, number = event_id.partition("-")
    return int(attempt), int(number)


def _decoded(entries: Any, after: tuple[int, int] | None) -> list[tuple[str, dict[str, Any]]]:
    """``(event id, event)`` of the events after ``after`` in stream entries as redis-py gives them (an entry
    holds a batch, ``b``, or one event, ``e``, as streams written before batches did)."""
    out = []
    for entry_id, fields in entries or ():
        attempt = text(entry_id).partition("-")[0]
        batch = fields.get(b"b", fields.get("b"))
        one = fields.get(b"e", fields.get("e"))
        for event in json.loads(batch) if batch is not None else [json.loads(one)] if one is not None else []:
            if after is None or (int(attempt), int(event["id"])) > after:
                out.append((f"{attempt}-{event['id']}", event))
    return out


def read_after(r: redis.Redis, keys: LeagueKeys, match_id: str, after: tuple[int, int] | None) -> list[tuple[str, Any]]:
    """The events after ``after`` (``(attempt, number)``; None: from the first), as ``(id, event)``."""
    start = "-" if after is None else f"({after[0]}-{after[1]}"
    return _decoded(r.xrange(keys.live(match_id), min=start), after)


async def read_after_async(
    r: AsyncRedis, keys: LeagueKeys, match_id: str, after: tuple[int, int] | None
) -> list[tuple[str, Any]]:
    """:func:`read_after` on an asyncio client."""
    start = "-" if after is None else f"({after[0]}-{after[1]}"
    return _decoded(await r.xrange(keys.live(match_id), min=start), after)


async def match_status_async(r: AsyncRedis, keys: LeagueKeys, match_id: str) -> str | None:
    """The match's status (``planned`` when it has none yet), or None when the league or the match is unknown
    (one round trip, on the asyncio client a spectator's request already holds)."""
    pipe = r.pipeline(transaction=False)
    pipe.exists(keys.meta)
    pipe.exists(keys.match(match_id))
    pipe.hget(keys.match(match_id), "status")
    league, match, status = await pipe.execute()
    if not (league and match):
        return None
    return text(status) if status else "planned"


async def wait_after(
    r: AsyncRedis, keys: LeagueKeys, match_id: str, after: str, block_ms: int
) -> tuple[str, list[tuple[str, Any]]]:
    """The events after id ``after`` (``"0-0"``: any), waiting up to ``block_ms`` for one, and the id to read
    after next: the last entry read, even one that held no event this reader knows (so it never reads an
    entry twice)."""
    got: Any = await r.xread({keys.live(match_id): after}, block=block_ms, count=500)
    if not got:
        return after, []
    return text(got[0][1][-1][0]), _decoded(got[0][1], event_order(after))
