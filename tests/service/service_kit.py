"""Real clients for the service tests: a hand-driven bot stream and background matches.

:class:`RawBot` is a real gRPC client of ``BotGateway.Connect`` whose every
message the test writes by hand (including garbage bytes), so a test can make it
misbehave. :class:`League` keeps healthy bots playing match after match through
the real match runner while a test misbehaves next to them, and checks every one
of those matches finished normally with a record that re-verifies.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from arena_harness import REDIS_URL, Arena, Proc
from redis.asyncio import Redis

from engine_service.driver import Answered
from engine_service.rules import Match, Rules, verify_record
from engine_service.time_control import TimeControl
from store.keys import Keys
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import game_pb2 as gpb
from worker.match_runner import MatchOutcome, MatchRunner

CONNECT = "/tablanette.v1.BotGateway/Connect"
WAIT = 15.0  # the longest any single wait-for-condition may take


class StreamEnded(AssertionError):
    """The server ended the stream while the test waited for a message."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"stream ended with {code.name}: {details}")
        self.code = code
        self.details = details


def wait_until(check: Callable[[], Any], timeout: float = WAIT, what: str = "condition") -> Any:
    """Poll ``check`` until it returns something truthy (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise TimeoutError(f"timed out after {timeout:.1f} s waiting for {what}")


def session_of(arena: Arena, bot: str) -> str | None:
    """The id of ``bot``'s live session in the registry (None when it has none)."""
    raw = arena.redis.get(Keys(arena.prefix).session(bot))
    return None if raw is None else str(json.loads(raw)["session_id"])


def replica_of(arena: Arena, bot: str) -> str | None:
    """The replica holding ``bot``'s live session (None when it has none)."""
    raw = arena.redis.get(Keys(arena.prefix).session(bot))
    return None if raw is None else str(json.loads(raw)["replica"])


def _serialize(msg: apb.BotMessage | bytes) -> bytes:
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


