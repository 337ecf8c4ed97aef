"""A worker's Prometheus series (served by :mod:`telemetry` when ``TABLANETTE_METRICS_PORT`` is set).

- ``tablanette_matches_queued``: matches waiting in the broker's queue, read from
  Redis at every scrape (every worker shows the same queue);
- ``tablanette_matches_running``: matches this worker is playing now;
- ``tablanette_matches_total{outcome}``: tries of a match this worker ended, by
  how: ``done`` (committed), ``already-done``, ``failed`` (marked failed for
  good), ``retry`` (a failed attempt, retried), ``waiting`` (a bot not there or
  busy), ``interrupted`` (an arena fault), ``cancelled``, ``unknown``;
- ``tablanette_match_duration_seconds``: a match played and committed, from the
  start of its try to its commit;
- ``tablanette_timeouts_total{bot}``, ``tablanette_illegal_plays_total{bot}``,
  ``tablanette_forfeits_total{bot}``: what bots did in the matches this worker
  committed (a match played again after a fault counts once: only the commit
  that stored it counts);
- ``tablanette_redis_errors_total`` (:mod:`telemetry`).

Celery's own events are untouched: Flower turns them on when it starts.
A worker must run Celery's ``threads`` pool (as ``tablanette up`` and the
deploy files do): the series live in the worker's one process.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import redis
from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from engine_service.turns import SeatConduct
from telemetry import REDIS_ERRORS

RUNNING = Gauge("tablanette_matches_running", "Matches this worker is playing now")
MATCHES = Counter("tablanette_matches", "Tries of a league match this worker ended, by how they ended", ["outcome"])
DURATION = Histogram(
    "tablanette_match_duration_seconds",
    "A match played and committed: from the start of its try to its commit",
    buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0),
)
TIMEOUTS = Counter("tablanette_timeouts", "Moves a bot lost to its clock, in committed matches", ["bot"])
ILLEGAL = Counter("tablanette_illegal_plays", "Illegal answers a bot sent, in committed matches", ["bot"])
FORFEITS = Counter("tablanette_forfeits", "Committed matches a bot forfeited", ["bot"])
QUEUE_TIMEOUT_S = 1.0
"""A scrape during a Redis outage leaves the queue out rather than wait for Redis."""


@contextmanager
def playing() -> Iterator[None]:
    """While a match is being played (and committed) by this worker."""
    RUNNING.inc()
    try:
        yield
    finally:
        RUNNING.dec()


def ended(outcome: str) -> None:
    MATCHES.labels(outcome).inc()


def committed(seats: Sequence[str], conduct: Iterable[SeatConduct], seconds: float) -> None:
    """A match this worker stored: its duration, and what each seat's bot did (zeros too, so every
    bot that played has its series)."""
    DURATION.observe(seconds)
    for bot, seat in zip(seats, conduct, strict=True):
        TIMEOUTS.labels(bot).inc(seat.timeouts)
        ILLEGAL.labels(bot).inc(seat.illegal)
        FORFEITS.labels(bot).inc(int(seat.forfeit))


class QueueDepth(Collector):
    """``tablanette_matches_queued``: the length of the broker's list for the match queue, per scrape."""

    def __init__(self, redis_url: str, key: str) -> None:
        self.client = redis.Redis.from_url(redis_url, socket_timeout=QUEUE_TIMEOUT_S, socket_connect_timeout=1.0)
        self.key = key

    def describe(self) -> Iterator[GaugeMetricFamily]:  # the name, without asking Redis at registration
        yield GaugeMetricFamily("tablanette_matches_queued", "Matches waiting in the broker's queue")

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            depth = int(self.client.llen(self.key))
        except redis.RedisError:  # an outage: no figure rather than a wrong one (or a scrape that hangs)
            REDIS_ERRORS.inc()
            return
        yield GaugeMetricFamily("tablanette_matches_queued", "Matches waiting in the broker's queue", value=depth)


def watch_queue(redis_url: str, key: str) -> None:
    """Report the depth of the Redis list ``key`` (the broker's match queue) at every scrape."""
    REGISTRY.register(QueueDepth(redis_url, key))
