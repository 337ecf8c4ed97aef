"""Celery tasks: thin wrappers that take ids only and call plain modules."""

from __future__ import annotations

from celery import Task
from celery.utils.time import get_exponential_backoff_interval

from store.client import connect
from worker import metrics
from worker.celery_app import app, settings
from worker.league_match import ArenaFault, Transient, Waiting, play_league_match

RETRY_BACKOFF_MAX = 60
"""Seconds: the longest wait between two tries of a match (a bot that connects late waits no longer)."""


@app.task(bind=True, name="tablanette.play_match", max_retries=None)
def run_league_match(self: Task, league_id: str, match_id: str) -> str:
    """Play one league match (idempotent: safe to deliver twice)."""
    try:
        outcome = play_league_match(settings, league_id, match_id, worker_id=self.request.hostname or "worker")
    except Transient as exc:
        metrics.ended(transient_outcome(exc))
        raise self.retry(exc=exc, countdown=retry_countdown(exc, self.request.retries)) from None
    metrics.ended(outcome)
    return outcome


def transient_outcome(exc: Transient) -> str:
    """How a try that will be retried ended, as ``tablanette_matches_total`` names it."""
    if isinstance(exc, Waiting):
        return "waiting"
    return "interrupted" if isinstance(exc, ArenaFault) else "retry"


def retry_countdown(exc: Transient, retries: int) -> int:
    """Celery's exponential backoff with full jitter, never sooner than the cause's own wait.

    The wait is between ``retry_after`` and ``retry_after * 2**retries`` (at most
    :data:`RETRY_BACKOFF_MAX`), so retries of many matches spread out. A cause
    that is an expected short wait (a bot's game slots are all taken) does not
    grow: it retries after ``retry_after`` each time.

    >>> retry_countdown(Transient("slots full", 1.0, backoff=False), retries=9)
    1
    >>> 5 <= retry_countdown(Transient("engine restarting", 5.0), retries=3) <= 40
    True
    """
    factor = max(1, round(exc.retry_after))
    if not exc.backoff:
        return factor
    return max(factor, int(get_exponential_backoff_interval(factor, retries, RETRY_BACKOFF_MAX, full_jitter=True)))


@app.task(name="tablanette.noop", ignore_result=True)
def noop(counter_key: str) -> None:
    """Does nothing but count itself: the baseline of bench/tournament.py (raw Celery throughput)."""
    client = connect(settings.redis_url)
    client.incr(counter_key)
    client.close()
