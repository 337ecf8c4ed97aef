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
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
from google.protobuf.message import DecodeError

from config import ArenaSettings
from engine_service import metrics
from engine_service.admission import Admission, Admitted, is_quiet, short
from engine_service.connection import BotConnection, first_echo
from engine_service.grace import GracePeriod
from engine_service.limits import RateLimit
from engine_service.malformed import MalformedLog, reason
from engine_service.meters import Meters, Watch
from engine_service.relayed import RelayedPeers
from engine_service.round_trips import RoundTrips
from engine_service.time_control import TimeControl
from engine_service.turn_wait import (
    GAME_ID_CHARS,
    PendingTurn,
    answer_close_or_timeout,
    rejected,
    resolve,
    turn_message,
    turn_window,
)
from engine_service.upkeep import Upkeep
from store.sessions import SessionEntry, Sessions
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb

log = logging.getLogger("tablanette.gateway")
SERVER_VERSION = "tablanette-arena/0.1"
CONNECT = "/tablanette.v1.BotGateway/Connect"


FEATURES = ("packed",)
"""The optional forms this server grants when a Hello asks (docs/protocol.md)."""


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
        self.malformed = MalformedLog(settings.malformed_log_s)  # messages of any RPC here that did not decode
        self.upkeep = Upkeep(settings, registry, self.connections, token_exists)
        """Keepalives, stalled streams, the registry and revocations (:meth:`Upkeep.run`, forever, beside it)."""

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
    ) -> apb.BotMessage:
        """The stream's first message, within the Hello timeout (INVALID_ARGUMENT if it ended first); a stream is
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
        except StopAsyncIteration:  # nothing came, or a first message cut short (gRPC drops what the end cut)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the stream ended before its Hello")
        except TimeoutError:
            why = f"send a Hello within {timeout_s:g} seconds of connecting"
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, why)
        except DecodeError:  # not a BotMessage at all (left unhandled, the bot would see UNKNOWN)
            self.malformed.note(peer, CONNECT)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, reason(CONNECT))
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
                    conn.send(rejected(apb.PlayMove(), "already greeted: Hello is only the first message"))
        except asyncio.CancelledError:
            raise
        except DecodeError:  # not a BotMessage at all
            self.malformed.note(conn.peer, CONNECT)
            conn.close(grpc.StatusCode.INVALID_ARGUMENT, reason(CONNECT))
            return
        except Exception as exc:  # a broken transport
            log.warning("bot %s stream failed: %s", conn.entry.bot, short(str(exc), 200))
            conn.close(grpc.StatusCode.INVALID_ARGUMENT, f"malformed message: {short(str(exc), 200)}")
        conn.close()

    def _too_big(self, msg: apb.BotMessage) -> str:
        return f"message of {msg.ByteSize()} bytes exceeds the limit of {self.settings.max_message_bytes} bytes"

    def _on_play(self, conn: BotConnection, move: apb.PlayMove) -> bool:
        """True if ``move`` answered the turn waiting for it; anything else is refused with a reason."""
        if len(move.game_id) > GAME_ID_CHARS:
            conn.send(rejected(move, f"a game id is at most {GAME_ID_CHARS} characters"))
            return False
        pending = self.pending.get((conn.entry.bot, move.game_id))
        if pending is None:
            conn.send(rejected(move, f"no turn of yours is waiting in game {move.game_id!r}"))
            return False
        if move.turn_id != pending.turn_id:
            conn.send(rejected(move, f"turn {move.turn_id} is not the current turn {pending.turn_id}"))
            return False
        play, reason = resolve(move, pending)
        if play is None:
            pending.rejected += 1
            conn.send(rejected(move, reason))
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
        grace = (grace_ms or self.settings.grace_ms) / 1000
        pending = PendingTurn(turn)
        key = (bot, turn.game_id)
        self.pending[key] = pending
        try:
            conn = await self._wait_for(bot, grace, pending)
            while conn is not None:
                resp = await self._ask_on(conn, bot, game, pending, control, started)
                if resp is not None:
                    return resp
                conn = await self._wait_for(bot, grace, pending)  # the stream closed: its grace period
            return await self._response(bot, dpb.PlayResponse.DISCONNECTED, pending, started)
        finally:
            if self.pending.get(key) is pending:
                del self.pending[key]

    async def _ask_on(
        self,
        conn: BotConnection,
        bot: str,
        game: apb.GameStarted,
        pending: PendingTurn,
        control: TimeControl | None,
        started: float,
    ) -> dpb.PlayResponse | None:
        """Send ``pending``'s turn on ``conn`` and wait for it: its response (played, or timed out), or
        None if the stream closed first (the turn then waits for the bot to come back)."""
        turn = pending.turn
        move_time = max(turn.time_left_ms, 1) / 1000
        cpu, cap_ms, latency_credit_ms = (False, 0, 0)
        if control is not None:
            cpu, cap_ms, latency_credit_ms = control.cpu, control.turn_wall_cap_ms, control.latency_credit_ms
        if latency_credit_ms and conn.round_trips.estimate() is None:
            await first_echo(conn, latency_credit_ms)
        if turn.game_id not in conn.announced:
            conn.send(apb.ServerMessage(game_started=game))
            conn.announced.add(turn.game_id)
        watch = self.meters.watch(bot, move_time) if cpu else None  # None: a bot no host meters
        try:
            credit = conn.round_trips.credit_ms(latency_credit_ms) if latency_credit_ms and watch is None else 0
            wait = turn_window(move_time, credit, cap_ms if watch is not None else None)
            sent = time.monotonic()
            conn.send(turn_message(turn, conn.packed, wait, move_time, watch is not None, credit))
            await answer_close_or_timeout(conn, pending, wait, watch)
            if watch is not None and watch.lost and pending.play is None:  # the arena's fault: wall cap only
                await answer_close_or_timeout(conn, pending, wait - (time.monotonic() - sent))
            outcome = dpb.PlayResponse
            if pending.play is not None:
                used = pending.answered_at - sent - credit / 1000
                return await self._response(bot, outcome.PLAYED, pending, started, watch, used, credit)
            if not conn.closed.is_set():
                used = time.monotonic() - sent - credit / 1000
                return await self._response(bot, outcome.TIMEOUT, pending, started, watch, used, credit)
            if watch is not None:
                await self.meters.finish(watch)
                watch = None
            return None
        finally:
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
        registry lookup spends waiting for Redis is not the bot's
        (:class:`engine_service.grace.GracePeriod`: a whole grace period from
        then, at most three in all; a longer outage is handed back to the
        runner, which excuses it in turn), and the turn is marked as the
        arena's fault.
        """
        wait = GracePeriod(grace, since=self.disconnected_at.get(bot))
        while True:
            conn = self.connections.get(bot)
            if conn is not None and not conn.closed.is_set():
                return conn
            if self.draining:  # no bot can (re)connect here any more: let the runner find it elsewhere now
                return None
            remaining = wait.remaining()
            if remaining <= 0:
                return None
            asked = time.monotonic()
            entry = await self.registry.lookup(bot)  # the client waits out a Redis outage
            wait.looked_up(asked, f"bot {bot!r}")
            pending.arena_fault = pending.arena_fault or wait.fault is not None
            if entry is not None and entry.replica != self.settings.advertise:
                return None
            event = self._arrivals.setdefault(bot, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), min(wait.remaining(), 0.25))

    async def end_game(self, req: dpb.EndGameRequest) -> dpb.EndGameResponse:
        conn = self.connections.get(req.bot_name)
        if conn is None or conn.closed.is_set():
            return dpb.EndGameResponse(delivered=False)
        conn.send(apb.ServerMessage(game_over=req.game_over))
        conn.announced.discard(req.game_over.game_id)
        return dpb.EndGameResponse(delivered=True)

    # ------------------------------------------------------------ draining

    def drain(self) -> None:
        """Stop taking bots and ask connected ones to reconnect elsewhere."""
        self.draining = True
        for conn in list(self.connections.values()):
            conn.close(grpc.StatusCode.UNAVAILABLE, "server is shutting down; reconnect")
