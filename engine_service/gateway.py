"""The bot gateway: live bot streams on this replica, and turns forwarded to them.

A bot holds one stream (:meth:`Gateway.connect`). A match runner anywhere asks
for a play with :meth:`Gateway.request_play`; the gateway sends the bot its turn,
refuses illegal answers with a reason (the bot may retry until its deadline) and
returns the first legal answer, a timeout, or a disconnect that outlasted the
grace period. A bot that reconnects within the grace period gets its pending
turn again with a fresh deadline, so its games continue.

The gateway never judges the game: the runner sends the legal plays computed by
the rules engine and re-checks the answer itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import grpc
from google.protobuf.message import DecodeError

from config import ArenaSettings
from engine_service import convert
from engine_service.rules import Play, TablanetteError
from store.sessions import SessionEntry, SessionRegistry
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import game_pb2 as gpb

log = logging.getLogger("tablanette.gateway")
SLOW_STORE_S = 1.0
"""A registry lookup slower than this was held up by Redis (the arena's time, not a bot's)."""
SERVER_VERSION = "tablanette-arena/0.1"
HELLO_TIMEOUT_S = 10.0


@dataclass
class PendingTurn:
    """A turn waiting on a bot. Legal plays stay protobuf: most bots answer by index,
    so they are parsed only when an answer names a play by its cards."""

    turn_id: int
    legal_pb: Sequence[gpb.Play]
    future: asyncio.Future[gpb.Play]
    rejected: int = 0
    arena_fault: bool = False
    """The wait was held up by the replica's own store (Redis): a disconnect is then not the bot's fault."""
    _legal: list[Play] | None = None

    @property
    def legal(self) -> list[Play]:
        if self._legal is None:
            self._legal = [convert.play_from_pb(p) for p in self.legal_pb]
        return self._legal


@dataclass
class BotConnection:
    """One live stream of one bot."""

    entry: SessionEntry
    outbox: asyncio.Queue[apb.ServerMessage | None] = field(default_factory=asyncio.Queue)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    announced: set[str] = field(default_factory=set)
    abort_code: grpc.StatusCode | None = None
    abort_details: str = ""

    def send(self, msg: apb.ServerMessage) -> None:
        if not self.closed.is_set():
            self.outbox.put_nowait(msg)

    def close(self, code: grpc.StatusCode | None = None, details: str = "") -> None:
        """End the stream (with a status for the bot, if given)."""
        if self.abort_code is None and code is not None:
            self.abort_code, self.abort_details = code, details
        self.outbox.put_nowait(None)


class Gateway:
    """The bots connected to this replica and the turns waiting on them."""

    def __init__(
        self,
        settings: ArenaSettings,
        registry: SessionRegistry,
        lookup_token: Callable[[str], Awaitable[str | None]],
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.lookup_token = lookup_token
        self.connections: dict[str, BotConnection] = {}
        self.pending: dict[tuple[str, str], PendingTurn] = {}
        self.disconnected_at: dict[str, float] = {}
        self._arrivals: dict[str, asyncio.Event] = {}
        self.draining = False

    # ------------------------------------------------------------ bot streams

    async def connect(
        self, requests: AsyncIterator[apb.BotMessage], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[apb.ServerMessage]:
        """Serve one bot stream: authenticate the Hello, then relay until it ends."""
        if self.draining:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down; connect to another replica")
        it = requests.__aiter__()
        try:
            first = await asyncio.wait_for(it.__anext__(), HELLO_TIMEOUT_S)
        except StopAsyncIteration:
            return
        except TimeoutError:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "send a Hello within 10 seconds of connecting")
        except DecodeError as exc:  # not a BotMessage at all (left unhandled, the bot would see UNKNOWN)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed message: {exc}")
        if first.ByteSize() > self.settings.max_message_bytes:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, self._too_big(first))
        conn = BotConnection(await self._authenticate(first, context))
        name = conn.entry.bot
        reader: asyncio.Task[None] | None = None
        try:  # from registration on, every way out (a cancel mid-Welcome included) runs the cleanup below
            await self._register(conn)
            yield apb.ServerMessage(
                welcome=apb.Welcome(
                    session_id=conn.entry.session_id,
                    bot_name=name,
                    server_version=SERVER_VERSION,
                    keepalive_ms=self.settings.keepalive_ms,
                    grace_ms=self.settings.grace_ms,
                )
            )
            reader = asyncio.create_task(self._read(it, conn))
            while (msg := await conn.outbox.get()) is not None:
                yield msg
        finally:
            if reader is not None:
                reader.cancel()
            conn.closed.set()
            if self.connections.get(name) is conn:
                del self.connections[name]
                self.disconnected_at[name] = time.monotonic()
                with contextlib.suppress(Exception):
                    await self.registry.release(conn.entry)
            log.info("bot %s disconnected (session %s)", name, conn.entry.session_id)
        if conn.abort_code is not None:
            await context.abort(conn.abort_code, conn.abort_details)

    async def _authenticate(self, first: apb.BotMessage, context: grpc.aio.ServicerContext) -> SessionEntry:
        """The session a Hello asks for, or an abort with the reason (nothing is registered yet)."""
        if first.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message on the stream must be a Hello")
        hello = first.hello
        if not hello.token:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "Hello carries no token")
        name = await self.lookup_token(hello.token)
        if name is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown or revoked token")
        assert name is not None
        if hello.bot_name and hello.bot_name != name:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, f"this token belongs to bot {name!r}, not {hello.bot_name!r}"
            )
        if hello.max_games < 0 or len(hello.version) > 64:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "max_games must be >= 0 and version <= 64 chars")
        return SessionEntry(name, self.settings.advertise, secrets.token_hex(8), hello.version, max(1, hello.max_games))

    async def _register(self, conn: BotConnection) -> None:
        """Make ``conn`` the bot's live session, here and in the registry (a newer session replaces an older)."""
        name = conn.entry.bot
        old = self.connections.get(name)
        if old is not None:
            old.close(grpc.StatusCode.ABORTED, "replaced by a newer session of the same bot")
        self.connections[name] = conn
        self.disconnected_at.pop(name, None)
        await self.registry.claim(conn.entry)
        self._arrived(name)
        log.info("bot %s connected (version %r, session %s)", name, conn.entry.version, conn.entry.session_id)

    async def _read(self, it: AsyncIterator[apb.BotMessage], conn: BotConnection) -> None:
        try:
            async for msg in it:
                if msg.ByteSize() > self.settings.max_message_bytes:
                    conn.close(grpc.StatusCode.RESOURCE_EXHAUSTED, self._too_big(msg))
                    return
                kind = msg.WhichOneof("kind")
                if kind == "play":
                    self._on_play(conn, msg.play)
                elif kind == "hello":
                    conn.send(_rejected(apb.PlayMove(), "already greeted: Hello is only the first message"))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a malformed message or a broken transport
            log.warning("bot %s stream failed: %s", conn.entry.bot, exc)
            conn.close(grpc.StatusCode.INVALID_ARGUMENT, f"malformed message: {exc}")
        conn.close()

    def _too_big(self, msg: apb.BotMessage) -> str:
        return f"message of {msg.ByteSize()} bytes exceeds the limit of {self.settings.max_message_bytes} bytes"

    def _on_play(self, conn: BotConnection, move: apb.PlayMove) -> None:
        pending = self.pending.get((conn.entry.bot, move.game_id))
        if pending is None:
            conn.send(_rejected(move, f"no turn of yours is waiting in game {move.game_id!r}"))
            return
        if move.turn_id != pending.turn_id:
            conn.send(_rejected(move, f"turn {move.turn_id} is not the current turn {pending.turn_id}"))
            return
        play, reason = _resolve(move, pending)
        if play is None:
            pending.rejected += 1
            conn.send(_rejected(move, reason))
        elif not pending.future.done():
            pending.future.set_result(play)

    def _arrived(self, bot: str) -> None:
        event = self._arrivals.pop(bot, None)
        if event is not None:
            event.set()

    # ------------------------------------------------------------ dispatch

    async def request_play(self, req: dpb.PlayRequest) -> dpb.PlayResponse:
        """Forward one turn to the bot and wait for its legal answer (see module doc)."""
        started = time.monotonic()
        bot, game_id = req.bot_name, req.turn.game_id
        grace = (req.grace_ms or self.settings.grace_ms) / 1000
        move_time = max(req.turn.time_left_ms, 1) / 1000
        outcome = dpb.PlayResponse
        pending = PendingTurn(req.turn.turn_id, req.turn.legal_plays, asyncio.get_running_loop().create_future())
        self.pending[(bot, game_id)] = pending
        try:
            conn = await self._wait_for(bot, grace, pending)
            while conn is not None:
                if game_id not in conn.announced:
                    conn.send(apb.ServerMessage(game_started=req.game))
                    conn.announced.add(game_id)
                turn = apb.Turn()
                turn.CopyFrom(req.turn)
                turn.deadline_unix_ms = int((time.time() + move_time) * 1000)
                turn.time_left_ms = int(move_time * 1000)
                conn.send(apb.ServerMessage(turn=turn))
                closed: asyncio.Future[object] = asyncio.ensure_future(conn.closed.wait())
                waiters: set[asyncio.Future[object]] = {pending.future, closed}  # type: ignore[arg-type]
                await asyncio.wait(waiters, timeout=move_time, return_when=asyncio.FIRST_COMPLETED)
                closed.cancel()
                if pending.future.done():
                    return self._response(outcome.PLAYED, pending, started)
                if not conn.closed.is_set():
                    return self._response(outcome.TIMEOUT, pending, started)
                conn = await self._wait_for(bot, grace, pending)
            return self._response(outcome.DISCONNECTED, pending, started)
        finally:
            if self.pending.get((bot, game_id)) is pending:
                del self.pending[(bot, game_id)]

    def _response(self, outcome: dpb.PlayResponse.Outcome, pending: PendingTurn, started: float) -> dpb.PlayResponse:
        resp = dpb.PlayResponse(
            outcome=outcome,
            rejected=pending.rejected,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            arena_fault=pending.arena_fault,
        )
        if pending.future.done():
            resp.play.CopyFrom(pending.future.result())
        return resp

    async def _wait_for(self, bot: str, grace: float, pending: PendingTurn) -> BotConnection | None:
        """The bot's live connection here, waiting out the rest of its grace period.

        Gives up early when the registry shows the bot connected to another
        replica (the runner then asks that one), or when this replica is
        draining (so a shutdown need not wait out the grace period). Time a
        registry lookup spends waiting for Redis is not the bot's: it is added
        to the grace period, and the turn is marked as the arena's fault.
        """
        since = self.disconnected_at.get(bot, time.monotonic())
        while True:
            conn = self.connections.get(bot)
            if conn is not None and not conn.closed.is_set():
                return conn
            if self.draining:  # no bot can (re)connect here any more: let the runner find it elsewhere now
                return None
            remaining = grace - (time.monotonic() - since)
            if remaining <= 0:
                return None
            asked = time.monotonic()
            entry = await self.registry.lookup(bot)  # the client waits out a Redis outage
            held_up = time.monotonic() - asked
            if held_up > SLOW_STORE_S:
                since += held_up
                pending.arena_fault = True
            if entry is not None and entry.replica != self.settings.advertise:
                return None
            event = self._arrivals.setdefault(bot, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), min(remaining, 0.25))

    async def end_game(self, req: dpb.EndGameRequest) -> dpb.EndGameResponse:
        conn = self.connections.get(req.bot_name)
        if conn is None or conn.closed.is_set():
            return dpb.EndGameResponse(delivered=False)
        conn.send(apb.ServerMessage(game_over=req.game_over))
        conn.announced.discard(req.game_over.game_id)
        return dpb.EndGameResponse(delivered=True)

    # ------------------------------------------------------------ upkeep

    async def upkeep(self) -> None:
        """Forever: refresh our registry entries and send keepalives."""
        interval = min(self.settings.session_ttl_ms / 3, self.settings.keepalive_ms) / 1000
        while True:
            await asyncio.sleep(interval)
            live = list(self.connections.values())
            now = int(time.time() * 1000)
            for live_conn in live:  # before the registry: a Redis outage must not stop the keepalives
                live_conn.send(apb.ServerMessage(keepalive=apb.Keepalive(unix_ms=now)))
            try:
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

    def drain(self) -> None:
        """Stop taking bots and ask connected ones to reconnect elsewhere."""
        self.draining = True
        for conn in list(self.connections.values()):
            conn.close(grpc.StatusCode.UNAVAILABLE, "server is shutting down; reconnect")


def _resolve(move: apb.PlayMove, pending: PendingTurn) -> tuple[gpb.Play | None, str]:
    """The legal play a PlayMove names, or ``None`` and the reason it is refused."""
    choice = move.WhichOneof("choice")
    count = len(pending.legal_pb)
    if choice == "index":
        if 0 <= move.index < count:
            return pending.legal_pb[move.index], ""
        return None, f"index {move.index} is out of range: there are {count} legal plays (0..{count - 1})"
    if choice == "play":
        try:
            play = convert.play_from_pb(move.play)
        except TablanetteError as exc:
            return None, f"malformed play: {exc}"
        if play in pending.legal:
            return pending.legal_pb[pending.legal.index(play)], ""
        return None, f"illegal play {play}: the legal plays are {', '.join(str(p) for p in pending.legal)}"
    return None, "a PlayMove needs an index or a play"


def _rejected(move: apb.PlayMove, reason: str) -> apb.ServerMessage:
    return apb.ServerMessage(play_rejected=apb.PlayRejected(game_id=move.game_id, turn_id=move.turn_id, reason=reason))
