"""Sending matches to the workers' queue, riding out broker outages.

The scheduler only enqueues ids (``tablanette.play_match(league, match)``). When
the broker (Redis) is unreachable, Celery's own publish retries give up after
about a second; :class:`MatchQueue` then keeps trying, with a back-off capped at
2 s, logging while it waits, so a Redis restart or pause never stops a league.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
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
        self.outages = 0
        """Sends that had to wait for the broker: messages sent just before may have been lost with it."""

    def __call__(self, league_id: str, match_id: str) -> None:
        delay, since, logged = BACKOFF_START, time.monotonic(), 0.0
        while True:
            try:
                self.app.send_task(TASK_NAME, args=[league_id, match_id], queue=self.queue)
                if logged:
                    log.warning("the broker is back after %.1f s", time.monotonic() - since)
                return
            except OperationalError as exc:
                if not logged:
                    self.outages += 1
                if time.monotonic() - logged >= LOG_EVERY:
                    logged = time.monotonic()
                    log.warning("cannot reach the broker for %.0f s (%s); waiting", logged - since, exc)
                time.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)

    def many(self, league_id: str, match_ids: Sequence[str]) -> None:
        """Enqueue many matches through one producer (one connection, as a Celery group does).

        If the broker goes away midway, the rest go one by one through
        :meth:`__call__`, which rides out the outage.
        """
        sent = 0
        try:
            with self.app.producer_or_acquire() as producer:
                for match_id in match_ids:
                    self.app.send_task(TASK_NAME, args=[league_id, match_id], queue=self.queue, producer=producer)
                    sent += 1
        except OperationalError as exc:
            self.outages += 1
            log.warning("the broker failed while enqueuing (%s); going on one match at a time", exc)
            for match_id in match_ids[sent:]:
                self(league_id, match_id)
