"""Sessions without races, attacked as an outsider would: clients written from the ``.proto``, not the SDK.

Against real engine service processes on free ports and the real Redis:

- N concurrent Hellos with one token open exactly one session, the others are
  refused ALREADY_EXISTS (on one replica, and split over two), and the audit log
  says so: one ``login``, N-1 ``login_refused``;
- clients that half-close their stream and die, and clients SIGKILLed in bulk
  (processes of :mod:`session_clients`), leave no session in the registry: every
  entry is gone within 5 s, though the registry's TTL is 30 s here;
- a client that leaves while its Hello's claim is in flight (Redis has written
  the entry, its answer is still on the way: a relay in front of Redis holds it
  back) leaves no session either;
- 13,000 streams that never say Hello come and go (from several processes) while
  the engine's resident memory stays within 64 MB of its start: a stream is
  refused at once past ``TABLANETTE_MAX_PREHELLO_PER_ADDRESS`` and ended after
  ``TABLANETTE_HELLO_TIMEOUT_MS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import grpc
import pytest
from arena_harness import Arena, new_arena
from redis_stall import StallingRelay
from service_kit import wait_until

from cli.local import Child
from store.audit import AuditLog
from store.keys import Keys
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc

HERE = Path(__file__).resolve().parent
CLIENTS = HERE / "session_clients.py"
TTL_MS = 30_000
"""The registry's TTL in these tests: far longer than the 5 s a dead client's entry may outlive it."""
GONE_WITHIN_S = 5.0
ENGINE_ENV = {
    "TABLANETTE_SESSION_TTL_MS": str(TTL_MS),
    # every client here comes from 127.0.0.1: the per-address Hello budget is not what is tested
    "TABLANETTE_HELLO_RATE": "100000",
    "TABLANETTE_HELLO_BURST": "100000",
    "TABLANETTE_TOKEN_HELLO_BURST": "40",
    "TABLANETTE_MAX_PREHELLO_PER_ADDRESS": "1000",
}


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    arena = new_arena("sessions", tmp_path_factory.mktemp("sessions"))
    try:
        yield arena
    finally:
        arena.close()


@pytest.fixture(scope="module")
def engines(arena: Arena) -> list[tuple[Child, int]]:
    """Two replicas of the engine service on one Redis prefix."""
    return [arena.start_engine(name, **ENGINE_ENV) for name in ("engine-a", "engine-b")]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


# ------------------------------------------------------------------ concurrent Hellos


async def hello_burst(ports: list[int], token: str, name: str) -> list[tuple[str, str]]:
    """N streams (one connection each), all open before any says Hello; then N Hellos at once.

    Each stream's outcome: ``("welcome", session id)`` or ``(status name, details)``. The
    streams that got a Welcome are held open half a second more, to show nothing closes them.
    """
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for port in ports]
    try:
        await asyncio.gather(*(asyncio.wait_for(c.channel_ready(), 10) for c in channels))
        calls = [arena_pb2_grpc.BotGatewayStub(c).Connect() for c in channels]
        hello = apb.BotMessage(hello=apb.Hello(token=token, bot_name=name, version="burst", max_games=1))
        await asyncio.gather(*(call.write(hello) for call in calls))

        async def outcome(call: grpc.aio.StreamStreamCall[apb.BotMessage, apb.ServerMessage]) -> tuple[str, str]:
            try:
                while True:
                    msg = await asyncio.wait_for(call.read(), 10)
                    if msg is grpc.aio.EOF:
                        return "EOF", ""
                    if msg.WhichOneof("kind") == "welcome":
                        return "welcome", msg.welcome.session_id
            except grpc.aio.AioRpcError as exc:
                return exc.code().name, exc.details() or ""

        outcomes = await asyncio.gather(*(outcome(call) for call in calls))
        winners = [call for call, (kind, _) in zip(calls, outcomes, strict=True) if kind == "welcome"]
        await asyncio.sleep(0.5)
        for call in winners:
            assert not call.done(), f"the admitted session was ended: {call.code()} {await call.details()}"
            call.cancel()
        return outcomes
    finally:
        await asyncio.gather(*(c.close() for c in channels))


def check_one_session(arena: Arena, name: str, outcomes: list[tuple[str, str]]) -> None:
    welcomes = [detail for kind, detail in outcomes if kind == "welcome"]
    refused = [(kind, detail) for kind, detail in outcomes if kind != "welcome"]
    assert len(welcomes) == 1, f"{name}: {outcomes}"
    assert all(kind == "ALREADY_EXISTS" and "connected already" in d for kind, d in refused), refused
    sessions = ("login", "login_refused", "takeover")
    events = [e for e in AuditLog(arena.redis, arena.prefix).recent(1000, bot=name) if e["event"] in sessions]
    kinds = sorted(e["event"] for e in events)
    assert kinds == ["login"] + ["login_refused"] * len(refused), kinds
    login = next(e for e in events if e["event"] == "login")
    assert (login["session"], login["replaces"]) == (welcomes[0], None)
    assert all(e["code"] == "ALREADY_EXISTS" for e in events if e["event"] == "login_refused")


def test_concurrent_hellos_with_one_token_open_exactly_one_session(
    arena: Arena, engines: list[tuple[Child, int]]
) -> None:
    port = engines[0][1]
    for round_ in range(20):
        name = f"burst-{round_}"
        outcomes = asyncio.run(hello_burst([port] * 10, arena.add_bot(name), name))
        check_one_session(arena, name, outcomes)


def test_concurrent_hellos_split_over_two_replicas_open_exactly_one_session(
    arena: Arena, engines: list[tuple[Child, int]]
) -> None:
    """Each replica sees no session of the bot when it looks: only the registry's compare-and-set decides."""
    ports = [engines[0][1], engines[1][1]] * 5
    for round_ in range(10):
        name = f"split-{round_}"
        outcomes = asyncio.run(hello_burst(ports, arena.add_bot(name), name))
        check_one_session(arena, name, outcomes)


