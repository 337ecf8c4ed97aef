"""Play one league match from its id: claim, play, commit. No Celery in here.

1. Claim the match with a lease (``SET NX PX``) renewed while it runs. A match
   already done is left alone; one leased elsewhere is retried later (its
   worker may have died: the lease then expires and the retry plays it).
2. Take a game slot for each bot (no bot plays more matches at once than the
   ``max_games`` of its Hello); when one is full, retry shortly, uncounted.
3. Count the attempt; past ``max_deliveries`` the match is marked failed.
4. Play it through the engine service with :class:`~worker.match_runner.MatchRunner`.
5. Commit record, result and Elo in one idempotent step (:mod:`worker.ledger`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from dataclasses import asdict
from pathlib import Path

import grpc
import redis
from redis.asyncio import Redis as AsyncRedis

from engine_service.rules import Rules
from scheduler.league import LeagueStore
from worker import slots
from worker.ledger import LeagueKeys, commit_result, set_state, text
from worker.match_runner import BotUnavailable, MatchOutcome, MatchRunner, ReplicaUnreachable
from worker.settings import WorkerSettings

log = logging.getLogger("tablanette.worker")

# Release the lease only if we still hold it.
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
_RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"


class Transient(RuntimeError):
    """Worth another try later (a bot not connected yet, an engine replica restarting).

    ``backoff``: whether retries should wait longer and longer (not for a short,
    expected wait such as a bot's game slots being full).
    """

    def __init__(self, message: str, retry_after: float = 5.0, backoff: bool = True) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.backoff = backoff


def play_league_match(settings: WorkerSettings, league_id: str, match_id: str, worker_id: str) -> str:
    """Returns what happened: done, already-done, cancelled, failed (raises :class:`Transient`)."""
    client = redis.Redis.from_url(settings.redis_url)
    keys = LeagueKeys(settings.prefix, league_id)
    try:
        return _play(client, keys, settings, match_id, worker_id)
    finally:
        client.close()


def _play(client: redis.Redis, keys: LeagueKeys, settings: WorkerSettings, match_id: str, worker_id: str) -> str:
    mkey = keys.match(match_id)
    spec = client.hgetall(mkey)
    if not spec:
        log.warning("match %s of league %s does not exist", match_id, keys.league)
        return "unknown"
    if spec.get(b"status") == b"done":
        return "already-done"
    if client.hget(keys.meta, "status") == b"cancelled":
        return "cancelled"
    token = f"{worker_id}/{secrets.token_hex(4)}"
    if not client.set(keys.lease(match_id), token, nx=True, px=settings.lease_ms):
        # Playing elsewhere, or its worker died and the lease has not expired yet:
        # come back later rather than drop the match.
        raise Transient(f"match {match_id} is leased by another worker", retry_after=settings.lease_ms / 1000)
    try:
        seats = json.loads(spec[b"seats"])
        if not slots.acquire(client, settings.prefix, seats, match_id, settings.lease_ms):
            raise Transient(f"a bot of match {match_id} is playing all the games it allows", 1.0, backoff=False)
        try:
            return _attempt(client, keys, settings, match_id, token, text(spec[b"seed"]), seats, worker_id)
        finally:
            slots.release(client, settings.prefix, seats, match_id)
    except Transient:
        set_state(client, keys, match_id, "queued")
        raise
    except Exception as exc:  # a bug or bad data: retried as a counted attempt, then shown as failed
        log.exception("match %s of league %s: unexpected error", match_id, keys.league)
        set_state(client, keys, match_id, "queued", error=f"{type(exc).__name__}: {exc}")
        raise Transient(f"unexpected error: {type(exc).__name__}: {exc}", retry_after=1.0) from exc
    finally:
        client.eval(_RELEASE, 1, keys.lease(match_id), token)


def _attempt(
    client: redis.Redis,
    keys: LeagueKeys,
    settings: WorkerSettings,
    match_id: str,
    token: str,
    seed: str,
    seats: list[str],
    worker_id: str,
) -> str:
    """One counted attempt at a claimed match: play it and commit it."""
    deliveries = client.hincrby(keys.match(match_id), "deliveries", 1)
    if deliveries > settings.max_deliveries:
        last = client.hget(keys.match(match_id), "error")
        _fail(
            client,
            keys,
            match_id,
            f"gave up after {deliveries - 1} attempts" + (f"; last: {text(last)}" if last else ""),
        )
        return "failed"
    set_state(client, keys, match_id, "running", worker=worker_id, started_at=f"{time.time():.3f}")
    league = LeagueStore(client, settings.prefix).load(keys.league)  # the one reader of a league's settings
    try:
        outcome = asyncio.run(
            asyncio.wait_for(_run(settings, keys, match_id, token, league.rules, seed, seats), settings.task_time_limit)
        )
    except TimeoutError:
        _fail(client, keys, match_id, f"exceeded the time limit of {settings.task_time_limit} s")
        return "failed"
    stored = commit_result(
        client,
        keys,
        match_id,
        outcome.record,
        seats,
        [asdict(c) for c in outcome.conduct],
        league.k,
        league.initial,
    )
    return "done" if stored else "already-done"


async def _run(
    settings: WorkerSettings, keys: LeagueKeys, match_id: str, token: str, rules: Rules, seed: str, seats: list[str]
) -> MatchOutcome:
    aredis = AsyncRedis.from_url(settings.redis_url)
    tls_ca = Path(settings.tls_ca).read_bytes() if settings.tls_ca else None
    runner = MatchRunner(aredis, settings.prefix, grace_ms=settings.grace_ms, tls_ca=tls_ca)
    renew = asyncio.create_task(_renew(aredis, settings, keys.lease(match_id), token, seats, match_id))
    try:
        return await runner.play(rules, seed, seats, f"{keys.league}/{match_id}")
    except (BotUnavailable, ReplicaUnreachable) as exc:
        raise Transient(str(exc)) from None
    except grpc.aio.AioRpcError as exc:
        if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise Transient(f"engine service: {exc.code().name}: {exc.details()}") from None
        raise
    finally:
        renew.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renew
        await runner.close()
        await aredis.aclose()


async def _renew(
    client: AsyncRedis, settings: WorkerSettings, key: str, token: str, seats: list[str], match_id: str
) -> None:
    """Keep the lease (and the bots' game slots) while the match runs."""
    while True:
        await asyncio.sleep(settings.lease_ms / 3000)
        if not await client.eval(_RENEW, 1, key, token, settings.lease_ms):
            log.error("lost the lease %s", key)
            return
        await slots.renew(client, settings.prefix, seats, match_id, settings.lease_ms)


def _fail(client: redis.Redis, keys: LeagueKeys, match_id: str, reason: str) -> None:
    set_state(client, keys, match_id, "failed", error=reason)
    log.error("match %s of league %s failed: %s", match_id, keys.league, reason)
