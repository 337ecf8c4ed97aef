"""The Python bot SDK: run any :class:`~bots.Bot` against the arena over gRPC::

    from bots.sdk import BotClient
    BotClient(MyBot(), "127.0.0.1:50051", token).run_forever()

The client opens one stream, greets with its token, answers every turn with
``bot.choose(observation)`` (sent as an index into the legal plays), keeps the
stream alive, and reconnects with exponential backoff when the connection
drops, so its games continue. A bad token or a name mismatch stops it with
:class:`BotRejected`, and so does another session of the same bot taking over
(the newest wins: two copies never fight over one name).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import grpc

from engine_service import convert
from engine_service.rules import Rules
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc

from .base import Bot

log = logging.getLogger("tablanette.sdk")
FATAL = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT)
TAKEN_OVER = grpc.StatusCode.ABORTED
"""Another session of the same bot connected: the newest wins, so this copy steps aside."""


class BotRejected(RuntimeError):
    """The arena refused this bot (bad token, wrong name, malformed hello)."""


@dataclass
class GameInfo:
    rules: Rules
    seat: int
    players: list[str]


class BotClient:
    """Connects one bot to the arena; :meth:`run_forever` until :meth:`stop`."""

    def __init__(
        self,
        bot: Bot,
        address: str,
        token: str,
        name: str | None = None,
        max_games: int = 4,
        tls_ca: bytes | None = None,
        backoff_max: float = 10.0,
    ) -> None:
        self.bot = bot
        self.address = address
        self.token = token
        self.name = name or bot.name
        self.max_games = max_games
        self.tls_ca = tls_ca
        self.backoff_max = backoff_max
        self.games: dict[str, GameInfo] = {}
        self.finished: list[apb.GameOver] = []
        self.rejections: list[apb.PlayRejected] = []
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._call: grpc.Future | None = None
        self._welcomed = False
        self._lock = threading.Lock()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            if self._call is not None:
                self._call.cancel()

    def run_forever(self) -> None:
        """Play until stopped, reconnecting with backoff (0.5 s doubling to the maximum; reset by a welcome)."""
        delay = 0.5
        while not self._stop.is_set():
            self._welcomed = False
            lost: str | None = None
            try:
                self._session()
            except grpc.RpcError as exc:
                code = exc.code() if hasattr(exc, "code") else None
                if code in FATAL:
                    raise BotRejected(f"{code.name}: {exc.details()}") from None
                if code == TAKEN_OVER:
                    raise BotRejected(f"ABORTED: another session of {self.name} took over ({exc.details()})") from None
                if self._stop.is_set():
                    break
                lost = code.name if code else str(exc)
            if self._welcomed:  # a session that got in resets the backoff, however it ended
                delay = 0.5
            if lost is not None:
                log.warning("%s: connection lost (%s); retrying in %.1f s", self.name, lost, delay)
            self.connected.clear()
            if self._stop.wait(delay):
                break
            delay = min(delay * 2, self.backoff_max)

    def _channel(self) -> grpc.Channel:
        options = [("grpc.keepalive_time_ms", 20_000), ("grpc.keepalive_timeout_ms", 10_000)]
        if self.tls_ca is not None:
            return grpc.secure_channel(self.address, grpc.ssl_channel_credentials(self.tls_ca), options)
        return grpc.insecure_channel(self.address, options)

    def _session(self) -> None:
        """One connection, until it ends (``_welcomed`` tells whether it got in)."""
        outbox: queue.Queue[apb.BotMessage | None] = queue.Queue()
        hello = apb.Hello(token=self.token, bot_name=self.name, version=self.bot.version, max_games=self.max_games)
        outbox.put(apb.BotMessage(hello=hello))

        def requests() -> Iterator[apb.BotMessage]:
            while (msg := outbox.get()) is not None:
                yield msg

        with self._channel() as channel:
            call = arena_pb2_grpc.BotGatewayStub(channel).Connect(requests())
            with self._lock:
                self._call = call
            if self._stop.is_set():
                call.cancel()
            keepalive: threading.Thread | None = None
            ended = threading.Event()
            try:
                for msg in call:
                    kind = msg.WhichOneof("kind")
                    if kind == "welcome":
                        self._welcomed = True
                        self.connected.set()
                        keepalive = self._start_keepalive(outbox, msg.welcome.keepalive_ms, ended)
                    elif kind == "game_started":
                        g = msg.game_started
                        self.games[g.game_id] = GameInfo(convert.rules_from_pb(g.rules), g.seat, list(g.players))
                    elif kind == "turn":
                        outbox.put(self._answer(msg.turn))
                    elif kind == "play_rejected":
                        self.rejections.append(msg.play_rejected)
                        log.warning("%s: play rejected: %s", self.name, msg.play_rejected.reason)
                    elif kind == "game_over":
                        self.finished.append(msg.game_over)
                        self.games.pop(msg.game_over.game_id, None)
            except grpc.RpcError as exc:
                if not (self._stop.is_set() and exc.code() == grpc.StatusCode.CANCELLED):
                    raise
            finally:
                outbox.put(None)
                ended.set()  # wakes the keepalive thread now, not at its next beat
                if keepalive is not None:
                    keepalive.join(timeout=1)

    def _answer(self, turn: apb.Turn) -> apb.BotMessage:
        info = self.games.get(turn.game_id)
        rules = info.rules if info else Rules.preset()
        obs = convert.observation_from_pb(turn.observation, rules, list(turn.legal_plays))
        play = self.bot.choose(obs)
        try:
            index = obs.legal_plays.index(play)
            move = apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, index=index)
        except ValueError:  # not a legal play: send it anyway and let the arena say why
            move = apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, play=convert.play_to_pb(play))
        return apb.BotMessage(play=move)

    def _start_keepalive(
        self, outbox: queue.Queue[apb.BotMessage | None], every_ms: int, ended: threading.Event
    ) -> threading.Thread:
        def beat() -> None:
            while not ended.wait(max(every_ms, 1000) / 2000) and not self._stop.is_set():
                outbox.put(apb.BotMessage(keepalive=apb.Keepalive(unix_ms=int(time.time() * 1000))))

        thread = threading.Thread(target=beat, daemon=True, name=f"{self.name}-keepalive")
        thread.start()
        return thread
