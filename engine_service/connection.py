"""One bot's live stream on this replica: what is queued for it, what it is heard saying, how long it takes.

A :class:`BotConnection` is the gateway's side of one ``Connect`` stream: its
outbox (bounded: a bot that does not read is cut, :meth:`BotConnection.send`),
the turns waiting on it (woken when it closes), its keepalives and the round
trips their echoes measure (:mod:`engine_service.round_trips`), and how it ends
(a status for the bot). It knows nothing of turns' rules or of the registry.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from engine_service.round_trips import RoundTrips
from store.sessions import SessionEntry
from tablanette.v1 import arena_pb2 as apb


@dataclass
class BotConnection:
    """One live stream of one bot."""

    entry: SessionEntry
    peer: str = ""
    token_digest: str = ""
    outbox_limit: int = 256
    outbox: asyncio.Queue[apb.ServerMessage | None] = field(init=False)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    announced: set[str] = field(default_factory=set)
    packed: bool = False
    """The bot asked for turns in the packed form."""
    abort_code: grpc.StatusCode | None = None
    abort_details: str = ""
    last_heard: float = field(default_factory=time.monotonic)
    writing_since: float | None = None
    """When the message being written now was handed to the transport (None: not writing)."""
    handler: asyncio.Task[Any] | None = None
    waiting: set[asyncio.Future[None]] = field(default_factory=set)
    """Turns waiting on this stream: woken when it closes."""
    round_trips: RoundTrips = field(default_factory=RoundTrips)
    """The pings sent on this stream and the round trips their echoes measured."""
    first_echo: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the bot has echoed a ping on this stream."""
    opened: float = field(default_factory=time.monotonic)
    """When the stream was admitted."""
    reader: asyncio.Task[None] | None = None
    """The task reading the bot's messages."""
    gone: bool = False
    """The stream's cleanup has run (:meth:`engine_service.gateway.Gateway._gone`)."""
    _ending: bool = False

    def __post_init__(self) -> None:
        self.outbox = asyncio.Queue(self.outbox_limit + 1)  # the last place is kept for the end of the stream

    def send(self, msg: apb.ServerMessage) -> None:
        if self._ending:
            return
        if self.outbox.qsize() >= self.outbox_limit:
            why = f"the bot does not read its stream: {self.outbox_limit} messages are waiting for it"
            self.close(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
            return
        self.outbox.put_nowait(msg)

    def mark_closed(self) -> None:
        """The stream has ended: say so, and wake every turn waiting on it."""
        self.closed.set()
        for waiter in self.waiting:
            if not waiter.done():
                waiter.set_result(None)

    def ping(self) -> None:
        """Send a keepalive the bot echoes (:mod:`engine_service.round_trips`)."""
        now = time.time()
        echo = self.round_trips.ping(time.monotonic())
        self.send(apb.ServerMessage(keepalive=apb.Keepalive(unix_ms=int(now * 1000), echo=echo)))

    def close(self, code: grpc.StatusCode | None = None, details: str = "") -> None:
        """End the stream (with a status for the bot, if given)."""
        if self.abort_code is None and code is not None:
            self.abort_code, self.abort_details = code, details
        if not self._ending:
            self._ending = True
            self.outbox.put_nowait(None)

    def stalled(self, limit_s: float, now: float | None = None) -> bool:
        """A write has waited more than ``limit_s`` for the bot to take it (HTTP/2 flow control)."""
        since = self.writing_since
        return since is not None and (time.monotonic() if now is None else now) - since > limit_s

    def cut(self, why: str) -> None:
        """End a stream whose write is stuck: a stuck write never returns, so the handler is cancelled
        (and the cleanup runs) instead of waiting for the bot to read."""
        self.close(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
        if self.handler is not None:
            self.handler.cancel()


async def first_echo(conn: BotConnection, cap_ms: int) -> None:
    """A stream the bot has not echoed on yet (it has just connected, to a replica that never measured it):
    wait for its first echo before sending a turn that credits latency, until ``cap_ms`` have passed since
    the stream began. The turn is not sent yet, so the wait is the arena's time, not the bot's; a bot that
    does not echo meets it only in its stream's first ``cap_ms``."""
    left = cap_ms / 1000 - (time.monotonic() - conn.opened)
    if left <= 0 or conn.closed.is_set():
        return
    waits = {asyncio.ensure_future(conn.first_echo.wait()), asyncio.ensure_future(conn.closed.wait())}
    try:
        await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()
