"""Play one league match from its id: claim, play, commit. No Celery in here.

1. Claim the match with its lease (:mod:`store.leases`), renewed while it runs.
   A match already done is left alone; one leased elsewhere is retried later
   (its worker may have died: the lease then expires and the retry plays it).
2. Take a game slot for each bot (no bot plays more matches at once than the
   ``max_games`` of its Hello); when one is full, retry shortly, uncounted.
3. Count the attempt; past ``max_deliveries`` the match is marked failed.
4. Play it through the engine service with :class:`~worker.match_runner.MatchRunner`.
5. Commit record, result and Elo in one idempotent step fenced by the lease
   (:mod:`store.ledger`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import asdict
from pathlib import Path

import grpc
import redis
from redis.asyncio import Redis as AsyncRedis

from config import ArenaSettings
from engine_service.rules import Rules
from store.codec import text
from store.keys import LeagueKeys
from store.leagues import LeagueStore
from store.leases import MatchLease
from store.ledger import NotLeaseHolder
from store.slots import GameSlots
from worker.match_runner import BotUnavailable, MatchOutcome, MatchRunner, ReplicaUnreachable

log = logging.getLogger("tablanette.worker")


class Transient(RuntimeError):
    """Worth another try later (a bot not connected yet, an engine replica restarting).

    ``backoff``: whether retries should wait longer and longer (not for a short,
    expected wait such as a bot's game slots being full).
    """

    def __init__(self, message: str, retry_after: float = 5.0, backoff: bool = True) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.backoff = backoff


def play_league_match(settings: ArenaSettings, league_id: str, match_id: str, worker_id: str) -> str:
    """Returns what happened: done, already-done, cancelled, failed (raises :class:`Transient`)."""
    client = redis.Redis.from_url(settings.redis_url)
    try:
        return _play(LeagueStore(client, settings.prefix), settings, league_id, match_id, worker_id)
    finally:
        client.close()


def _play(store: LeagueStore, settings: ArenaSettings, league_id: str, match_id: str, worker_id: str) -> str:
    keys = store.keys(league_id)
    spec = store.match(league_id, match_id)
    if not spec:
        log.warning("match %s of league %s does not exist", match_id, league_id)
        return "unknown"
    if spec.get("status") == "done":
        return "already-done"
    if store.is_cancelled(league_id):
        return "cancelled"
    lease = MatchLease(store.r, keys, match_id, settings.lease_ms, worker_id)
    if not lease.acquire():
        # Playing elsewhere, or its worker died and the lease has not expired yet:
        # come back later rather than drop the match.
        raise Transient(f"match {match_id} is leased by another worker", retry_after=settings.lease_ms / 1000)
    slots = GameSlots(store.r, settings.prefix)
    try:
        seats: list[str] = json.loads(spec["seats"])
        if not slots.acquire(seats, match_id, settings.lease_ms):
            raise Transient(f"a bot of match {match_id} is playing all the games it allows", 1.0, backoff=False)
        try:
            with lease.kept(also=lambda: slots.renew(seats, match_id, settings.lease_ms)):
                return _attempt(store, keys, settings, match_id, lease, spec["seed"], seats, worker_id)
        finally:
            slots.release(seats, match_id)
    except Transient:
        store.ledger.set_state(keys, match_id, "queued")
        raise
    except Exception as exc:  # a bug or bad data: retried as a counted attempt, then shown as failed
        log.exception("match %s of league %s: unexpected error", match_id, league_id)
        store.ledger.set_state(keys, match_id, "queued", error=f"{type(exc).__name__}: {exc}")
        raise Transient(f"unexpected error: {type(exc).__name__}: {exc}", retry_after=1.0) from exc
    finally:
        lease.release()


def _attempt(
    store: LeagueStore,
    keys: LeagueKeys,
    settings: ArenaSettings,
    match_id: str,
    lease: MatchLease,
    seed: str,
    seats: list[str],
    worker_id: str,
) -> str:
    """One counted attempt at a claimed match: play it and commit it."""
    deliveries = store.r.hincrby(keys.match(match_id), "deliveries", 1)
    if deliveries > settings.max_deliveries:
        last = store.r.hget(keys.match(match_id), "error")
        _fail(
            store,
            keys,
            match_id,
            f"gave up after {deliveries - 1} attempts" + (f"; last: {text(last)}" if last else ""),
        )
        return "failed"
    store.ledger.set_state(keys, match_id, "running", worker=worker_id, started_at=f"{time.time():.3f}")
    league = store.load(keys.league)  # the one reader of a league's settings
    try:
        outcome = asyncio.run(
            asyncio.wait_for(_run(settings, keys, match_id, league.rules, seed, seats), settings.task_time_limit)
        )
    except TimeoutError:
        _fail(store, keys, match_id, f"exceeded the time limit of {settings.task_time_limit} s")
        return "failed"
    conduct = [asdict(c) for c in outcome.conduct]
    try:
        stored = store.ledger.commit(
            keys, match_id, outcome.record, seats, conduct, league.k, league.initial, lease_token=lease.token
        )
    except NotLeaseHolder as exc:
        raise Transient(str(exc), retry_after=settings.lease_ms / 1000) from None
    return "done" if stored else "already-done"


async def _run(
    settings: ArenaSettings, keys: LeagueKeys, match_id: str, rules: Rules, seed: str, seats: list[str]
) -> MatchOutcome:
    aredis = AsyncRedis.from_url(settings.redis_url)
    tls_ca = Path(settings.tls_ca).read_bytes() if settings.tls_ca else None
    runner = MatchRunner(aredis, settings.prefix, grace_ms=settings.grace_ms, tls_ca=tls_ca)
    try:
        return await runner.play(rules, seed, seats, f"{keys.league}/{match_id}")
    except (BotUnavailable, ReplicaUnreachable) as exc:
        raise Transient(str(exc)) from None
    except grpc.aio.AioRpcError as exc:
        if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise Transient(f"engine service: {exc.code().name}: {exc.details()}") from None
        raise
    finally:
        await runner.close()
        await aredis.aclose()


def _fail(store: LeagueStore, keys: LeagueKeys, match_id: str, reason: str) -> None:
    store.ledger.set_state(keys, match_id, "failed", error=reason)
    log.error("match %s of league %s failed: %s", match_id, keys.league, reason)
