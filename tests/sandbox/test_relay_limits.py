"""Limits per bot, not per address: a hosted bot's Hello flood through its relay delays no other bot's login.

Each hosted bot here runs as a host runs a gRPC version (:class:`hosting.runners.ServiceRunner`:
its program in a real sandbox, reaching a real engine service only through its own
relay), with the arena's internal secret, so each relay announces its connections
(``Dispatch.Relayed``). The attacker is a program written from the ``.proto``
(``FLOOD``): 64 streams at once, each saying Hello and hanging up as soon as it is
answered, as fast as its sandbox lets it; first it tries to announce itself as
another bot with secrets it guesses. The probe (``PROBE``) logs in again and again
on a fresh connection each time, retrying on RESOURCE_EXHAUSTED as the SDKs do, and
prints how long each login took. Without the announcement (a relay given no secret:
the state before), both bots count under the host's one address again.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from arena_harness import Arena, arena_fixture, readable_folder
from service_kit import RawBot, wait_until

from config.internal_calls import INTERNAL_METADATA
from hosting import sdk
from hosting.relay import MAX_CONNECTIONS, Relay
from hosting.runners import ServiceRunner
from programs.sandbox import Limits, unavailable
from store.audit import AuditLog
from store.sessions import internal_secret_sync
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc, dispatch_pb2_grpc
from tablanette.v1 import dispatch_pb2 as dpb

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")
LOGINS = 6
LOGIN_S = 1.0
"""The issue's bound: during the flood, another hosted bot logs in within this."""

FLOOD = """\
import asyncio, collections, json, os, time
import grpc
from tablanette.v1 import arena_pb2 as apb, arena_pb2_grpc, dispatch_pb2 as dpb, dispatch_pb2_grpc

ENV = os.environ
ADDRESS, TOKEN, NAME = ENV["TABLANETTE_ADDRESS"], ENV["TABLANETTE_TOKEN"], ENV["TABLANETTE_BOT_NAME"]
counts = collections.Counter()


async def forge(channel):
    # claim this very relay's connections for another bot, with every secret a bot could guess
    stub = dispatch_pb2_grpc.DispatchStub(channel)
    for secret in (None, "", "guess", "0" * 48):
        claim = dpb.RelayedRequest(bot_name="probe", host="127.0.0.1", port=1, connection="x")
        metadata = None if secret is None else (("x-tablanette-internal", secret),)
        try:
            await stub.Relayed(claim, metadata=metadata, timeout=10)
            print("forge accepted", flush=True)
        except grpc.aio.AioRpcError as exc:
            print("forge", exc.code().name, flush=True)


async def hello(stub):
    call = stub.Connect()
    try:
        await call.write(apb.BotMessage(hello=apb.Hello(token=TOKEN, bot_name=NAME, max_games=1)))
        msg = await call.read()
        code = "OK" if msg is not grpc.aio.EOF else (await call.code()).name
    except grpc.aio.AioRpcError as exc:
        code = exc.code().name
    call.cancel()
    counts[code] += 1


async def worker(stub):
    while True:
        await hello(stub)


async def report():
    while True:
        await asyncio.sleep(0.5)
        print("flood", json.dumps(dict(counts)), flush=True)


async def main():
    async with grpc.aio.insecure_channel(ADDRESS) as channel:
        await forge(channel)
        stub = arena_pb2_grpc.BotGatewayStub(channel)
        await asyncio.gather(report(), *(worker(stub) for _ in range(64)))


asyncio.run(main())
"""

