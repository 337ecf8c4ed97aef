"""The Celery app: Redis or RabbitMQ broker, late acknowledgement, one match at a time per process.

Start a worker with ``celery -A worker.celery_app worker --pool threads -c 1 -Q <prefix>.matches``
(``tablanette up`` does this); with ``TABLANETTE_METRICS_PORT`` set it serves its
metrics (:mod:`worker.metrics`). A worker killed mid-match never acknowledged it,
so Redis hands the match to another worker after the visibility timeout
(RabbitMQ at once, when the dead worker's connection closes); the match lease
and the idempotent commit make sure it still counts exactly once.

With ``TABLANETTE_BROKER_URL=amqp://...`` (RabbitMQ) the Redis transport options
do not apply (no visibility timeout: an unacknowledged message returns to the
queue when its consumer's connection or channel closes). Publishes wait for the
broker's confirm, so a match the scheduler has sent is in RabbitMQ, not in a
socket buffer. RabbitMQ's ``consumer_timeout`` (30 min by default) must stay
above ``TABLANETTE_TASK_TIME_LIMIT``, or it closes the channel of a worker
still playing a long match (docs: deploy/README.md, "RabbitMQ").

A Redis broker behind Sentinels (``TABLANETTE_REDIS_SENTINELS``, a
``redis+sentinel://`` broker URL) goes through kombu's ``sentinel://``
transport, which asks the Sentinels for the primary on every reconnect: a
worker and the scheduler follow a failover by themselves. Sentinels that
cannot be reached or do not know the master stop the process at once.
"""

from __future__ import annotations

import sys
from typing import Any

from celery import Celery
from celery.signals import worker_init

import telemetry
from config import SettingsError, load_settings
from store.client import SENTINEL_TIMEOUT, SentinelError, check_sentinels, sentinel_target
from store.keys import Keys
from worker import metrics


def kombu_sentinel_url(url: str) -> tuple[str, str]:
    """kombu's spelling of a ``redis+sentinel://`` URL (``sentinel://[auth@]host:port/db;...``) and the master's name.

    >>> kombu_sentinel_url("redis+sentinel://:pw@h1:26379,h2:26379/arena/1")
    ('sentinel://:pw@h1:26379/1;sentinel://:pw@h2:26379/1', 'arena')
    """
    target = sentinel_target(url)
    assert target is not None
    auth = url.partition("://")[2].partition("/")[0].rpartition("@")[0]
    where = [f"sentinel://{auth + '@' if auth else ''}{host}:{port}/{target.db}" for host, port in target.sentinels]
    return ";".join(where), target.master


try:
    settings = load_settings()
except SettingsError as exc:  # a clear line, not a traceback, from every process that loads the app
    sys.exit(f"tablanette worker: {exc}")

app = Celery("tablanette", broker=settings.broker_url, include=["worker.tasks"])
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_default_queue=settings.queue,
    task_time_limit=settings.task_time_limit,
    # Below the hard limit whatever it is (above it, Celery refuses every retry and drops the match).
    task_soft_time_limit=settings.task_time_limit - min(30, settings.task_time_limit / 10),
    broker_transport_options={
        "visibility_timeout": settings.visibility_timeout,
        "global_keyprefix": Keys(settings.prefix).celery,
        "unacked_restore_interval": settings.restore_interval,
        "unacked_restore_throttle": 1,
    },
    broker_connection_retry_on_startup=True,
    task_ignore_result=True,
    worker_hijack_root_logger=False,
    worker_send_task_events=False,
)
if metrics.amqp_broker(settings.broker_url):  # RabbitMQ: none of Redis's options; confirmed publishes
    app.conf.broker_transport_options = {"confirm_publish": True}
if sentinel_target(settings.broker_url):  # Redis behind Sentinels: kombu's sentinel transport follows a failover
    if settings.broker_url.startswith("rediss+"):  # kombu's sentinel transport would drop TLS without a word
        sys.exit(
            "tablanette worker: the broker: TLS to Redis behind Sentinels (rediss+sentinel://) is not supported "
            "for the Celery queue; give TABLANETTE_BROKER_URL a plain redis+sentinel:// URL or RabbitMQ (amqps://)"
        )
    try:
        check_sentinels(settings.broker_url)
    except SentinelError as exc:
        sys.exit(f"tablanette worker: the broker: {exc}")
    app.conf.broker_url, master = kombu_sentinel_url(settings.broker_url)
    sentinel_password = sentinel_target(settings.broker_url).sentinel_password  # type: ignore[union-attr]
    app.conf.broker_transport_options.update(
        master_name=master,
        sentinel_kwargs={"socket_timeout": SENTINEL_TIMEOUT, "socket_connect_timeout": 1.0}
        | ({"password": sentinel_password} if sentinel_password else {}),
    )


@worker_init.connect  # type: ignore[untyped-decorator]
def serve_metrics(**_: Any) -> None:
    """A worker serves its metrics (:mod:`worker.metrics`) when ``TABLANETTE_METRICS_PORT`` is set."""
    if settings.metrics_port is None:
        return
    metrics.watch_queue(settings.broker_url, settings.queue, Keys(settings.prefix).celery)
    port = telemetry.serve(settings.metrics_port, settings.metrics_host)
    print(f"metrics on {settings.metrics_host}:{port}", flush=True)
