"""Sending matches to the workers' queue, riding out broker outages.

The scheduler only enqueues ids (``tablanette.play_match(league, match)``). When
the broker (Redis) is unreachable, Celery's own publish retries give up after
about a second; :class:`MatchQueue` then keeps trying, with a back-off capped at
2 s, logging while it waits, so a Redis restart or pause never stops a league.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kombu.exceptions import OperationalError

from scheduler.league import TASK_NAME

log = logging.getLogger("tablanette.scheduler")
BACKOFF_START, BACKOFF_MAX, LOG_EVERY = 0.1, 2.0, 10.0


class MatchQueue:
    """Enqueues matches on ``queue`` through the Celery ``app`` (see the module's doc)."""

    def __init__(self, app: Any, queue: str) -> None:
        self.app = app
        self.queue = queue

    def __call__(self, league_id: str, match_id: str) -> None:
        delay, since, logged = BACKOFF_START, time.monotonic(), 0.0
        while True:
            try:
                self.app.send_task(TASK_NAME, args=[league_id, match_id], queue=self.queue)
                if logged:
                    log.warning("the broker is back after %.1f s", time.monotonic() - since)
                return
            except OperationalError as exc:
                if time.monotonic() - logged >= LOG_EVERY:
                    logged = time.monotonic()
                    log.warning("cannot reach the broker for %.0f s (%s); waiting", logged - since, exc)
                time.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
