"""A worker's Prometheus series (served by :mod:`telemetry` when ``TABLANETTE_METRICS_PORT`` is set).

- ``tablanette_matches_queued``: matches waiting in the broker's queue (delivered
  but unacknowledged ones not counted), asked of the broker at every scrape: a
  Redis broker's list length, or a RabbitMQ queue's ready messages (every worker
  shows the same queue);
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

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import redis
from kombu.connection import Connection
from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from engine_service.driver import SeatConduct
from store.client import connect
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
"""A scrape during a broker outage leaves the queue out rather than wait for the broker."""
AMQP_SCHEMES = ("amqp", "amqps", "pyamqp")
"""Broker URL schemes of RabbitMQ (any AMQP 0-9-1 broker); every other broker URL is Redis."""


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
        self.client = connect(redis_url, timeout=QUEUE_TIMEOUT_S)  # a redis+sentinel:// broker too
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


class AmqpQueueDepth(Collector):
    """``tablanette_matches_queued`` from RabbitMQ: the match queue's ready messages, per scrape.

    Each scrape sends a passive ``queue.declare`` (it creates nothing) on one kept
    connection; a queue nobody has declared yet holds no match (0). While the broker
    is unreachable the figure is left out, after at most about
    :data:`QUEUE_TIMEOUT_S` per step, and the next scrape connects again.
    """

    def __init__(self, broker_url: str, queue: str) -> None:
        timeouts = {"read_timeout": QUEUE_TIMEOUT_S, "write_timeout": QUEUE_TIMEOUT_S}
        self.connection: Any = Connection(  # type: ignore[no-untyped-call]
            broker_url, connect_timeout=QUEUE_TIMEOUT_S, transport_options=timeouts
        )
        self.queue = queue
        self.channel: Any = None
        self.lock = threading.Lock()  # scrapes may come on several of the server's threads

    def describe(self) -> Iterator[GaugeMetricFamily]:  # the name, without asking the broker at registration
        yield GaugeMetricFamily("tablanette_matches_queued", "Matches waiting in the broker's queue")

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self.lock:
            depth = self.depth()
        if depth is not None:
            yield GaugeMetricFamily("tablanette_matches_queued", "Matches waiting in the broker's queue", value=depth)

    def depth(self) -> int | None:
        """The queue's ready messages; None when the broker cannot be asked now."""
        try:
            if self.channel is None:
                self.connection.connect()
                self.channel = self.connection.channel()
            return int(self.channel.queue_declare(queue=self.queue, passive=True).message_count)
        except self.connection.channel_errors:  # NOT_FOUND: no such queue yet (the channel is closed with it)
            self.channel = None
            return 0
        except (*self.connection.connection_errors, OSError):  # an outage: no figure rather than a wrong one
            self.channel = None
            self.connection.collect()  # drop the dead socket without waiting on it
            return None

    def close(self) -> None:
        with self.lock:
            self.channel = None
            self.connection.release()


def amqp_broker(broker_url: str) -> bool:
    """Whether ``broker_url`` names RabbitMQ (``amqp://``, ``amqps://``, ``pyamqp://``) rather than Redis."""
    return urlsplit(broker_url).scheme in AMQP_SCHEMES


def queue_depth(broker_url: str, queue: str, redis_keyprefix: str) -> Collector:
    """The ``tablanette_matches_queued`` collector for the broker at ``broker_url``: a Redis broker keeps the
    queue in the list ``redis_keyprefix + queue``; RabbitMQ keeps it in the queue ``queue``."""
    if amqp_broker(broker_url):
        return AmqpQueueDepth(broker_url, queue)
    return QueueDepth(broker_url, redis_keyprefix + queue)


def watch_queue(broker_url: str, queue: str, redis_keyprefix: str) -> None:
    """Report the depth of the broker's match queue at every scrape (:func:`queue_depth`)."""
    REGISTRY.register(queue_depth(broker_url, queue, redis_keyprefix))