class RawBot:
    """One ``BotGateway.Connect`` stream driven message by message by the test.

    With ``raw_bytes=True`` ``send`` also takes bytes, sent exactly as given (an
    identity serializer), so garbage reaches the server unchanged.
    """

    def __init__(
        self,
        port: int,
        *,
        tls_ca: bytes | None = None,
        options: Sequence[tuple[str, Any]] = (),
        raw_bytes: bool = False,
    ) -> None:
        target = f"127.0.0.1:{port}"
        if tls_ca is not None:
            self.channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(tls_ca), options=list(options))
        else:
            self.channel = grpc.insecure_channel(target, options=list(options))
        self._outbox: queue.Queue[apb.BotMessage | bytes | None] = queue.Queue()
        self.inbox: queue.Queue[apb.ServerMessage | None] = queue.Queue()
        self.received: list[apb.ServerMessage] = []
        self.ended = threading.Event()
        self.code: grpc.StatusCode | None = None
        self.details = ""
        if raw_bytes:  # an identity serializer: bytes reach the server exactly as given
            connect = self.channel.stream_stream(
                CONNECT, request_serializer=_serialize, response_deserializer=apb.ServerMessage.FromString
            )
        else:
            connect = arena_pb2_grpc.BotGatewayStub(self.channel).Connect
        self.call = connect(self._requests())
        self._reader = threading.Thread(target=self._read, daemon=True, name="rawbot-reader")
        self._reader.start()

    def _requests(self) -> Any:
        while (msg := self._outbox.get()) is not None:
            yield msg

    def _read(self) -> None:
        try:
            for msg in self.call:
                self.inbox.put(msg)
            self.code, self.details = grpc.StatusCode.OK, ""
        except grpc.RpcError as exc:
            self.code, self.details = exc.code(), exc.details() or ""
        finally:
            self.ended.set()
            self.inbox.put(None)

    # ---------------------------------------------------------------- sending

    def send(self, msg: apb.BotMessage | bytes) -> None:
        self._outbox.put(msg)

    def hello(self, token: str, name: str, version: str = "raw", max_games: int = 1) -> None:
        self.send(apb.BotMessage(hello=apb.Hello(token=token, bot_name=name, version=version, max_games=max_games)))

    def play(self, game_id: str, turn_id: int, index: int | None = None, play: gpb.Play | None = None) -> None:
        move = apb.PlayMove(game_id=game_id, turn_id=turn_id)
        if index is not None:
            move.index = index
        if play is not None:
            move.play.CopyFrom(play)
        self.send(apb.BotMessage(play=move))

    def half_close(self) -> None:
        """End the request stream (the bot says it is done)."""
        self._outbox.put(None)

    def close(self) -> None:
        """Drop the connection (as a crashing bot does)."""
        self._outbox.put(None)
        self.call.cancel()
        self.channel.close()

    # ---------------------------------------------------------------- receiving

    def recv(self, *kinds: str, timeout: float = WAIT) -> apb.ServerMessage:
        """The next message (of one of ``kinds``, if given; keepalives are skipped unless asked for)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                msg = self.inbox.get(timeout=max(left, 0.001))
            except queue.Empty:
                raise TimeoutError(f"no {'/'.join(kinds) or 'message'} within {timeout} s") from None
            if msg is None:
                self.inbox.put(None)  # keep reporting the end
                assert self.code is not None
                raise StreamEnded(self.code, self.details)
            self.received.append(msg)
            kind = msg.WhichOneof("kind")
            if (kind == "keepalive" and "keepalive" not in kinds) or (kinds and kind not in kinds):
                continue
            return msg

    def welcome(self, token: str, name: str, timeout: float = WAIT) -> apb.Welcome:
        self.hello(token, name)
        return self.recv("welcome", timeout=timeout).welcome

    def status(self, timeout: float = WAIT) -> tuple[grpc.StatusCode, str]:
        """Wait for the stream to end; its final status code and details."""
        if not self.ended.wait(timeout):
            raise TimeoutError(f"the stream did not end within {timeout} s")
        assert self.code is not None
        return self.code, self.details

    def next_turn(self, timeout: float = WAIT) -> apb.Turn:
        return self.recv("turn", timeout=timeout).turn

    def play_out(
        self,
        game_id: str,
        choose: Callable[[apb.Turn], int | None] | None = None,
        timeout: float = 60,
    ) -> apb.GameOver:
        """Answer every turn of ``game_id`` (index from ``choose``; ``None`` = stay silent) until GameOver."""
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv("turn", "game_over", timeout=max(deadline - time.monotonic(), 0.001))
            if msg.WhichOneof("kind") == "game_over":
                if msg.game_over.game_id == game_id:
                    return msg.game_over
                continue
            turn = msg.turn
            if turn.game_id != game_id:
                continue
            index = 0 if choose is None else choose(turn)
            if index is not None:
                self.play(turn.game_id, turn.turn_id, index=index)


# -------------------------------------------------------------------- matches


class ObservedRunner(MatchRunner):
    """The real match runner, also noting every Dispatch answer it applies (for tests to wait on)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answers: list[tuple[int, int]] = []  # (seat, PlayResponse.Outcome)
        self.responses: list[tuple[int, dpb.PlayResponse]] = []
        self.changed = threading.Condition()

    async def play(
        self,
        rules: Rules,
        seed: str,
        bots: Sequence[str],
        game_id: str,
        control: TimeControl | None = None,
        answered: Answered | None = None,
        watch: Callable[[Match], None] | None = None,
    ) -> MatchOutcome:
        def noted(turn_id: int, seat: int, resp: dpb.PlayResponse) -> None:
            self._answered(turn_id, seat, resp)
            if answered is not None:
                answered(turn_id, seat, resp)

        return await super().play(rules, seed, bots, game_id, control, noted, watch)

    def _answered(self, turn_id: int, seat: int, resp: dpb.PlayResponse) -> None:
        with self.changed:
            self.answers.append((seat, resp.outcome))
            self.responses.append((seat, resp))
            self.changed.notify_all()

    def wait_answers(self, n: int, seat: int | None = None, timeout: float = WAIT) -> None:
        """Until ``n`` answers (of ``seat``, if given) have been applied."""

        def count() -> int:
            return sum(1 for s, _ in self.answers if seat is None or s == seat)

        with self.changed:
            if not self.changed.wait_for(lambda: count() >= n, timeout):
                raise TimeoutError(f"the runner applied only {count()} answers, waited for {n}")


