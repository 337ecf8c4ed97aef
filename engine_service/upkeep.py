"""A replica's upkeep of its bot sessions: keepalives, streams that stopped reading, the registry, revocations.

:class:`Upkeep` runs beside the gateway (:meth:`Upkeep.run`, forever): it pings
every live stream (the bot echoes; :mod:`engine_service.round_trips`), cuts a
stream whose bot stopped reading it, refreshes this replica's entries in the
session registry (closing a session another replica took over, claiming again
one that expired in a store outage) and closes sessions whose token is gone.
:meth:`Upkeep.follow` acts on the arena's revocation notices as they arrive.
It shares the gateway's table of live connections, its settings and its session registry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from config import ArenaSettings
from engine_service.connection import BotConnection
from store.sessions import Sessions

log = logging.getLogger("tablanette.gateway")


class Upkeep:
    """The upkeep of the sessions in ``connections`` (the gateway's live streams, by bot); see the module doc."""

    def __init__(
        self,
        settings: ArenaSettings,
        registry: Sessions,
        connections: dict[str, BotConnection],
        token_exists: Callable[[list[str]], Awaitable[list[bool]]],
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.connections = connections
        self.token_exists = token_exists

    async def run(self) -> None:
        """Forever: refresh our registry entries and send keepalives."""
        interval = min(self.settings.session_ttl_ms / 3, self.settings.keepalive_ms) / 1000
        while True:
            await asyncio.sleep(interval)
            live = list(self.connections.values())
            stall_s = self.settings.keepalive_ms / 1000
            for live_conn in live:  # before the registry: a Redis outage must not stop the keepalives
                if live_conn.stalled(stall_s):
                    live_conn.cut(f"the bot has not read its stream for {stall_s:g} s")
                    log.warning(
                        "bot %s: session %s cut, it stopped reading", live_conn.entry.bot, live_conn.entry.session_id
                    )
                    continue
                live_conn.ping()
            try:
                await self._close_revoked(live)
                refreshed = await self.registry.refresh([c.entry for c in live])
                for entry in refreshed.taken_over:
                    conn = self.connections.get(entry.bot)
                    if conn is not None and conn.entry == entry:
                        conn.close(grpc.StatusCode.ABORTED, "this bot connected again elsewhere")
                for entry in refreshed.missing:  # expired (a Redis outage, say): claim it again if still here
                    conn = self.connections.get(entry.bot)
                    if conn is not None and conn.entry == entry and not conn.closed.is_set():
                        await self.registry.claim(entry)
            except Exception:  # the loop must outlive anything; the next pass tries again
                log.exception("refreshing the session registry failed")

    async def _close_revoked(self, live: list[BotConnection]) -> None:
        """The safety net under the revocation notices: close sessions whose token is gone."""
        if not live:
            return
        for conn, ok in zip(live, await self.token_exists([c.token_digest for c in live]), strict=True):
            if not ok:
                self.revoked(conn.entry.bot, "the upkeep's token check")

    def revoked(self, bot: str, found_by: str = "the revocation notice") -> None:
        """The bot's token was revoked: end its session here now (the log says what found it out)."""
        conn = self.connections.get(bot)
        if conn is not None and not conn.closed.is_set():
            conn.close(grpc.StatusCode.UNAUTHENTICATED, "this bot's token was revoked")
            log.info("bot %s: session %s closed, its token was revoked (%s)", bot, conn.entry.session_id, found_by)

    async def follow(self, messages: AsyncIterator[Any]) -> None:
        """Act on the arena's notices (a revoked bot) as they arrive."""
        async for msg in messages:
            data = msg.get("data") if isinstance(msg, dict) else None
            if not isinstance(data, bytes | str):
                continue
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                notice = json.loads(data)
                if isinstance(notice.get("revoked"), str):
                    self.revoked(notice["revoked"])
