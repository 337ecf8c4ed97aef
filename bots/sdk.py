"""The Python bot SDK: run any :class:`~bots.Bot` against the arena over gRPC::

    from bots.sdk import BotClient
    BotClient(MyBot, "127.0.0.1:50051,127.0.0.1:50052", token).run_forever()

The client opens one stream, greets with its token, answers every turn with
``choose(observation)`` (sent as an index into the legal plays), keeps the
stream alive, and reconnects when the connection drops, so its games continue.

The bot contract for several games at once (``max_games``):

- pass a **factory** (the class itself, or any callable returning a :class:`~bots.Bot`)
  and every game gets an instance of its own, so per-game state needs no care;
  pass an **instance** and all games share it (it must then keep per-game state
  keyed by itself, and be thread-safe). Either way ``new_match(rules, seat)`` is
  called when a game starts.
- turns of different games are answered concurrently, each on a thread of a pool
  of ``max_games``; one game's turns are answered one at a time, in order. A slow
  decision in one game never eats the clock of another.
- ``inline=True`` trades that for speed: every turn is answered on the event loop
  that reads the stream (``grpc.aio``), with no hand-off to another thread, which
  on a busy machine is a large share of a move's cost (bench/gateway.py prints
  both). Games are then answered one at a time: a slow ``choose`` holds up the
  turns of every other game. For bots that answer in well under a millisecond.
- a ``choose`` that accepts a ``clock`` parameter gets a :class:`Clock`:
  ``clock.remaining()`` is the time left of this turn, in seconds.
- a ``choose`` that raises costs a move, not the connection: the exception is
  logged and the client answers with the engine's own timeout play (the first
  legal play: the lowest card, trailed when the rules allow).

``address`` may list several engine replicas (comma-separated): a failed
connection (or one with no Welcome within 3 s) is tried again at the next
address, after 0.25 s doubling to 2 s, jittered (:mod:`bots.reconnect`), well
within the arena's grace period; a draining replica's bots move on at once.

A bad or revoked token or a name mismatch stops it with :class:`BotRejected`.
Anything else it rides out: a bot has one session at a time, so while another
session of the same bot is live the arena refuses this one (ALREADY_EXISTS) and
the client tries again later, as it does when it was replaced after going quiet
(ABORTED) or told to slow down (RESOURCE_EXHAUSTED, with the wait the arena
suggests). It logs its welcome, each game's start and result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import grpc

from engine_service.rules import Rules
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc
from tablanette.v1 import game_pb2 as gpb

from .base import Bot
from .reconnect import (
    BACKOFF_MAX,
    CHANNEL_OPTIONS,
    FATAL,
    WAIT_AT_LEAST,
    BotRejected,
    backoff_delays,
    jittered,
    retry_after,
)
from .reconnect import BACKOFF_START as BACKOFF_START  # the reconnect policy (bots/reconnect.py), as the SDK's
from .reconnect import parse_addresses as parse_addresses
from .sdk_session import Stream, Upkeep, aio_queued, aio_stream, blocking_stream, queued, session
from .sdk_worlds import ask_worlds, sample_worlds, world_states  # noqa: F401  (possible worlds: bots/sdk_worlds.py)
from .turns import Clock as Clock  # a turn's clock and view are made in bots/turns.py; bots import them from here
from .turns import observation_of as observation_of
from .turns import takes_clock, turn_clock

log = logging.getLogger("tablanette.sdk")
FEATURES = ("packed",)
"""Asked for in the Hello: turns as card numbers and masks, which this SDK reads without naming
a card (docs/protocol.md#the-packed-form). A server that does not grant it sends named turns,
which are read as well."""


BotFactory = Callable[[], Bot]
"""Makes a fresh bot: a :class:`~bots.Bot` subclass itself, or any callable returning one."""


@dataclass
class GameInfo:
    rules: Rules
    seat: int
    players: list[str]
    bot: Bot
    """This game's bot: its own instance when the client was given a factory."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while one of this game's turns is being answered: a game's turns go one at a time."""
    clocked: bool = field(init=False)
    """Whether this game's ``choose`` takes a ``clock``."""

    def __post_init__(self) -> None:
        self.clocked = takes_clock(self.bot)


class BotClient:
    """Connects one bot to the arena; :meth:`run_forever` until :meth:`stop`.

    ``bot`` is a factory (a fresh instance per game) or one shared instance; see the module's notes.
    """

    def __init__(
        self,
        bot: Bot | BotFactory,
        address: str | Sequence[str],
        token: str,
        name: str | None = None,
        max_games: int = 4,
        tls_ca: bytes | None = None,
        backoff_max: float = BACKOFF_MAX,
        inline: bool = False,
    ) -> None:
        if isinstance(bot, Bot):
            self.factory: BotFactory | None = None
            self.bot = bot
        else:
            self.factory = bot
            self.bot = bot()  # a first instance: the bot's name and version, and for games of unknown start
        self.addresses = parse_addresses(address)
        self.token = token
        self.name = name or self.bot.name
        self.max_games = max_games
        self.tls_ca = tls_ca
        self.backoff_max = backoff_max
        self.inline = inline
        self._next = 0
        self.games: dict[str, GameInfo] = {}
        self.finished: list[apb.GameOver] = []
        self.rejections: list[apb.PlayRejected] = []
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._cancel: Callable[[], object] | None = None
        """Cancels the current session's call (from any thread)."""
        self._welcomed = False
        self._lock = threading.Lock()
        self.choose_errors = 0
        """Turns where ``choose`` raised and the client answered the timeout play instead."""
        self._pool = ThreadPoolExecutor(max(1, max_games), thread_name_prefix=f"{self.name}-turn")

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            if self._cancel is not None:
                self._cancel()  # any thread, even once an inline session's loop has closed (Stream.cancel)
        self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def address(self) -> str:
        """The replica the next connection goes to."""
        return self.addresses[self._next % len(self.addresses)]

    def run_forever(self) -> None:
        """Play until stopped, reconnecting (0.25 s doubling to 2 s, jittered; reset by a welcome)."""
        # inline: one event loop for every session (grpc.aio keeps state bound to the first loop it ran on)
        loop = asyncio.new_event_loop() if self.inline else None
        try:
            self._run(loop)
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
            if loop is not None:
                loop.close()

    def _run(self, loop: asyncio.AbstractEventLoop | None) -> None:
        delays = backoff_delays(BACKOFF_START, self.backoff_max)
        while not self._stop.is_set():
            self._welcomed = False
            lost: str | None = None
            draining = False
            wait_at_least = 0.0
            try:
                if loop is not None:
                    loop.run_until_complete(self._inline_session())
                else:
                    self._session()
            except grpc.RpcError as exc:
                code = exc.code() if hasattr(exc, "code") else None
                if code in FATAL:
                    raise BotRejected(f"{code.name}: {exc.details()}") from None
                if self._stop.is_set():
                    break
                lost = f"{code.name}: {exc.details()}" if code else str(exc)
                draining = code == grpc.StatusCode.UNAVAILABLE and "shutting down" in (exc.details() or "")
                wait_at_least = max(WAIT_AT_LEAST.get(code, 0.0), retry_after(exc))
            if self._welcomed:  # a session that got in resets the backoff, however it ended
                delays = backoff_delays(BACKOFF_START, self.backoff_max)
            self.connected.clear()
            failed = self.address
            self._next += 1  # a replica that failed us: the next attempt goes to the next one in the list
            delay = max(0.0 if draining else jittered(next(delays)), wait_at_least)
            log.warning(
                "%s: connection to %s ended (%s); reconnecting to %s in %.2f s",
                self.name,
                failed,
                lost or "stream closed",
                self.address,
                delay,
            )
            if self._stop.wait(delay):
                break

    def _channel(self) -> grpc.Channel:
        if self.tls_ca is not None:
            return grpc.secure_channel(self.address, grpc.ssl_channel_credentials(self.tls_ca), CHANNEL_OPTIONS)
        return grpc.insecure_channel(self.address, CHANNEL_OPTIONS)

    def _hello(self) -> apb.BotMessage:
        hello = apb.Hello(
            token=self.token, bot_name=self.name, version=self.bot.version, max_games=self.max_games, features=FEATURES
        )
        return apb.BotMessage(hello=hello)

    def _aio_channel(self) -> grpc.aio.Channel:
        if self.tls_ca is not None:
            return grpc.aio.secure_channel(self.address, grpc.ssl_channel_credentials(self.tls_ca), CHANNEL_OPTIONS)
        return grpc.aio.insecure_channel(self.address, CHANNEL_OPTIONS)

    def _session(self) -> None:
        """One connection on grpc's blocking API, each turn answered on the pool (threads mode)."""
        outbox: queue.Queue[apb.BotMessage | None] = queue.Queue()
        with self._channel() as channel:
            call = arena_pb2_grpc.BotGatewayStub(channel).Connect(queued(outbox))
            with self._opened(blocking_stream(call, outbox)) as upkeep:
                for msg in call:
                    self._dispatch(msg, upkeep)

    async def _inline_session(self) -> None:
        """One connection on grpc.aio, each turn answered on the loop that read it (``inline``)."""
        outbox: asyncio.Queue[apb.BotMessage | None] = asyncio.Queue()
        async with self._aio_channel() as channel:
            call = arena_pb2_grpc.BotGatewayStub(channel).Connect(aio_queued(outbox))
            with self._opened(aio_stream(call, outbox)) as upkeep:
                async for msg in call:
                    self._dispatch(msg, upkeep)

    @contextlib.contextmanager
    def _opened(self, stream: Stream) -> Iterator[Upkeep]:
        """:func:`bots.sdk_session.session` of a new call, which :meth:`stop` can now cancel."""
        with self._lock:
            self._cancel = stream.cancel
        if self._stop.is_set():
            stream.cancel()
        with session(self.name, stream, self._hello(), self._stop.is_set) as upkeep:
            yield upkeep

    def _dispatch(self, msg: apb.ServerMessage, upkeep: Upkeep) -> None:
        """Handle one message from the server, in stream order, on the thread (or loop) that read it: a
        keepalive asking for its echo is echoed at once (the arena times the round trip), a turn is
        answered here (inline) or handed to the pool, and so is a game's end."""
        send = upkeep.stream.send
        kind = msg.WhichOneof("kind")
        if kind == "keepalive":
            if msg.keepalive.echo:
                send(apb.BotMessage(keepalive=apb.Keepalive(unix_ms=int(time.time() * 1000), echo=msg.keepalive.echo)))
        elif kind == "welcome":
            self._welcomed = True
            self.connected.set()
            w = msg.welcome
            log.info(
                "%s: connected to %s (session %s, server %s, grace %d ms)",
                self.name,
                self.address,
                w.session_id,
                w.server_version,
                w.grace_ms,
            )
            upkeep.welcomed(w.keepalive_ms)
        elif kind == "game_started":
            g = msg.game_started
            if g.game_id not in self.games:  # after a reconnect the game goes on with its bot
                rules = convert.rules_from_pb(g.rules)
                bot = self._new_bot(rules, g.seat)
                self.games[g.game_id] = GameInfo(rules, g.seat, list(g.players), bot)
            log.info("%s: game %s started, seat %d, players %s", self.name, g.game_id, g.seat, g.players)
        elif kind == "turn":
            if self.inline:
                send(self._answer_logged(msg.turn, self._game_for(msg.turn), time.monotonic()))
            else:
                self._submit(msg.turn, time.monotonic(), send)
        elif kind == "play_rejected":
            self.rejections.append(msg.play_rejected)
            log.warning("%s: play rejected: %s", self.name, msg.play_rejected.reason)
        elif kind == "game_over":
            self.finished.append(msg.game_over)
            self._log_result(msg.game_over)
            if (info := self.games.pop(msg.game_over.game_id, None)) is not None:
                if self.inline:  # on this loop, after the game's last answer
                    _end_match(self.name, info, msg.game_over.result)
                else:
                    self._submit_end(info, msg.game_over.result)

    def _log_result(self, over: apb.GameOver) -> None:
        info = self.games.get(over.game_id)
        r = over.result
        if r.winner < 0:
            outcome = "a draw"
        elif info is None:
            outcome = f"team {r.winner} won"
        else:
            outcome = "won" if r.winner == info.rules.team_of(over.seat) else "lost"
        log.info("%s: game %s over: %s (%s), score %s", self.name, over.game_id, outcome, r.reason, list(r.score))

    def _new_bot(self, rules: Rules, seat: int) -> Bot:
        """The bot for a new game: a fresh one from the factory (or the shared one), told the game starts."""
        bot = self.factory() if self.factory is not None else self.bot
        try:
            bot.new_match(rules, seat)
        except Exception:
            log.exception("%s: new_match raised; the game goes on", self.name)
        return bot

    def _submit(self, turn: apb.Turn, received: float, send: Callable[[apb.BotMessage], None]) -> None:
        """Hand a turn to the pool (none once the client is stopping: its pool is shut down)."""
        try:
            self._pool.submit(self._play_turn, turn, received, send)
        except RuntimeError:  # "cannot schedule new futures after shutdown": stop() won the race
            if not self._stop.is_set():
                raise

    def _submit_end(self, info: GameInfo, result: gpb.MatchResult) -> None:
        """``end_match`` on a pool thread, after the game's last answer (it takes the game's lock)."""
        with contextlib.suppress(RuntimeError):  # the client is stopping: its pool is shut down
            self._pool.submit(_end_match, self.name, info, result)

    def _game_for(self, turn: apb.Turn) -> GameInfo:
        info = self.games.get(turn.game_id)
        if info is None:  # a turn of a game this client never saw start (it cannot happen with a healthy arena)
            rules = Rules.preset()
            seat = turn.packed.seat if turn.HasField("packed") else turn.observation.seat
            info = self.games.setdefault(turn.game_id, GameInfo(rules, seat, [], self._new_bot(rules, seat)))
        return info

    def _play_turn(self, turn: apb.Turn, received: float, send: Callable[[apb.BotMessage], None]) -> None:
        """Answer one turn (on a pool thread); a game's turns one at a time."""
        info = self._game_for(turn)
        with info.lock:
            send(self._answer_logged(turn, info, received))

    def _answer_logged(self, turn: apb.Turn, info: GameInfo, received: float) -> apb.BotMessage:
        """:meth:`_answer`; should anything fail, the engine's own timeout play (index 0), logged."""
        try:
            return self._answer(turn, info, turn_clock(turn, received))
        except Exception:  # never lose an error silently; a bug here costs a move, not the session
            log.exception("%s: could not answer turn %d of game %s", self.name, turn.turn_id, turn.game_id)
            return apb.BotMessage(play=apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, index=0))

    def _answer(self, turn: apb.Turn, info: GameInfo, clock: Clock) -> apb.BotMessage:
        obs = observation_of(turn, info.rules)
        try:
            play = info.bot.choose(obs, clock=clock) if info.clocked else info.bot.choose(obs)  # type: ignore[call-arg]
        except Exception:
            # A bug in the bot costs a move, not the connection: the engine's own timeout play is the
            # first legal play (the lowest card, trailed when it may be), so the record reads as usual.
            self.choose_errors += 1
            play = obs.legal_plays[0]
            log.exception("%s: choose raised in game %s; answering %s instead", self.name, turn.game_id, play)
        try:
            index = obs.legal_plays.index(play)
            move = apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, index=index)
        except ValueError:  # not a legal play: send it anyway and let the arena say why
            move = apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, play=convert.play_to_pb(play))
        return apb.BotMessage(play=move)


def _end_match(name: str, info: GameInfo, result: gpb.MatchResult) -> None:
    """``end_match`` of a game's bot, after the game's last answer (it takes the game's lock)."""
    winner = result.winner if result.winner >= 0 else None  # the wire's -1 is a draw: None, as in records
    ended = {"winner": winner, "reason": result.reason, "score": list(result.score)}
    with info.lock:
        try:
            info.bot.end_match(ended)
        except Exception:
            log.exception("%s: end_match raised", name)
