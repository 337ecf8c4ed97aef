"""Running matches, live: their public events pushed to spectators by Server-Sent Events.

``GET /api/leagues/L/live/MATCH`` streams a running match's public events
(:mod:`store.live`, written by its runner from public facts only) as they are
played: each as an SSE message whose ``id`` is ``<attempt>-<number>``, whose
``event`` is its kind (``deal``, ``round``, ``play``, ``deal-over``, ``hands``,
``over``) and whose ``data`` is the event's JSON; the stream ends after ``over``.
A client that reconnects sends back the last id it got (``Last-Event-ID``, as
browsers' ``EventSource`` do by themselves, or ``?after=``) and gets every event
after it, nothing missed, nothing twice; a new try of the match (after an
arena fault) starts at event 1 of a higher attempt, and the page starts afresh.

One web process reads each watched match's stream once, however many watch it:
:class:`LiveHub` keeps one reader task per match (``XREAD BLOCK`` on the
stream; it also keeps the match marked as watched, without which its runner
publishes nothing, :func:`store.live.mark_watched`), encodes what each read
brings once, and hands it to each spectator's queue as one batch, which the
spectator's response writes in one go. A spectator that does not read is
dropped once :data:`SPECTATOR_BUFFER` events wait for it (it may
reconnect and resume), so one slow client never holds up the others or the
process's memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import redis
from redis.asyncio import Redis as AsyncRedis

from store import live
from store.keys import LeagueKeys

log = logging.getLogger("tablanette.web.live")

SPECTATOR_BUFFER = 1000
"""Events that may wait for one spectator before it is dropped."""
BLOCK_MS = 5000
"""How long one read of a stream waits for new events."""
HEARTBEAT_S = 15.0
"""A comment line this often keeps a quiet stream's connection open through proxies."""


Entry = tuple[tuple[int, int], str, bool]
"""One event as spectators are sent it: its order (attempt, number), its SSE text, whether it is ``over``."""


@dataclass(eq=False)
class Spectator:
    queue: asyncio.Queue[list[Entry] | None] = field(default_factory=asyncio.Queue)
    """Batches of events, one a read of the stream; None once dropped."""
    waiting: int = 0
    """Events queued and not sent yet (at most :data:`SPECTATOR_BUFFER`)."""
    dropped: bool = False


class LiveHub:
    """One stream reader per watched match, fanning its events out to that match's spectators."""

    def __init__(self, r: AsyncRedis) -> None:
        self.r = r
        self._watchers: dict[tuple[str, str], set[Spectator]] = {}
        self._readers: dict[tuple[str, str], asyncio.Task[None]] = {}

    def watching(self) -> int:
        """Spectators connected now, over every match."""
        return sum(len(s) for s in self._watchers.values())

    def join(self, keys: LeagueKeys, match_id: str, after: str) -> Spectator:
        """A new spectator of the match; its reader (shared) starts after entry id ``after`` if it is new."""
        key = (keys.league, match_id)
        spectator = Spectator()
        self._watchers.setdefault(key, set()).add(spectator)
        if key not in self._readers or self._readers[key].done():
            self._readers[key] = asyncio.ensure_future(self._read(keys, match_id, after))
        return spectator

    def leave(self, keys: LeagueKeys, match_id: str, spectator: Spectator) -> None:
        """The spectator is gone; the match's reader stops with its last spectator."""
        key = (keys.league, match_id)
        if self._forget(key, spectator):
            reader = self._readers.pop(key, None)
            if reader is not None:
                reader.cancel()

    def _forget(self, key: tuple[str, str], spectator: Spectator) -> bool:
        """Take ``spectator`` off the match's list; True if that was its last spectator."""
        watchers = self._watchers.get(key)
        if watchers is None:
            return False
        watchers.discard(spectator)
        if watchers:
            return False
        del self._watchers[key]
        return True

    async def _read(self, keys: LeagueKeys, match_id: str, after: str) -> None:
        key = (keys.league, match_id)
        last = after
        said = -math.inf
        while self._watchers.get(key):
            try:
                if time.monotonic() - said >= live.WATCHED_EVERY_S:  # its runner publishes while we say so
                    await live.mark_watched(self.r, keys, match_id)
                    said = time.monotonic()
                last, events = await live.wait_after(self.r, keys, match_id, last, BLOCK_MS)
            except (redis.RedisError, OSError) as exc:
                log.warning("live %s/%s: cannot read the stream (%s); trying again", keys.league, match_id, exc)
                await asyncio.sleep(1.0)
                continue
            if not events:
                continue
            batch = [
                (live.event_order(entry_id), sse(entry_id, event), event.get("kind") == "over")
                for entry_id, event in events
            ]
            for spectator in list(self._watchers.get(key, ())):  # each event is encoded once, however many watch
                if spectator.waiting + len(batch) > SPECTATOR_BUFFER:  # it does not read: drop it, never wait
                    spectator.dropped = True
                    spectator.queue.put_nowait(None)  # it learns it was dropped when it reads again
                    self._forget(key, spectator)
                else:
                    spectator.waiting += len(batch)
                    spectator.queue.put_nowait(batch)
        if self._readers.get(key) is asyncio.current_task():  # no await since the check: nobody joined
            del self._readers[key]

    async def close(self) -> None:
        for reader in self._readers.values():
            reader.cancel()
        self._readers.clear()
        self._watchers.clear()


def sse(entry_id: str, event: dict[str, Any]) -> str:
    """One SSE message (the JSON has no newline, so one ``data`` line)."""
    return (
        f"id: {entry_id}\nevent: {event.get('kind', 'message')}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"
    )


async def stream(hub: LiveHub, keys: LeagueKeys, match_id: str, after: tuple[int, int] | None) -> AsyncIterator[str]:
    """The SSE text of the match's events after ``after``, live, until its ``over`` event."""
    start = "0-0" if after is None else f"{after[0]}-{after[1]}"
    spectator = hub.join(keys, match_id, start)
    try:
        yield "retry: 2000\n\n"
        last = after or (0, 0)
        before = []
        for entry_id, event in await live.read_after_async(hub.r, keys, match_id, after):  # what came before
            last = live.event_order(entry_id)
            before.append(sse(entry_id, event))
            if event.get("kind") == "over":
                yield "".join(before)
                return
        if before:
            yield "".join(before)
        while True:
            try:
                async with asyncio.timeout(HEARTBEAT_S):
                    batch = await spectator.queue.get()
            except TimeoutError:
                yield ": still here\n\n"
                continue
            if batch is None:  # dropped: it fell too far behind
                yield "event: dropped\ndata: {}\n\n"
                return
            spectator.waiting -= len(batch)
            fresh = []
            over = False
            for order, message, ends in batch:
                if order <= last:  # read by the catch-up already
                    continue
                last = order
                fresh.append(message)
                if ends:
                    over = True
                    break
            if fresh:
                yield "".join(fresh)  # one write for what one read of the stream brought
            if over:
                return
    finally:
        hub.leave(keys, match_id, spectator)
