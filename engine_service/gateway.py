"""The bot gateway: live bot streams on this replica, and turns forwarded to them.

A bot holds one stream (:meth:`Gateway.connect`). A match runner anywhere asks
for a play with :meth:`Gateway.request_play`; the gateway sends the bot its turn,
refuses illegal answers with a reason (the bot may retry until its deadline) and
returns the first legal answer, a timeout, or a disconnect that outlasted the
grace period. A bot that reconnects within the grace period gets its pending
turn again with a fresh deadline, so its games continue.

The gateway never judges the game: the runner sends the legal plays computed by
the rules engine and re-checks the answer itself.

Who may connect is :mod:`engine_service.admission`'s business. Every stream's
resources are bounded: a bot that does not read its stream is disconnected once
``TABLANETTE_OUTBOX_LIMIT`` messages wait for it, one that sends more than
``TABLANETTE_MESSAGE_RATE`` messages a second (answers to the turns it was sent
not counted: a fast bot is never cut for its speed) is disconnected too, and nothing a
bot sends is echoed back longer than a short excerpt. A revoked token ends its
live session at once (the CLI publishes the revocation; every replica acts on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from config import ArenaSettings
from engine_service import convert, metrics
from engine_service.admission import Admission, Admitted, is_quiet, short
from engine_service.limits import RateLimit
from engine_service.meters import Meters, Watch
from engine_service.relayed import RelayedPeers
from engine_service.round_trips import RoundTrips
from engine_service.rules import Play, TablanetteError
from engine_service.time_control import TimeControl
from store.sessions import SessionEntry, Sessions
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import game_pb2 as gpb

log = logging.getLogger("tablanette.gateway")
SLOW_STORE_S = 1.0
"""A registry lookup slower than this was held up by Redis (the arena's time, not a bot's)."""
SERVER_VERSION = "tablanette-arena/0.1"
GAME_ID_CHARS = 128
"""Game ids the arena makes are short; a PlayMove naming a longer one is refused without echoing it."""


FEATURES = ("packed",)
"""The optional forms this server grants when a Hello asks (docs/protocol.md)."""


@dataclass
class PendingTurn:
    """A turn waiting on a bot, with its legal plays in whichever form the runner sent them (packed
    numbers, or named plays). Most bots answer by index, so plays are named or parsed only on demand."""

    turn: apb.Turn
    play: gpb.Play | None = None
    """The bot's legal answer, once it came (the first answer stands)."""
    rejected: int = 0
    arena_fault: bool = False
    """The wait was held up by the replica's own store (Redis): a disconnect is then not the bot's fault."""
    waiter: asyncio.Future[None] | None = None
    """What the turn's wait is parked on (:func:`_answer_close_or_timeout`): the answer wakes it directly."""
    answered_at: float = 0.0
    """When the answer arrived (monotonic): the bot's clock stops there, not when the wait wakes."""
    _legal: list[Play] | None = None

    def answered(self, play: gpb.Play) -> None:
        """The bot answered ``play`` (legal): wake the wait at once."""
        self.play = play
        self.answered_at = time.monotonic()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    @property
    def turn_id(self) -> int:
        return self.turn.turn_id

    @property
    def count(self) -> int:
        turn = self.turn
        return len(turn.legal_cards) if turn.HasField("packed") else len(turn.legal_plays)

    def play_at(self, index: int) -> gpb.Play:
        """Legal play ``index`` (in range) as the runner applies it."""
        turn = self.turn
        if turn.HasField("packed"):
            return convert.play_to_pb(convert.packed_play(turn.legal_cards[index], turn.legal_captured[index]))
        return turn.legal_plays[index]

    @property
    def legal(self) -> list[Play]:
        if self._legal is None:
            turn = self.turn
            if turn.HasField("packed"):
                pairs = zip(turn.legal_cards, turn.legal_captured, strict=True)
                self._legal = [convert.packed_play(c, m) for c, m in pairs]
            else:
                self._legal = [convert.play_from_pb(p) for p in turn.legal_plays]
        return self._legal


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
    """The stream's cleanup has run (:meth:`Gateway._gone`)."""
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


