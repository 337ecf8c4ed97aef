"""Play one league match from its id: claim, play, commit. No Celery in here.

1. Claim the match with its lease (:mod:`store.leases`), renewed while it runs.
   A match already done is left alone; one leased elsewhere is retried later
   (its worker may have died: the lease then expires and the scheduler
   re-enqueues it within seconds).
2. Take a game slot for each bot (no bot plays more matches at once than the
   ``max_games`` of its Hello); when one is full, retry shortly.
3. Play it through the engine service with :class:`~worker.match_runner.MatchRunner`.
4. Commit record, result and Elo in one idempotent step fenced by the lease
   (:mod:`store.ledger`).

Nothing the arena does wrong is charged to a match or a bot. Every try ends one
of three ways, and the match's hash in Redis says which:

- **waiting** (:class:`Waiting`): a bot is not connected, or plays all the games
  it allows; the match goes back to the queue with ``waiting`` set to why.
- **an arena fault** (:class:`ArenaFault`): a replica unreachable, the lease lost
  (a paused worker), a stall past the time limit; counted in ``interruptions``,
  never in ``attempts``, retried until it plays. A worker killed outright counts
  nothing itself: the scheduler sees its lease gone and re-enqueues the match.
- **a failure of the match itself** (anything else: a bug, bad data): counted in
  ``attempts``; after ``max_attempts`` the match is marked failed, keeping its
  first cause (``first_error``) and its last (``error``).

Redis outages are ridden out by the client itself (:mod:`store.client`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import asdict
from pathlib import Path

import grpc
from redis.asyncio import Redis as AsyncRedis

from config import ArenaSettings
from engine_service.time_control import TimeControl
from store.audit import AuditLog
from store.client import connect, connect_async
from store.codec import text
from store.keys import LeagueKeys
from store.leagues import League, LeagueStore
from store.leases import MatchLease
from store.ledger import NotLeaseHolder
from store.results import LeagueResults
from store.settle import Finished, settle
from store.slots import GameSlots
from worker import metrics
from worker.live import LiveMatch
from worker.match_runner import BotUnavailable, MatchOutcome, MatchRunner, ReplicaUnreachable

log = logging.getLogger("tablanette.worker")


class Transient(RuntimeError):
    """Worth another try later; ``retry_after`` seconds, growing with each try when ``backoff``."""

    def __init__(self, message: str, retry_after: float = 5.0, backoff: bool = True) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.backoff = backoff


class Waiting(Transient):
    """Nothing went wrong: the match waits for its bots (not connected, or all their games taken)."""


class ArenaFault(Transient):
    """The arena failed the match (never a bot): retried, never counted against it."""


class LeaseLost(ArenaFault):
    """Another runner holds the match now: stop, touch nothing of it, let the holder finish it."""


def play_league_match(settings: ArenaSettings, league_id: str, match_id: str, worker_id: str) -> str:
    """Returns what happened: done, already-done, cancelled, failed, unknown (or raises :class:`Transient`)."""
    client = connect(settings.redis_url, ride_out=True)
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
    if spec.get("status") == "failed":  # marked failed for good (only `league retry` plays it again)
        return "failed"
    if store.is_cancelled(league_id):
        return "cancelled"
    seats: list[str] = json.loads(spec["seats"])
    held = store.quarantined(league_id)
    for bot in seats:
        if bot in held:  # not played, so not charged to its opponents; the scheduler holds its matches back
            raise Waiting(f"bot {bot} is in quarantine: {held[bot]['reason']}", retry_after=30.0)
    lease = MatchLease(store.r, keys, match_id, settings.lease_ms, worker_id)
    if not lease.acquire():
        # Playing elsewhere, or its worker died and the lease has not expired yet:
        # come back later rather than drop the match.
        raise Waiting(f"match {match_id} is leased by another worker", retry_after=settings.lease_ms / 1000)
    status = store.match(league_id, match_id).get("status")
    if status == "done":
        # A second message for it (a scheduler re-sends what was in flight when it restarts) that came
        # while the first was played: that runner committed and let the lease go before this one took it.
        lease.release()
        return "already-done"
    if status is None:  # withdrawn from a standing ladder (its bot left) while this message waited
        lease.release()
        return "unknown"
    slots = GameSlots(store.r, settings.prefix)
    try:
        if not slots.acquire(seats, match_id, settings.lease_ms):
            raise Waiting(f"a bot of match {match_id} is playing all the games it allows", 1.0, backoff=False)
        try:
            with lease.kept(also=lambda: slots.renew(seats, match_id, settings.lease_ms)), metrics.playing():
                return _attempt(store, keys, settings, match_id, lease, spec["seed"], seats, worker_id)
        finally:
            if not lease.lost.is_set():  # the new holder renews the same slots: leave them to it
                slots.release(seats, match_id)
    except LeaseLost as exc:
        log.warning("match %s of league %s: %s; leaving it to the new holder", match_id, league_id, exc)
        raise
    except Waiting as exc:
        store.ledger.set_state(keys, match_id, "queued", waiting=str(exc))
        raise
    except ArenaFault as exc:
        log.warning("match %s of league %s interrupted by the arena: %s", match_id, league_id, exc)
        store.r.hincrby(keys.match(match_id), "interruptions", 1)
        store.ledger.set_state(keys, match_id, "queued", interrupted=str(exc), waiting="")
        raise
    except Exception as exc:  # a bug or bad data: a counted attempt, then shown as failed
        log.exception("match %s of league %s: unexpected error", match_id, league_id)
        return _count_failure(store, keys, settings, match_id, f"{type(exc).__name__}: {exc}")
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
    """One try at a claimed match: play it and commit it (``starts`` counts the tries that began)."""
    started = time.monotonic()
    attempt = int(store.r.hincrby(keys.match(match_id), "starts", 1))
    store.ledger.set_state(keys, match_id, "running", worker=worker_id, started_at=f"{time.time():.3f}", waiting="")
    league = store.load(keys.league)  # the one reader of a league's settings
    try:
        outcome = asyncio.run(_run(settings, keys, match_id, league, seed, seats, lease, attempt))
    except TimeoutError:  # the limit covers the longest possible match: only a stall gets here
        raise ArenaFault(f"stalled past the time limit of {settings.task_time_limit} s") from None
    finished = Finished(outcome.finished, seats, [asdict(c) for c in outcome.conduct], seed)
    try:
        stored = settle(store, league, match_id, finished, lease)
    except NotLeaseHolder as exc:
        raise LeaseLost(str(exc)) from None
    if stored:
        metrics.committed(seats, outcome.conduct, time.monotonic() - started)
        _quarantine_misbehaving(store, keys, league, match_id, seats, outcome)
    return "done" if stored else "already-done"


def _quarantine_misbehaving(
    store: LeagueStore, keys: LeagueKeys, league: League, match_id: str, seats: list[str], outcome: MatchOutcome
) -> None:
    """Take out of scheduling a bot whose conduct crossed the league's limits (see :class:`store.leagues.League`)."""
    stats = LeagueResults(store.r, store.prefix)
    for bot, conduct in zip(seats, outcome.conduct, strict=True):
        reason = ""
        if league.quarantine_illegal and conduct.illegal >= league.quarantine_illegal:
            reason = f"{conduct.illegal} illegal answers in match {match_id}"
        elif league.quarantine_timeouts and conduct.timeouts >= league.quarantine_timeouts:
            reason = f"{conduct.timeouts} timeouts in match {match_id}"
        elif league.quarantine_forfeits and conduct.forfeit:
            row = stats.standing(keys.league, bot)
            if row is not None and row.forfeits >= league.quarantine_forfeits:
                reason = f"{row.forfeits} forfeits in the league (the last in match {match_id})"
        if reason and store.quarantine(keys.league, bot, reason, match_id):
            log.warning("league %s: bot %s taken out of scheduling: %s", keys.league, bot, reason)
            AuditLog(store.r, store.prefix).record("quarantined", league=keys.league, bot=bot, reason=reason)


