"""Celery tasks: thin wrappers that take ids only and call plain modules."""

from __future__ import annotations

from celery import Task

from worker.celery_app import app, settings
from worker.league_match import Transient, play_league_match


@app.task(bind=True, name="tablanette.play_match", max_retries=None)
def play_match(self: Task, league_id: str, match_id: str) -> str:
    """Play one league match (idempotent: safe to deliver twice)."""
    try:
        return play_league_match(settings, league_id, match_id, worker_id=self.request.hostname or "worker")
    except Transient as exc:
        growth = 2 ** min(self.request.retries, 6) if exc.backoff else 1
        countdown = min(exc.retry_after * growth, 300)
        raise self.retry(exc=exc, countdown=countdown) from None


@app.task(name="tablanette.noop", ignore_result=True)
def noop(counter_key: str) -> None:
    """Does nothing but count itself: the baseline of bench/tournament.py (raw Celery throughput)."""
    import redis

    client = redis.Redis.from_url(settings.redis_url)
    client.incr(counter_key)
    client.close()