async def _answer_close_or_timeout(
    conn: BotConnection, pending: PendingTurn, timeout: float, watch: Watch | None = None
) -> None:
    """Until the bot answers, its stream closes, ``timeout`` passes, or its CPU meter says its budget
    is spent or the meter went away (``watch``): whichever comes first.

    One future, which the answer sets itself (:meth:`PendingTurn.answered`: no callback in
    between, so no extra turn of the event loop), a timer and the stream's and meter's
    callbacks; no task per turn (this runs for every move).
    """
    loop = asyncio.get_running_loop()
    woken: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not woken.done():
            woken.set_result(None)

    pending.waiter = woken
    if watch is not None:
        watch.over.add_done_callback(wake)
        watch.final.add_done_callback(wake)
    timer = loop.call_later(timeout, wake)
    conn.waiting.add(woken)
    if conn.closed.is_set() or pending.play is not None:
        wake()
    try:
        await woken
    finally:
        timer.cancel()
        conn.waiting.discard(woken)
        pending.waiter = None
        if watch is not None:
            watch.over.remove_done_callback(wake)
            watch.final.remove_done_callback(wake)


async def _first_echo(conn: BotConnection, cap_ms: int) -> None:
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


class Gateway:
    """The bots connected to this replica and the turns waiting on them."""

    def __init__(
        self,
        settings: ArenaSettings,
        registry: Sessions,
        admission: Admission,
        token_exists: Callable[[list[str]], Awaitable[list[bool]]],
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.admission = admission
        self.token_exists = token_exists
        self.messages = RateLimit(settings.message_rate, settings.message_burst)
        self.per_address: dict[str, int] = {}
        """Live bot streams per peer address (or relayed bot)."""
        self.prehello: dict[str, int] = {}
        """Streams per peer address (or relayed bot) that have not said Hello yet."""
        self.releasing: set[asyncio.Task[None]] = set()
        """Registry deletes of ended sessions still under way (kept so they are not garbage-collected)."""
        self.connections: dict[str, BotConnection] = {}
        self.pending: dict[tuple[str, str], PendingTurn] = {}
        self.disconnected_at: dict[str, float] = {}
        self._arrivals: dict[str, asyncio.Event] = {}
        self.round_trips: dict[str, float] = {}
        """Each bot's last round-trip estimate here: a new stream of the bot starts from it."""
        self.meters = Meters()
        self.relayed = RelayedPeers()
        """The connections bot hosts' relays announced: their streams are limited per version, not per address."""
        self.draining = False

    # ------------------------------------------------------------ bot streams

    async def connect(
        self, requests: AsyncIterator[apb.BotMessage], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[apb.ServerMessage]:
        """Serve one bot stream: authenticate the Hello, then relay until it ends."""
        if self.draining:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down; connect to another replica")
        peer = self.relayed.key(context.peer() or "")  # a relayed hosted bot's own key, else its address
        it = requests.__aiter__()
        first = await self._hello(it, context, peer)
        if first is None:
            return
        if first.ByteSize() > self.settings.max_message_bytes:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, self._too_big(first))
        granted = [f for f in FEATURES if f in first.hello.features]
        seated: list[BotConnection] = []

        def seat(admitted: Admitted) -> BotConnection:
            trips = RoundTrips(self.round_trips.get(admitted.entry.bot))  # the bot's last estimate here, if any
            entry, digest, limit = admitted.entry, admitted.token_digest, self.settings.outbox_limit
            conn = BotConnection(entry, peer, digest, limit, round_trips=trips, packed="packed" in granted)
            conn.handler = asyncio.current_task()
            self._seat(conn)
            # However the call ends, its cleanup runs: also when gRPC never resumes this generator again.
            context.add_done_callback(lambda _: self._gone(conn))
            seated.append(conn)
            return conn

        try:
            conn = await self.admission.admit(first, context, peer, self, seat)
        except BaseException:
            if seated:  # seated, then cancelled while its login was audited
                self._gone(seated[0])
            raise
        name = conn.entry.bot
        try:  # from here on, every way out (a cancel mid-Welcome included) runs the cleanup below
            conn.writing_since = time.monotonic()  # a bot that never reads is cut by the upkeep (stalled)
            yield apb.ServerMessage(
                welcome=apb.Welcome(
                    session_id=conn.entry.session_id,
                    bot_name=name,
                    server_version=SERVER_VERSION,
                    keepalive_ms=self.settings.keepalive_ms,
                    grace_ms=self.settings.grace_ms,
                    features=granted,
                )
            )
            conn.ping()  # a first round trip before the first turn
            conn.reader = asyncio.create_task(self._read(it, conn))
            while True:
                conn.writing_since = None
                if (msg := await conn.outbox.get()) is None:
                    break
                conn.writing_since = time.monotonic()
                yield msg
        finally:
            self._gone(conn)
        if conn.abort_code is not None:
            await context.abort(conn.abort_code, conn.abort_details)

    async def _hello(
        self, it: AsyncIterator[apb.BotMessage], context: grpc.aio.ServicerContext, peer: str
    ) -> apb.BotMessage | None:
        """The stream's first message (None if it ended first), within the Hello timeout; a stream is
        refused at once when ``TABLANETTE_MAX_PREHELLO_PER_ADDRESS`` streams of its peer are still waiting
        for theirs."""
        waiting = self.prehello.get(peer, 0)
        if waiting >= self.settings.max_prehello_per_address:
            why = f"{waiting} streams from {peer} have not said Hello yet"
            await self.admission.refuse_busy(context, peer, why, 1.0)
        self.prehello[peer] = waiting + 1
        timeout_s = self.settings.hello_timeout_ms / 1000
        try:
            async with asyncio.timeout(timeout_s):
                return await it.__anext__()
        except StopAsyncIteration:
            return None
        except TimeoutError:
            why = f"send a Hello within {timeout_s:g} seconds of connecting"
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, why)
        except DecodeError as exc:  # not a BotMessage at all (left unhandled, the bot would see UNKNOWN)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed message: {exc}")
        finally:
            if self.prehello[peer] > 1:
                self.prehello[peer] -= 1
            else:
                del self.prehello[peer]
        raise AssertionError("unreachable")  # context.abort raises

    def _gone(self, conn: BotConnection) -> None:
        """The stream has ended (its generator's cleanup, or gRPC's word that the call is over, whichever
        comes first): let go of it here at once, and delete its registry entry in a task of its own, which
        no cancellation of the stream can cut short (:meth:`_release`)."""
        if conn.gone:
            return
        conn.gone = True
        if conn.reader is not None:
            conn.reader.cancel()
        conn.close()  # a generator still waiting for its next message ends
        conn.mark_closed()
        name, peer = conn.entry.bot, conn.peer
        if self.per_address[peer] > 1:
            self.per_address[peer] -= 1
        else:
            del self.per_address[peer]
        self.messages.forget(conn.entry.session_id)
        if self.connections.get(name) is conn:
            del self.connections[name]
            self.disconnected_at[name] = time.monotonic()
            self.release(conn.entry)
        log.info("bot %s disconnected (session %s)", name, conn.entry.session_id)

    def release(self, entry: SessionEntry, after: asyncio.Future[str | None] | None = None) -> None:
        """Delete the bot's registry entry if it is still ``entry``'s session, once ``after`` (admission's claim
        of it, still under way when its Hello was cancelled) is over: in a task kept in :attr:`releasing`."""
        task = asyncio.get_running_loop().create_task(self._release(entry, after))
        self.releasing.add(task)
        task.add_done_callback(self.releasing.discard)

    async def _release(self, entry: SessionEntry, after: asyncio.Future[str | None] | None = None) -> None:
        """Delete the bot's registry entry if it is still this session's (after ``after``), trying again after
        a Redis error until the entry's TTL would have ended it anyway."""
        if after is not None:
            await asyncio.wait([after])  # its outcome does not matter: only this session's entry is deleted
        until = time.monotonic() + self.settings.session_ttl_ms / 1000
        pause = 0.05
        while True:
            try:
                await self.registry.release(entry)
                return
            except Exception as exc:
                if time.monotonic() + pause > until:
                    log.warning("bot %s: session %s left to its TTL (%s)", entry.bot, entry.session_id, exc)
                    return
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)

    async def released(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the registry deletes still under way: before a shutdown
        closes the Redis client."""
        if self.releasing:
            await asyncio.wait(set(self.releasing), timeout=timeout)

    # ------------------------------------------------------------ what admission asks

    def local_session(self, bot: str) -> tuple[str, bool] | None:
        """(session id, live?) of the bot's connection on this replica: live while it is heard from."""
        conn = self.connections.get(bot)
        if conn is None or conn.closed.is_set():
            return None
        return conn.entry.session_id, not is_quiet(conn.last_heard, self.settings.keepalive_ms)

    def streams_from(self, address: str) -> int:
        return self.per_address.get(address, 0)

    def session_live(self, bot: str, session_id: str) -> bool:
        """Asked by another replica (Dispatch.SessionLive): is that session of the bot live here?"""
        return self.local_session(bot) == (session_id, True)

    def _seat(self, conn: BotConnection) -> None:
        """Make ``conn`` the bot's session here (admission has registered it, with the bot's lock held):
        an older stream of the bot, which admission judged quiet, is closed."""
        name = conn.entry.bot
        old = self.connections.get(name)
        if old is not None:  # admission let the newer session in: the older one had gone quiet
            old.close(grpc.StatusCode.ABORTED, "replaced by a newer session: this one had stopped sending keepalives")
        self.connections[name] = conn
        self.per_address[conn.peer] = self.per_address.get(conn.peer, 0) + 1
        self.disconnected_at.pop(name, None)
        self._arrived(name)
        log.info("bot %s connected (version %r, session %s)", name, conn.entry.version, conn.entry.session_id)

    async def _read(self, it: AsyncIterator[apb.BotMessage], conn: BotConnection) -> None:
        try:
            async for msg in it:
                conn.last_heard = time.monotonic()
                if msg.ByteSize() > self.settings.max_message_bytes:
                    conn.close(grpc.StatusCode.RESOURCE_EXHAUSTED, self._too_big(msg))
                    return
                kind = msg.WhichOneof("kind")
                if kind == "play" and self._on_play(conn, msg.play):
                    continue  # the answer to a turn it was sent: a bot cannot send more of those than it is asked
                if self.messages.take(conn.entry.session_id):
                    why = f"more than {self.settings.message_rate:g} messages per second on one stream"
                    conn.close(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
                    return
                if kind == "keepalive" and msg.keepalive.echo:
                    rtt = conn.round_trips.echoed(msg.keepalive.echo, conn.last_heard)
                    if rtt is not None and (estimate := conn.round_trips.estimate()) is not None:
                        conn.first_echo.set()
                        self.round_trips[conn.entry.bot] = estimate
                        metrics.round_trip(conn.entry.bot, estimate)
                elif kind == "hello":
                    conn.send(_rejected(apb.PlayMove(), "already greeted: Hello is only the first message"))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a malformed message or a broken transport
            log.warning("bot %s stream failed: %s", conn.entry.bot, short(str(exc), 200))
            conn.close(grpc.StatusCode.INVALID_ARGUMENT, f"malformed message: {short(str(exc), 200)}")
        conn.close()

    def _too_big(self, msg: apb.BotMessage) -> str:
        return f"message of {msg.ByteSize()} bytes exceeds the limit of {self.settings.max_message_bytes} bytes"

    def _on_play(self, conn: BotConnection, move: apb.PlayMove) -> bool:
        """True if ``move`` answered the turn waiting for it; anything else is refused with a reason."""
        if len(move.game_id) > GAME_ID_CHARS:
            conn.send(_rejected(move, f"a game id is at most {GAME_ID_CHARS} characters"))
            return False
        pending = self.pending.get((conn.entry.bot, move.game_id))
        if pending is None:
            conn.send(_rejected(move, f"no turn of yours is waiting in game {move.game_id!r}"))
            return False
        if move.turn_id != pending.turn_id:
            conn.send(_rejected(move, f"turn {move.turn_id} is not the current turn {pending.turn_id}"))
            return False
        play, reason = _resolve(move, pending)
        if play is None:
            pending.rejected += 1
            conn.send(_rejected(move, reason))
            return False
        if pending.play is not None:  # answered already (the first answer stands)
            return False
        pending.answered(play)
        return True

    def _arrived(self, bot: str) -> None:
        event = self._arrivals.pop(bot, None)
        if event is not None:
            event.set()

    # ------------------------------------------------------------ dispatch

    async def request_play(self, req: dpb.PlayRequest, control: TimeControl | None = None) -> dpb.PlayResponse:
        """Forward one turn to the bot and wait for its legal answer (see module doc): :meth:`ask`
        (``control``: the request's time control, read by the caller)."""
        return await self.ask(req.bot_name, req.game, req.turn, req.grace_ms, control)

    async def ask(
        self,
        bot: str,
        game: apb.GameStarted,
        turn: apb.Turn,
        grace_ms: int = 0,
        control: TimeControl | None = None,
    ) -> dpb.PlayResponse:
        """A ``RequestPlay`` in its parts, as a match played on this replica asks each turn (no
        request message to build and copy a move). ``game`` is sent only before the bot's first turn
        of the game; ``grace_ms`` 0 is this replica's grace period; ``control`` the league's time
        control (None: the turn's time on the wall clock, no credit).

        On the CPU clock, a bot its host meters has ``time_left_ms`` of CPU time within the
        control's wall cap of wall-clock time (:mod:`engine_service.meters`).
        On the wall clock, with a latency credit (the league's cap), the answer may arrive
        that much later at most: the bot's measured round trip (:mod:`engine_service.round_trips`).
        The response's ``used_ms`` is what the turn cost the bot's clock.
        """
        started = time.monotonic()
        game_id = turn.game_id
        grace = (grace_ms or self.settings.grace_ms) / 1000
        move_time = max(turn.time_left_ms, 1) / 1000
        outcome = dpb.PlayResponse
        pending = PendingTurn(turn)
        self.pending[(bot, game_id)] = pending
        watch: Watch | None = None
        cpu, wall_cap_ms = (control.cpu, control.turn_wall_cap_ms) if control is not None else (False, 0)
        latency_credit_ms = control.latency_credit_ms if control is not None else 0
        try:
            conn = await self._wait_for(bot, grace, pending)
            while conn is not None:
                if latency_credit_ms and conn.round_trips.estimate() is None:
                    await _first_echo(conn, latency_credit_ms)
                if game_id not in conn.announced:
                    conn.send(apb.ServerMessage(game_started=game))
                    conn.announced.add(game_id)
                if cpu:
                    watch = self.meters.watch(bot, move_time)
                credit = conn.round_trips.credit_ms(latency_credit_ms) if latency_credit_ms and watch is None else 0
                wait = max(wall_cap_ms / 1000, move_time) if watch is not None else move_time + credit / 1000
                msg = apb.ServerMessage()  # the turn is written into it: a message put in a field is copied
                if conn.packed:
                    msg.turn.CopyFrom(turn)
                else:
                    msg.turn.CopyFrom(convert.named_turn(turn))
                sending = msg.turn
                sending.deadline_unix_ms = int((time.time() + wait) * 1000)
                sending.time_left_ms = int(move_time * 1000)
                sending.clock = apb.CLOCK_CPU if watch is not None else apb.CLOCK_WALL
                if credit:
                    sending.latency_credit_ms = credit
                sent = time.monotonic()
                conn.send(msg)
                await _answer_close_or_timeout(conn, pending, wait, watch)
                if watch is not None and watch.lost and pending.play is None:  # the arena's fault: wall cap only
                    await _answer_close_or_timeout(conn, pending, wait - (time.monotonic() - sent))
                if pending.play is not None:
                    used = pending.answered_at - sent - credit / 1000
                    return await self._response(bot, outcome.PLAYED, pending, started, watch, used, credit)
                if not conn.closed.is_set():
                    used = time.monotonic() - sent - credit / 1000
                    return await self._response(bot, outcome.TIMEOUT, pending, started, watch, used, credit)
                if watch is not None:
                    await self.meters.finish(watch)
                    watch = None
                conn = await self._wait_for(bot, grace, pending)
            return await self._response(bot, outcome.DISCONNECTED, pending, started)
        finally:
            if self.pending.get((bot, game_id)) is pending:
                del self.pending[(bot, game_id)]
            if watch is not None:  # still open only if the turn was cancelled
                self.meters.abandon(watch)

    async def _response(
        self,
        bot: str,
        outcome: dpb.PlayResponse.Outcome,
        pending: PendingTurn,
        started: float,
        watch: Watch | None = None,
        used: float = 0.0,
        credit_ms: int = 0,
    ) -> dpb.PlayResponse:
        """The turn's response: ``used`` seconds of the bot's clock (wall clock, less ``credit_ms``; a
        metered bot's CPU time replaces it)."""
        elapsed = time.monotonic() - started
        metrics.turn_ended(bot, outcome, elapsed)
        resp = dpb.PlayResponse(
            outcome=outcome,
            rejected=pending.rejected,
            elapsed_ms=int(elapsed * 1000),
            arena_fault=pending.arena_fault,
            used_ms=max(int(used * 1000), 0),
        )
        if credit_ms:
            resp.credit_ms = credit_ms
        if pending.play is not None:
            resp.play.CopyFrom(pending.play)
        if watch is not None and (cpu_us := await self.meters.finish(watch)) is not None:
            resp.cpu_metered, resp.cpu_us, resp.used_ms = True, cpu_us, cpu_us // 1000
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

    async def follow_events(self, messages: AsyncIterator[Any]) -> None:
        """Act on the arena's notices (a revoked bot) as they arrive."""
        async for msg in messages:
            data = msg.get("data") if isinstance(msg, dict) else None
            if not isinstance(data, bytes | str):
                continue
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                notice = json.loads(data)
                if isinstance(notice.get("revoked"), str):
                    self.revoked(notice["revoked"])

    def drain(self) -> None:
        """Stop taking bots and ask connected ones to reconnect elsewhere."""
        self.draining = True
        for conn in list(self.connections.values()):
            conn.close(grpc.StatusCode.UNAVAILABLE, "server is shutting down; reconnect")


def _resolve(move: apb.PlayMove, pending: PendingTurn) -> tuple[gpb.Play | None, str]:
    """The legal play a PlayMove names, or ``None`` and the reason it is refused."""
    choice = move.WhichOneof("choice")
    count = pending.count
    if choice == "index":
        if 0 <= move.index < count:
            return pending.play_at(move.index), ""
        return None, f"index {move.index} is out of range: there are {count} legal plays (0..{count - 1})"
    if choice == "play":
        try:
            play = convert.play_from_pb(move.play)
        except TablanetteError as exc:
            return None, f"malformed play: {exc}"
        if play in pending.legal:
            return pending.play_at(pending.legal.index(play)), ""
        return None, f"illegal play {play}: the legal plays are {', '.join(str(p) for p in pending.legal)}"
    return None, "a PlayMove needs an index or a play"


def _rejected(move: apb.PlayMove, reason: str) -> apb.ServerMessage:
    """A refusal of a move; its game id is echoed only if it is one the arena could have made."""
    game_id = move.game_id if len(move.game_id) <= GAME_ID_CHARS else ""
    return apb.ServerMessage(play_rejected=apb.PlayRejected(game_id=game_id, turn_id=move.turn_id, reason=reason))