PROBE = """\
import asyncio, os, time
import grpc
from tablanette.v1 import arena_pb2 as apb, arena_pb2_grpc

ENV = os.environ
ADDRESS, TOKEN, NAME = ENV["TABLANETTE_ADDRESS"], ENV["TABLANETTE_TOKEN"], ENV["TABLANETTE_BOT_NAME"]


async def attempt():
    # one Hello on a fresh connection: ("OK", 0) once welcomed and the session ended again, else (status, retry ms)
    async with grpc.aio.insecure_channel(ADDRESS) as channel:
        call = arena_pb2_grpc.BotGatewayStub(channel).Connect()
        try:
            await call.write(apb.BotMessage(hello=apb.Hello(token=TOKEN, bot_name=NAME, max_games=1)))
            if await call.read() is not grpc.aio.EOF:
                took = time.monotonic()
                await call.done_writing()  # half-close: the session ends, so the next login is not ALREADY_EXISTS
                while await call.read() is not grpc.aio.EOF:
                    pass
                return "OK", took
            code, metadata = await call.code(), await call.trailing_metadata()
        except grpc.aio.AioRpcError as exc:
            code, metadata = exc.code(), exc.trailing_metadata()
        return code.name, int(dict(metadata or ()).get("retry-after-ms", 200))


async def login():
    # retried on RESOURCE_EXHAUSTED after its retry-after-ms, as the SDKs do
    start, attempts = time.monotonic(), 0
    while True:
        attempts += 1
        code, more = await attempt()
        if code == "OK":
            return more - start, attempts, code
        if code != "RESOURCE_EXHAUSTED" or time.monotonic() - start > float(ENV["PROBE_GIVE_UP_S"]):
            return time.monotonic() - start, attempts, code
        await asyncio.sleep(min(more, 2000) / 1000)


async def main():
    for _ in range(int(ENV["PROBE_LOGINS"])):
        took, attempts, code = await login()
        print(f"login {took * 1000:.0f} {attempts} {code}", flush=True)
        await asyncio.sleep(0.3)
    print("probe done", flush=True)
    await asyncio.sleep(3600)


asyncio.run(main())
"""


@dataclass
class Hosting:
    """What a host lends its gRPC versions: the staged SDKs, a folder for programs, the engine's address."""

    arena: Arena
    port: int
    sdk: Path
    programs: Path
    runners: list[ServiceRunner] = field(default_factory=list)

    def run(self, name: str, program: str, announce: bool = True, **env: str) -> ServiceRunner:
        """``program`` run as a host runs a gRPC version named ``name`` (its relay announcing or not)."""
        folder = self.programs / name
        folder.mkdir(mode=0o755)
        (folder / "bot.py").write_text(program)
        (folder / "bot.py").chmod(0o644)
        arena = self.arena
        runner = ServiceRunner(
            name,
            folder,
            ["python3", "bot.py"],
            Limits(),
            arena.add_bot(name),
            [f"127.0.0.1:{self.port}"],
            self.sdk,
            {**sdk.ENV, **env},
            lambda why, tail: None,  # what a program does wrong is the runner's business, not these tests'
            secret=(lambda: internal_secret_sync(arena.redis, arena.prefix)) if announce else None,
        )
        self.runners.append(runner)
        return runner


@pytest.fixture(scope="module")
def staged() -> Iterator[tuple[Path, Path]]:
    with readable_folder("relay-limits") as folder:
        yield sdk.stage(folder / "sdk"), folder


@pytest.fixture
def hosting(tmp_path: Path, staged: tuple[Path, Path]) -> Iterator[Hosting]:
    """A fresh engine service (default limits: 20 Hellos/s, a burst of 100, per key) for each test."""
    staged_sdk, folder = staged
    programs = folder / tmp_path.name
    programs.mkdir(mode=0o755)
    for arena in arena_fixture(tmp_path, "relay-limits"):
        _engine, port = arena.start_engine()
        place = Hosting(arena, port, staged_sdk, programs)
        try:
            yield place
        finally:
            for runner in place.runners:
                runner.stop()
            shutil.rmtree(programs, ignore_errors=True)


def flood_counts(runner: ServiceRunner) -> dict[str, int]:
    """What the flooder's Hellos got so far, by status (its latest report)."""
    for line in reversed(runner.output()):
        if line.startswith("flood "):
            return dict(json.loads(line[6:]))
    return {}


def logins(runner: ServiceRunner) -> list[tuple[float, int, str]]:
    """The probe's logins: (seconds, attempts, final status) each."""
    found = [re.fullmatch(r"login (\d+) (\d+) (\w+)", line) for line in runner.output()]
    return [(int(m[1]) / 1000, int(m[2]), m[3]) for m in found if m]


