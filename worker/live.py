"""A match's public events, published while its runner plays it and someone watches it.

The runner shows :class:`LiveMatch` its one copy of the match (its driver's, which
follows the replica playing it, or plays it) as it starts and after every answer.
While nobody watches the match, that is all: nothing is worked out or written
(most matches are never watched). :class:`LiveMatch` looks whether someone does
(:func:`store.live.is_watched`, set by the web while it has spectators of the
match) as the match starts, every :data:`LOOK_S` after, and as it ends. From the
first time someone does,
:class:`~engine_service.rules.spectator.PublicFeed` reads the public events off
the match, every one from the try's first (public facts only: nothing a spectator
gets can show a hidden card), and they are appended to the match's stream
(:mod:`store.live`) in batches: whatever happened within :data:`FLUSH_S` of a
first event goes in one write, so spectators cost the match one Redis write per
batch, never one per move, and nothing at all while nobody's stream can be
written: a failed write or look is logged, its events dropped, and the match goes
on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import redis
from redis.asyncio import Redis

from engine_service.rules import Match, Rules
from engine_service.rules.spectator import PublicFeed
from store import live
from store.keys import LeagueKeys

log = logging.getLogger("tablanette.worker.live")

FLUSH_S = 0.1
"""How long the events after a first one may wait to join its write."""
LOOK_S = 0.5
"""How often a match nobody watches looks again whether someone does (a spectator's wait for the first events)."""


class LiveMatch:
    """One try of one match, published as it is played once someone watches it; :meth:`close` sends what is
    left."""

    def __init__(
        self, r: Redis, keys: LeagueKeys, match_id: str, attempt: int, rules: Rules, reveal_after: int = 0
    ) -> None:
        self.r, self.keys, self.match_id, self.attempt = r, keys, match_id, attempt
        self.feed = PublicFeed(rules, reveal_after)
        self.match: Match | None = None
        """The match as last shown."""
        self.watched = False
        """Someone watches (or did): every event is published, from the try's first."""
        self.pending: list[dict[str, Any]] = []
        self.broken = False
        """The feed failed once: nothing more is published (the match goes on)."""
        self._flusher: asyncio.Task[None] | None = None
        self._looker: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    def seen(self, match: Match) -> None:
        """Shown the match as it starts and after each answer (the runner's ``watch`` hook). A fault of the feed
        stops the live view, never the match."""
        self.match = match
        if self.broken:
            return
        if not self.watched:
            if self._looker is None:
                self._looker = asyncio.ensure_future(self._look())
            return
        try:
            self.pending += [e.to_json() for e in self.feed.update(match)]
        except Exception:  # never: the feed reads only public facts of a legal match
            self.broken = True
            log.exception("match %s: the live feed failed; its live view stops", self.match_id)
            return
        if self.pending and (self._flusher is None or self._flusher.done()):
            self._flusher = asyncio.ensure_future(self._flush_later())

    async def _look(self) -> None:
        """Look whether someone watches, every :data:`LOOK_S` until someone does or the match ends."""
        while not await self._someone_watches():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._closing.wait(), LOOK_S)
            if self._closing.is_set():
                return

    async def _someone_watches(self) -> bool:
        """Look once; from the first yes on, publish (what happened so far goes at once)."""
        try:
            watched = await live.is_watched(self.r, self.keys, self.match_id)
        except (redis.RedisError, OSError) as exc:  # nobody can read the stream either: look again later
            log.warning("match %s: cannot tell whether someone watches: %s", self.match_id, exc)
            return False
        if watched and not self.watched:
            self.watched = True
            if self.match is not None:
                self.seen(self.match)
        return watched

    async def _flush_later(self) -> None:
        with contextlib.suppress(asyncio.TimeoutError):  # FLUSH_S, or less when the match is over sooner
            await asyncio.wait_for(self._closing.wait(), FLUSH_S)
        while self.pending:  # what came while a write was under way goes next
            await self.flush()

    async def flush(self) -> None:
        """Write the events waiting (one pipeline)."""
        batch, self.pending = self.pending, []
        try:
            await live.publish(self.r, self.keys, self.match_id, self.attempt, batch)
        except (redis.RedisError, OSError) as exc:  # spectators miss these; the match goes on
            log.warning("match %s: %d live events not published: %s", self.match_id, len(batch), exc)

    async def close(self) -> None:
        """Send what is left (the match's end, if it ended), after the write under way: in order. A batch
        still gathering is sent now: the match's end waits for no timer. A match nobody watched looks once
        more, for a spectator who came since the last look."""
        self._closing.set()
        if self._looker is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._looker
            if not self.watched and not self.broken:
                await self._someone_watches()
        if self._flusher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        await self.flush()