async def _run(
    settings: ArenaSettings,
    keys: LeagueKeys,
    match_id: str,
    league: League,
    seed: str,
    seats: list[str],
    lease: MatchLease,
    attempt: int,
) -> MatchOutcome:
    """The match (published live as it is played, try ``attempt``), cancelled at once if the lease is lost;
    arena errors become :class:`ArenaFault`."""
    aredis: AsyncRedis = connect_async(settings.redis_url, ride_out=True)
    tls_ca = Path(settings.tls_ca).read_bytes() if settings.tls_ca else None
    runner = MatchRunner(
        aredis,
        settings.prefix,
        grace_ms=settings.grace_ms,
        tls_ca=tls_ca,
    )
    loop = asyncio.get_running_loop()
    control = TimeControl.of_league(league)
    watched = LiveMatch(aredis, keys, match_id, attempt, league.rules)
    play = asyncio.ensure_future(
        runner.play(league.rules, seed, seats, f"{keys.league}/{match_id}", control, watch=watched.seen)
    )

    def stop_playing() -> None:  # called from the lease's thread
        loop.call_soon_threadsafe(play.cancel)

    lease.on_lost(stop_playing)
    try:
        return await asyncio.wait_for(play, settings.task_time_limit)
    except asyncio.CancelledError:
        if lease.lost.is_set():
            raise LeaseLost(f"lost the lease of match {match_id} while playing it") from None
        raise
    except BotUnavailable as exc:
        raise Waiting(str(exc)) from None
    except ReplicaUnreachable as exc:
        raise ArenaFault(str(exc)) from None
    except grpc.aio.AioRpcError as exc:
        if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise ArenaFault(f"engine service: {exc.code().name}: {exc.details()}") from None
        raise
    finally:
        await watched.close()
        await runner.close()
        await aredis.aclose()


def _count_failure(store: LeagueStore, keys: LeagueKeys, settings: ArenaSettings, match_id: str, error: str) -> str:
    """A failure of the match itself: count it; mark the match failed once ``max_attempts`` are spent."""
    mkey = keys.match(match_id)
    store.r.hsetnx(mkey, "first_error", error)
    attempts = int(store.r.hincrby(mkey, "attempts", 1))
    if attempts >= settings.max_attempts:
        first = text(store.r.hget(mkey, "first_error") or error)
        store.ledger.set_state(keys, match_id, "failed", error=error, waiting="")
        log.error("match %s of league %s failed %d times; first: %s", match_id, keys.league, attempts, first)
        return "failed"
    store.ledger.set_state(keys, match_id, "queued", error=error, waiting="")
    raise Transient(f"attempt {attempts} of {settings.max_attempts} failed: {error}", retry_after=1.0)