def flooding(runner: ServiceRunner) -> Callable[[], bool]:
    """The flooder has spent its Hello budget and is being refused (so every later Hello is beyond it)."""
    return lambda: flood_counts(runner).get("RESOURCE_EXHAUSTED", 0) > 200


def probe_during_flood(
    hosting: Hosting, announce: bool, logins_wanted: int, give_up_s: float
) -> tuple[list[tuple[float, int, str]], dict[str, int]]:
    """Flood from one hosted bot, probe ``logins_wanted`` logins from another while it floods (each given up after
    ``give_up_s``); the logins and the flood's counts."""
    flood = hosting.run("flood", FLOOD, announce)
    wait_until(flooding(flood), 60, "the flood to run into its Hello budget")
    before = sum(flood_counts(flood).values())
    probe = hosting.run("probe", PROBE, announce, PROBE_LOGINS=str(logins_wanted), PROBE_GIVE_UP_S=str(give_up_s))
    wait_until(lambda: "probe done" in probe.output(), 30 + logins_wanted * give_up_s, "the probe's logins")
    counts = flood_counts(flood)
    assert flood.alive() and sum(counts.values()) > before + 500, ("the flood stopped", before, counts)
    print(f"\nannounce={announce}: logins (s, attempts, status) {logins(probe)}; the flood's Hellos {counts}")
    return logins(probe), counts


def test_a_flood_from_one_hosted_bot_never_delays_another_bots_login(hosting: Hosting) -> None:
    found, counts = probe_during_flood(hosting, announce=True, logins_wanted=LOGINS, give_up_s=20)
    assert len(found) == LOGINS
    assert all(code == "OK" and attempts == 1 for _, attempts, code in found), found
    assert max(took for took, _, _ in found) < LOGIN_S, found
    audit = AuditLog(hosting.arena.redis, hosting.arena.prefix)
    assert {e["peer"] for e in audit.recent(1000, kind="login", bot="probe")} == {"relay:probe"}
    assert {e["peer"] for e in audit.recent(1000, kind="rate_limited")} == {"relay:flood"}
    assert counts["RESOURCE_EXHAUSTED"] > 1000, counts  # refused on its own budget, all along


def test_a_bot_cannot_announce_its_connections_as_another_bots(hosting: Hosting) -> None:
    """Dispatch.Relayed without the arena's secret is refused, from inside a sandbox (through the bot's own
    relay) or from outside; a refused claim changes nothing: the connection stays counted under its address."""
    flood = hosting.run("flood", FLOOD)
    wait_until(lambda: sum(line.startswith("forge ") for line in flood.output()) == 4, 60, "the forgeries")
    assert [line for line in flood.output() if line.startswith("forge ")] == ["forge PERMISSION_DENIED"] * 4
    flood.stop()

    raw = RawBot(hosting.port)
    with grpc.insecure_channel(f"127.0.0.1:{hosting.port}") as channel:
        stub = dispatch_pb2_grpc.DispatchStub(channel)
        # claim every port of this machine's loopback for a bot: one of them is the raw bot's connection
        for secret in ("", "guess", "0" * 48):
            for port in (1, 65535):
                claim = dpb.RelayedRequest(bot_name="victim", host="127.0.0.1", port=port, connection="c")
                with pytest.raises(grpc.RpcError) as refused:
                    stub.Relayed(claim, metadata=((INTERNAL_METADATA, secret),), timeout=10)
                assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
                assert "internal" in (refused.value.details() or "")
        # with the secret, a malformed claim is refused with a reason
        secret = internal_secret_sync(hosting.arena.redis, hosting.arena.prefix)
        with pytest.raises(grpc.RpcError) as malformed:
            stub.Relayed(
                dpb.RelayedRequest(bot_name="x", host="no-address", port=1), metadata=((INTERNAL_METADATA, secret),)
            )
        assert malformed.value.code() == grpc.StatusCode.INVALID_ARGUMENT, malformed.value.details()
    raw.welcome(hosting.arena.add_bot("victim"), "victim")
    audit = AuditLog(hosting.arena.redis, hosting.arena.prefix)
    assert [e["peer"] for e in audit.recent(10, kind="login", bot="victim")] == ["ipv4:127.0.0.1"]
    raw.close()