@dataclass
class MatchThread:
    """One match played by a real :class:`ObservedRunner` on its own thread and event loop."""

    prefix: str
    rules: Rules
    seed: str
    bots: list[str]
    game_id: str
    grace_ms: int = 10_000
    tls_ca: bytes | None = None
    clock: str = "wall"
    latency_credit_ms: int = 0
    time_bank_ms: int = 0
    replica_matches: bool = True
    runner_ready: threading.Event = field(default_factory=threading.Event)
    outcome: MatchOutcome | None = None
    error: BaseException | None = None

    def __post_init__(self) -> None:
        self.runner: ObservedRunner | None = None
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"match-{self.game_id}")
        self.thread.start()
        if not self.runner_ready.wait(WAIT):
            raise TimeoutError("the match runner did not start")

    def _run(self) -> None:
        try:
            self.outcome = asyncio.run(self._play())
        except BaseException as exc:
            self.error = exc

    async def _play(self) -> MatchOutcome:
        redis = Redis.from_url(REDIS_URL)
        self.runner = ObservedRunner(
            redis,
            self.prefix,
            self.grace_ms,
            self.tls_ca,
            replica_matches=self.replica_matches,
        )
        self.runner_ready.set()
        control = TimeControl(self.rules.move_time_ms, self.clock, 0, self.latency_credit_ms, self.time_bank_ms)
        try:
            return await self.runner.play(self.rules, self.seed, self.bots, self.game_id, control)
        finally:
            await self.runner.close()
            await redis.aclose()

    def wait_answers(self, n: int, seat: int | None = None, timeout: float = WAIT) -> None:
        assert self.runner is not None
        self.runner.wait_answers(n, seat, timeout)

    def result(self, timeout: float = 60) -> MatchOutcome:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise TimeoutError(f"match {self.game_id} did not finish within {timeout} s")
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


def check_clean(outcome: MatchOutcome, reasons: tuple[str, ...] = ("target", "deals")) -> None:
    """A normally finished match: expected reason, a record that re-verifies, no misconduct."""
    record = outcome.record
    assert record["result"]["reason"] in reasons, record["result"]
    assert verify_record(record).totals == record["score"]
    for seat, c in enumerate(outcome.conduct):
        assert (c.timeouts, c.illegal, c.auto, c.forfeit) == (0, 0, 0, False), f"seat {seat}: {c}"
    assert not any(p.get("auto") for d in record["deals"] for p in d["plays"])


def auto_plays(record: dict[str, Any], seat: int) -> int:
    return sum(1 for d in record["deals"] for p in d["plays"] if p["seat"] == seat and p.get("auto"))


HEALTHY_RULES = Rules.preset("tablic", target=31)


