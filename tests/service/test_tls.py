"""TLS: an engine serving a certificate; SDK bots and the match runner trust it through a CA file."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from arena_harness import REDIS_URL, Arena
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis.asyncio import Redis
from service_kit import League, RawBot, check_clean, self_signed, wait_until

from cli.local import CLI
from engine_service.rules import Rules
from store.keys import Keys
from store.leagues import LeagueStore
from store.results import LeagueResults
from worker.match_runner import MatchOutcome, MatchRunner


@dataclass
class TlsArena:
    arena: Arena
    port: int
    cert: Path
    ca: bytes
    bots: list[str]


@pytest.fixture(scope="module")
def tls(module_arena: Arena) -> TlsArena:
    """An engine serving TLS with a fresh self-signed certificate, and two SDK bots that trust it."""
    cert, key = self_signed(module_arena.workdir)
    _, port = module_arena.start_engine(TABLANETTE_TLS_CERT=str(cert), TABLANETTE_TLS_KEY=str(key))
    bots = ["tls-greedy", "tls-random"]
    for name, kind in zip(bots, ("greedy", "random"), strict=True):
        module_arena.start_python_bot(kind, name, module_arena.add_bot(name), port, "--ca", str(cert))
    module_arena.wait_connected(*bots)
    return TlsArena(module_arena, port, cert, cert.read_bytes(), bots)


async def play_over_tls(prefix: str, ca: bytes, bots: list[str]) -> MatchOutcome:
    redis = Redis.from_url(REDIS_URL)
    runner = MatchRunner(redis, prefix, tls_ca=ca)
    try:
        return await runner.play(Rules.preset("tablic", target=31), "tls", bots, "tls/1")
    finally:
        await runner.close()
        await redis.aclose()


def test_sdk_bots_and_the_runner_play_over_tls(tls: TlsArena) -> None:
    with grpc.secure_channel(f"127.0.0.1:{tls.port}", grpc.ssl_channel_credentials(tls.ca)) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.SERVING

    outcome = asyncio.run(play_over_tls(tls.arena.prefix, tls.ca, tls.bots))
    check_clean(outcome, reasons=("target",))
    assert outcome.record["players"] == ["tls-greedy@1", "tls-random@1"]


def test_tls_engine_refuses_plaintext_and_untrusted_clients(tls: TlsArena) -> None:
    arena = tls.arena
    other_ca, _ = self_signed(arena.workdir, "someone-else")
    token = arena.add_bot("tls-bot")
    league = League(arena.prefix, tls.bots, "tls-refusals", tls_ca=tls.ca)

    plain = RawBot(tls.port)
    plain.hello(token, "tls-bot")
    assert plain.status(timeout=10)[0] == grpc.StatusCode.UNAVAILABLE
    untrusted = RawBot(tls.port, tls_ca=other_ca.read_bytes())
    untrusted.hello(token, "tls-bot")
    assert untrusted.status(timeout=10)[0] == grpc.StatusCode.UNAVAILABLE
    # an SDK bot with the wrong CA never gets in, and keeps retrying
    sdk = arena.start_python_bot("greedy", "tls-bot", token, tls.port, "--ca", str(other_ca))
    wait_until(lambda: "ended (UNAVAILABLE" in sdk.text(), what="the SDK bot's failed attempt")
    assert arena.redis.get(Keys(arena.prefix).session("tls-bot")) is None and sdk.alive()
    sdk.stop()

    trusted = RawBot(tls.port, tls_ca=tls.ca)
    assert trusted.welcome(token, "tls-bot").bot_name == "tls-bot"
    trusted.close()
    league.finish()


def _league(arena: Arena, name: str, bots: list[str]) -> subprocess.CompletedProcess[str]:
    for cmd in (["league", "create", name, "--games", "1", "--rule", "deals=1"], ["league", "add-bot", name, *bots]):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stderr + done.stdout
    return arena.tablanette("league", "start", name, "--window", "0", timeout=120)


def test_a_worker_with_the_ca_plays_a_league_over_tls(tls: TlsArena) -> None:
    worker = tls.arena.start_worker("tls-worker", TABLANETTE_TLS_CA=str(tls.cert))
    try:
        run = _league(tls.arena, "tls-league", tls.bots)
        assert run.returncode == 0, run.stderr + run.stdout
        rows = LeagueResults(tls.arena.redis, tls.arena.prefix).standings("tls-league")
        assert [r.games for r in rows] == [1, 1] and all(r.forfeits == 0 for r in rows)
    finally:
        worker.stop()


def test_a_worker_that_cannot_reach_a_tls_replica_never_forfeits_bots_and_says_why(tls: TlsArena) -> None:
    """An arena misconfigured (a worker without the CA) is the arena's fault: the match waits, uncounted."""
    worker = tls.arena.start_worker("plain-worker", TABLANETTE_GRACE_MS="1000", TABLANETTE_MAX_ATTEMPTS="1")
    for cmd in (
        ["league", "create", "no-ca", "--games", "1", "--rule", "deals=1"],
        ["league", "add-bot", "no-ca", *tls.bots],
    ):
        done = tls.arena.tablanette(*cmd)
        assert done.returncode == 0, done.stderr + done.stdout
    feeder = tls.arena.spawn("feeder-no-ca", [*CLI, "league", "start", "no-ca", "--window", "0"])
    keys = Keys(tls.arena.prefix).league("no-ca")
    try:
        wait_until(lambda: int(tls.arena.redis.hget(keys.match("r1/p1/g1"), "interruptions") or 0) >= 2, 60, "retries")
        match = LeagueStore(tls.arena.redis, tls.arena.prefix).match("no-ca", "r1/p1/g1")
        assert match["status"] in ("queued", "running") and "attempts" not in match  # never counted against it
        assert "UNAVAILABLE" in match["interrupted"] or "unreachable" in match["interrupted"], match
        rows = LeagueResults(tls.arena.redis, tls.arena.prefix).standings("no-ca")
        assert all(r.games == 0 and r.forfeits == 0 and r.rating == 1500 for r in rows)  # nobody was scored
        status = tls.arena.tablanette("league", "status", "no-ca")
        assert "interrupted" in status.stdout and "r1/p1/g1" in status.stdout, status.stdout
    finally:
        assert tls.arena.tablanette("league", "cancel", "no-ca").returncode == 0
        feeder.stop()
        worker.stop()