def test_an_unannounced_connection_is_still_counted_per_address(hosting: Hosting) -> None:
    """Relays with no secret (the state before, or a replica that does not answer the announcement in time):
    the hosted bots share the host's address, and the flood holds up the other bot's login again."""
    found, _counts = probe_during_flood(hosting, announce=False, logins_wanted=2, give_up_s=6)
    assert len(found) == 2
    assert any(attempts > 1 or code != "OK" for _, attempts, code in found), found  # refused per address
    audit = AuditLog(hosting.arena.redis, hosting.arena.prefix)
    assert {e["peer"] for e in audit.recent(1000, kind="rate_limited")} == {"ipv4:127.0.0.1"}
    assert {e["peer"] for e in audit.recent(1000, kind="login", bot="probe")} <= {"ipv4:127.0.0.1"}


def test_a_relay_whose_announcement_is_refused_still_relays(hosting: Hosting) -> None:
    """A relay with a wrong secret: its announcement is refused, its bot logs in all the same, counted per address."""
    arena = hosting.arena
    with readable_folder("relay-socket") as folder:
        relay = Relay(folder / "engine.sock", [f"127.0.0.1:{hosting.port}"], bot="lost", secret=lambda: "wrong")
        try:
            with grpc.insecure_channel(f"unix:{folder / 'engine.sock'}") as channel:
                hello = apb.Hello(token=arena.add_bot("lost"), bot_name="lost", max_games=1)
                started = time.monotonic()
                call = arena_pb2_grpc.BotGatewayStub(channel).Connect(iter([apb.BotMessage(hello=hello)]))
                first = next(call)
                took = time.monotonic() - started
                call.cancel()
        finally:
            relay.close()
    assert first.WhichOneof("kind") == "welcome" and first.welcome.bot_name == "lost"
    assert took < 10, took  # the announcement waits 2 s at most
    audit = AuditLog(arena.redis, arena.prefix)
    assert [e["peer"] for e in audit.recent(10, kind="login", bot="lost")] == ["ipv4:127.0.0.1"]


def test_a_relay_holds_a_bounded_number_of_connections(hosting: Hosting) -> None:
    """A bot that opens connection after connection: past MAX_CONNECTIONS each is closed at once; once it lets
    go of them, it connects again (announced: its login is its own)."""
    arena = hosting.arena
    secret = lambda: internal_secret_sync(arena.redis, arena.prefix)  # noqa: E731
    with readable_folder("relay-socket") as folder:
        path = folder / "engine.sock"
        relay = Relay(path, [f"127.0.0.1:{hosting.port}"], bot="greedy", secret=secret)
        held: list[socket.socket] = []
        try:
            for _ in range(MAX_CONNECTIONS):
                held.append(sock := socket.socket(socket.AF_UNIX))
                sock.connect(str(path))
            wait_until(lambda: len(relay._tasks) == MAX_CONNECTIONS, 10, "the relay to take every connection")
            extra = socket.socket(socket.AF_UNIX)
            extra.connect(str(path))
            extra.settimeout(10)
            assert extra.recv(1) == b"", "the connection past the bound was not closed"
            extra.close()
            held[-1].settimeout(10)
            assert held[-1].recv(1) != b"", "a connection within the bound was closed"  # the replica's HTTP/2 SETTINGS
            for sock in held:
                sock.close()
            wait_until(lambda: not relay._tasks, 10, "the relay to let go of the closed connections")
            with grpc.insecure_channel(f"unix:{path}") as channel:
                hello = apb.Hello(token=arena.add_bot("greedy"), bot_name="greedy", max_games=1)
                call = arena_pb2_grpc.BotGatewayStub(channel).Connect(iter([apb.BotMessage(hello=hello)]))
                assert next(call).WhichOneof("kind") == "welcome"
                call.cancel()
        finally:
            for sock in held:
                sock.close()
            relay.close()
    audit = AuditLog(arena.redis, arena.prefix)
    assert [e["peer"] for e in audit.recent(10, kind="login", bot="greedy")] == ["relay:greedy"]