class League:
    """Healthy bots playing match after match (real runner, real bots) until :meth:`finish`.

    Shows that other bots keep playing while a test misbehaves: every match
    must finish normally and re-verify, and at least ``min_matches`` must.
    """

    def __init__(
        self, prefix: str, bots: Sequence[str], tag: str, rules: Rules = HEALTHY_RULES, tls_ca: bytes | None = None
    ) -> None:
        self.prefix, self.bots, self.tag, self.rules, self.tls_ca = prefix, list(bots), tag, rules, tls_ca
        self.outcomes: list[MatchOutcome] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._started = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._loop()), daemon=True, name=f"league-{tag}")
        self.thread.start()
        if not self._started.wait(WAIT):
            raise TimeoutError("the league did not start")

    async def _loop(self) -> None:
        redis = Redis.from_url(REDIS_URL)
        runner = MatchRunner(redis, self.prefix, tls_ca=self.tls_ca)
        try:
            i = 0
            while True:
                seats = self.bots if i % 2 == 0 else self.bots[::-1]
                play = runner.play(self.rules, f"{self.tag}-{i}", seats, f"league-{self.tag}/{i}")
                self._started.set()
                self.outcomes.append(await play)
                i += 1
                if self._stop.is_set():
                    break
        except BaseException as exc:
            self.error = exc
        finally:
            self._started.set()
            await runner.close()
            await redis.aclose()

    def finish(self, min_matches: int = 1, timeout: float = 60) -> list[MatchOutcome]:
        """Stop after the match in progress; check every match played."""
        self._stop.set()
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise TimeoutError(f"league {self.tag} did not finish within {timeout} s")
        if self.error is not None:
            raise self.error
        assert len(self.outcomes) >= min_matches, f"only {len(self.outcomes)} healthy matches finished"
        for outcome in self.outcomes:
            check_clean(outcome)
        return self.outcomes


def start_healthy(arena: Arena, port: int, tag: str = "h") -> list[str]:
    """Two well-behaved Python SDK bot processes on ``port`` (greedy and random), connected."""
    names = [f"{tag}-greedy", f"{tag}-random"]
    for name, kind in zip(names, ("greedy", "random"), strict=True):
        arena.start_python_bot(kind, name, arena.add_bot(name), port)
    arena.wait_connected(*names)
    return names


@dataclass
class Engine:
    """A running engine service process with two healthy bots connected to it."""

    arena: Arena
    proc: Proc
    port: int
    healthy: list[str]

    @classmethod
    def start(cls, arena: Arena, name: str = "engine", **env: str) -> Engine:
        proc, port = arena.start_engine(name, **env)
        return cls(arena, proc, port, start_healthy(arena, port, tag=f"{name}-h"))

    def league(self, tag: str, rules: Rules = HEALTHY_RULES) -> League:
        """Healthy matches in the background (once the healthy bots are connected: a test before may
        have restarted the engine)."""
        self.arena.wait_connected(*self.healthy)
        return League(self.arena.prefix, self.healthy, tag, rules)

    def raw(self, **kwargs: Any) -> RawBot:
        return RawBot(self.port, **kwargs)


OPENSSL = shutil.which("openssl")


def self_signed(
    directory: Path, common_name: str = "tablanette-test", ips: Sequence[str] = ("127.0.0.1",)
) -> tuple[Path, Path]:
    """A self-signed certificate for ``ips`` and localhost (its own CA) and its key, as PEM files.

    Made with the ``cryptography`` package when it is installed, else with the ``openssl`` command.
    """
    cert_path, key_path = directory / f"{common_name}.crt", directory / f"{common_name}.key"
    try:
        _with_cryptography(common_name, cert_path, key_path, ips)
    except ImportError:
        if OPENSSL is None:
            pytest.skip("neither the cryptography package nor openssl is available to make a certificate")
        argv = [OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        argv += ["-days", "1", "-subj", f"/CN={common_name}", "-keyout", str(key_path), "-out", str(cert_path)]
        names = ",".join(["DNS:localhost", *(f"IP:{ip}" for ip in ips)])
        argv += ["-addext", f"subjectAltName={names}", "-addext", "basicConstraints=critical,CA:TRUE"]
        subprocess.run(argv, check=True, capture_output=True, timeout=30)
    return cert_path, key_path


def _with_cryptography(common_name: str, cert_path: Path, key_path: Path, ips: Sequence[str]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), *(x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips)]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