# ------------------------------------------------------------------ clients that die


class Clients:
    """A :mod:`session_clients` process and the bot clients it forked, each connected with a session."""

    def __init__(self, port: int, mode: str, bots: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CLIENTS), str(port), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("".join(f"{name} {token}\n" for name, token in bots.items()))
        self.proc.stdin.close()
        self.sessions: dict[str, tuple[int, str]] = {}  # bot -> (client pid, session id)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(self.proc.stdout or []), daemon=True)
        reader.start()

        def all_reported() -> bool:
            return sum(line.startswith(("ready", "refused")) for line in list(lines)) >= len(bots)

        wait_until(all_reported, 60, f"{len(bots)} clients to connect")
        refused = [line for line in lines if line.startswith("refused")]
        assert not refused, refused[:5]
        for line in lines:
            if line.startswith("ready"):
                _, pid, name, session = line.split()
                self.sessions[name] = (int(pid), session)

    def pids(self) -> list[int]:
        return [pid for pid, _ in self.sessions.values()]

    def signal_all(self, sig: int) -> None:
        for pid in self.pids():
            os.kill(pid, sig)

    def close(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(30)


def registered(arena: Arena, sessions: dict[str, tuple[int, str]]) -> list[str]:
    """The bots whose registry entry is still the given session."""
    pipe = arena.redis.pipeline(transaction=False)
    keys = Keys(arena.prefix)
    for bot in sessions:
        pipe.get(keys.session(bot))
    out = []
    for (bot, (_, session)), raw in zip(sessions.items(), pipe.execute(), strict=True):
        if raw is not None and session.encode() in raw:
            out.append(bot)
    return out


def wait_all_gone(arena: Arena, clients: Clients, what: str) -> float:
    """Seconds until no session of ``clients`` is left in the registry (at most :data:`GONE_WITHIN_S`)."""
    started = time.monotonic()
    left: list[str] = []
    while time.monotonic() - started < GONE_WITHIN_S:
        left = registered(arena, clients.sessions)
        if not left:
            return time.monotonic() - started
        time.sleep(0.05)
    ttl = arena.redis.pttl(Keys(arena.prefix).session(left[0]))
    why = f"{len(left)} sessions still registered after {GONE_WITHIN_S} s, e.g. {left[:5]} ({ttl} ms to live)"
    raise AssertionError(f"{what}: {why}")


@pytest.fixture(scope="module")
def bots(arena: Arena) -> dict[str, str]:
    """200 bots and their tokens."""
    return {f"dier-{i}": arena.add_bot(f"dier-{i}") for i in range(200)}


def test_clients_that_half_close_and_die_leave_no_session(
    arena: Arena, engines: list[tuple[Child, int]], bots: dict[str, str]
) -> None:
    port = engines[0][1]
    hundred = dict(list(bots.items())[:100])
    slowest = 0.0
    for round_ in range(20):
        clients = Clients(port, "halfclose", hundred)
        try:
            assert sorted(registered(arena, clients.sessions)) == sorted(hundred), "every client is registered"
            clients.signal_all(signal.SIGUSR1)
            slowest = max(slowest, wait_all_gone(arena, clients, f"round {round_}"))
        finally:
            clients.close()
    print(f"100 clients half-closed and died, 20 rounds: every session gone within {slowest:.2f} s")


def test_clients_killed_in_bulk_leave_no_session(
    arena: Arena, engines: list[tuple[Child, int]], bots: dict[str, str]
) -> None:
    port = engines[0][1]
    clients = Clients(port, "hold", bots)
    try:
        assert sorted(registered(arena, clients.sessions)) == sorted(bots), "every client is registered"
        clients.signal_all(signal.SIGKILL)
        gone = wait_all_gone(arena, clients, "200 clients SIGKILLed")
    finally:
        clients.close()
    print(f"200 clients SIGKILLed at once: every session gone within {gone:.2f} s")
    name = next(iter(bots))  # and the engine agrees they are gone: a client may log in again at once
    session = asyncio.run(hello_burst([port], bots[name], name))
    assert session[0][0] == "welcome", session


async def until(ok: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        assert time.monotonic() < deadline, f"waited {timeout:g} s for {what}"
        await asyncio.sleep(0.02)


def test_a_client_gone_while_its_claim_is_in_flight_leaves_no_session(arena: Arena) -> None:
    """The engine reaches Redis through a relay that holds back the answer to the bot's registry claim: the
    claim has written the entry, the client cancels its stream, and only then does the answer arrive. The
    entry must be gone within 5 s, though its TTL is a minute."""
    url = urlsplit(arena.redis_url)
    relay = StallingRelay((url.hostname or "127.0.0.1", url.port or 6379))
    userinfo, at, _ = url.netloc.rpartition("@")
    via_relay = urlunsplit(url._replace(netloc=f"{userinfo}{at}127.0.0.1:{relay.port}"))
    engine, port = arena.start_engine("engine-stall", TABLANETTE_REDIS_URL=via_relay, TABLANETTE_SESSION_TTL_MS="60000")
    name = "stall-victim"
    key = Keys(arena.prefix).session(name)
    try:
        warm = asyncio.run(hello_burst([port], arena.add_bot("stall-warm"), "stall-warm"))  # Redis knows the script
        assert warm[0][0] == "welcome", warm
        token = arena.add_bot(name)
        relay.arm(b"EVALSHA", key.encode())

        async def hello_then_leave() -> None:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = arena_pb2_grpc.BotGatewayStub(channel).Connect()
                await call.write(apb.BotMessage(hello=apb.Hello(token=token, bot_name=name, version="stall")))
                await until(lambda: relay.held.is_set() and arena.redis.exists(key) == 1, 10, "the claim to run")
                call.cancel()
                left = "its client left while it was being claimed"
                await until(lambda: relay.dropped.is_set() or left in engine.text(), 10, "the engine to see it")

        asyncio.run(hello_then_leave())
        relay.unstall()  # the claim's answer (the entry was written) reaches the engine now
        started = time.monotonic()
        while arena.redis.exists(key) and time.monotonic() - started < GONE_WITHIN_S:
            time.sleep(0.05)
        gone = time.monotonic() - started
        assert not arena.redis.exists(key), (
            f"the entry outlived its client by {gone:.1f} s ({arena.redis.pttl(key)} ms to live)"
        )
        assert f"bot {name} connected" not in engine.text(), "the client left only after it was seated"
        print(f"a client gone during its claim: its entry deleted {gone * 1000:.0f} ms after the claim's answer came")
    finally:
        engine.stop()
        relay.close()


# ------------------------------------------------------------------ streams that never say Hello

SILENT = 13_000
SILENT_PROCESSES = 4
RSS_BOUND_MB = 64.0


def test_streams_that_never_say_hello_are_bounded_and_memory_stays_flat(arena: Arena) -> None:
    """13,000 streams that never say Hello, opened at once by 4 processes from one address: at most
    ``TABLANETTE_MAX_PREHELLO_PER_ADDRESS`` (the default) wait for the Hello timeout, the rest are refused at
    once, and the engine's resident memory stays within 64 MB of its start."""
    engine, port = arena.start_engine("engine-silent", TABLANETTE_HELLO_TIMEOUT_MS="3000")
    pid = engine.popen.pid
    start = rss_mb(pid)
    peak = [start]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    argv = [sys.executable, str(CLIENTS), str(port), "silent", str(SILENT // SILENT_PROCESSES)]
    flooded = time.monotonic()
    floods = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=HERE) for _ in range(SILENT_PROCESSES)]
    try:
        reports = [json.loads(flood.communicate(timeout=90)[0]) for flood in floods]
        flood_s = time.monotonic() - flooded
    finally:
        done.set()
        watcher.join()
        for flood in floods:
            flood.kill()
    after = rss_mb(pid)
    ended: dict[str, int] = {}
    for report in reports:
        for code, (count, _) in report.items():
            ended[code] = ended.get(code, 0) + count
    details = {code: detail for report in reports for code, (_, detail) in report.items()}
    print(f"engine RSS: {start:.1f} MB at start, {peak[0]:.1f} MB at most, {after:.1f} MB after; ended: {ended}")
    print(details)
    assert sum(ended.values()) == SILENT, ended
    # past the bound, refused by the gateway; past HTTP/2's streams per connection, by gRPC itself (REFUSED_STREAM)
    assert set(ended) <= {"RESOURCE_EXHAUSTED", "INVALID_ARGUMENT", "CANCELLED", "UNAVAILABLE"}, details
    engine_alive = engine.alive()
    assert engine_alive, engine.tail(3000)
    # Waited for the Hello timeout: at most the bound at once, so at most the bound per 3 s the flood lasted.
    waited_at_most = 128 * (1 + int(flood_s / 3.0))
    assert 0 < ended.get("INVALID_ARGUMENT", 0) <= waited_at_most, (ended, flood_s)
    assert "send a Hello within 3 seconds" in details["INVALID_ARGUMENT"]
    assert "have not said Hello yet" in details["RESOURCE_EXHAUSTED"]
    assert peak[0] - start <= RSS_BOUND_MB, f"the engine grew from {start:.1f} to {peak[0]:.1f} MB"
    outcome = asyncio.run(hello_burst([port], arena.add_bot("after-silence"), "after-silence"))
    assert outcome[0][0] == "welcome", outcome  # every stream counted as waiting for its Hello was let go of
