"""The arena on RabbitMQ as its Celery broker: a real league with a worker killed mid-match, and the
queue-depth metric read from a RabbitMQ queue.

The broker is the machine's RabbitMQ (``TABLANETTE_TEST_AMQP_URL``, by default
``amqp://guest:guest@127.0.0.1:5672/``). Each test gets a virtual host of its own, made with
``rabbitmqctl`` and deleted afterwards, so nothing it declares meets another run's queues; where
``rabbitmqctl`` cannot make one, the URL's own vhost is used (the queue names carry the test's
unique prefix). The tests are skipped, saying so, only when no broker answers.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from arena_harness import free_port, metrics_port, scrape, unique_prefix
from fault_kit import FaultArena
from kombu import Connection, Exchange, Producer, Queue
from prometheus_client.registry import Collector

from worker.metrics import AmqpQueueDepth, QueueDepth, queue_depth

AMQP_URL = os.environ.get("TABLANETTE_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")


def _answers(url: str, patience: float = 30.0) -> bool:
    """Whether the broker takes connections, asked again for ``patience`` seconds (a loaded machine, or a
    broker another test has just restarted, is slow: a skip must mean there is none)."""
    parts = urlsplit(url)
    deadline = time.monotonic() + patience
    while True:
        with socket.socket() as s:
            s.settimeout(2)
            if s.connect_ex((parts.hostname or "127.0.0.1", parts.port or 5672)) == 0:
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(1)


def _ctl(*args: str) -> subprocess.CompletedProcess[str] | None:
    """``rabbitmqctl ARGS`` on a broker on this machine; None when there is no rabbitmqctl or it fails."""
    ctl = shutil.which("rabbitmqctl")
    if ctl is None or urlsplit(AMQP_URL).hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    try:
        done = subprocess.run([ctl, "-q", *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done if done.returncode == 0 else None


@pytest.fixture
def broker() -> Iterator[tuple[str, str | None]]:
    """The broker URL of a fresh vhost, and that vhost's name (None: the URL's own vhost, shared)."""
    if not _answers(AMQP_URL):
        pytest.skip(f"no RabbitMQ answers at {urlsplit(AMQP_URL).netloc.rpartition('@')[2]} (TABLANETTE_TEST_AMQP_URL)")
    vhost: str | None = unique_prefix("rabbitmq")
    user = urlsplit(AMQP_URL).username or "guest"
    if _ctl("add_vhost", vhost) is None or _ctl("set_permissions", "-p", vhost, user, ".*", ".*", ".*") is None:
        _ctl("delete_vhost", vhost)
        vhost = None
    parts = urlsplit(AMQP_URL)
    url = urlunsplit(parts._replace(path="/" + quote(vhost, safe=""))) if vhost else AMQP_URL
    try:
        yield url, vhost
    finally:
        if vhost:
            _ctl("delete_vhost", vhost)


def _counts(vhost: str, queue: str) -> tuple[int, int] | None:
    """The queue's (ready, unacknowledged) messages, as RabbitMQ itself counts them."""
    listed = _ctl("list_queues", "-p", vhost, "--no-table-headers", "name", "messages_ready", "messages_unacknowledged")
    rows = [line.split() for line in listed.stdout.splitlines()] if listed else []
    return next(((int(r[1]), int(r[2])) for r in rows if len(r) == 3 and r[0] == queue), None)


def _queued(collector: Collector) -> list[float]:
    return [s.value for family in collector.collect() for s in family.samples]


def _settles_at(collector: Collector, want: list[float], timeout: float = 15.0) -> None:
    """The figure reaches ``want`` (a publish or a requeue reaches RabbitMQ's count a moment later)."""
    ends = time.monotonic() + timeout
    while (got := _queued(collector)) != want:
        assert time.monotonic() < ends, f"queue depth {got}, not {want}, after {timeout} s"
        time.sleep(0.05)


def test_a_league_on_rabbitmq_survives_a_worker_killed_mid_match(
    tmp_path: Path, broker: tuple[str, str | None]
) -> None:
    """Real engine replicas, workers, bots and scheduler, with RabbitMQ as the broker and Redis as the store
    only. A worker is SIGKILLed while it plays: its unacknowledged message goes back to the queue when its
    connection dies, and the league finishes by itself, every match counted once, every record verified,
    no bot charged, and nothing left in RabbitMQ, ready or unacknowledged."""
    url, vhost = broker
    fa = FaultArena.create(tmp_path)
    try:
        # A 10 s lease (30 s by default) bounds how long the killed worker's match stays claimed by it.
        fa.arena.extra_env.update(TABLANETTE_BROKER_URL=url, TABLANETTE_METRICS_PORT="0", TABLANETTE_LEASE_MS="10000")
        fa.start_league()
        match_id, worker = next(iter(fa.wait_mid_league().items()))
        victim = worker.split("@")[0]
        survivor = next(c for name, c in fa.workers.items() if name != victim)
        port = metrics_port(survivor)
        fa.arena.wait_until(  # read from RabbitMQ, not left out
            lambda: scrape(port).get("tablanette_matches_queued", -1) >= 0, "the queue's depth in the metrics", 30
        )
        at = fa.kill(fa.workers[victim], signal.SIGKILL)
        seconds = fa.recovery("worker killed mid-match on RabbitMQ (SIGKILL)", at, [match_id])
        fa.check_clean()

        played = fa.arena.redis.hgetall(fa.keys.match(match_id))
        assert int(played[b"starts"]) >= 2 and b"attempts" not in played  # played again, never charged
        assert int(played[b"interruptions"]) >= 1
        assert "Connected to amqp://" in survivor.text()  # the workers really took their matches from RabbitMQ
        celery_keys = list(fa.arena.redis.scan_iter(fa.arena.keys.celery + "*"))
        assert celery_keys == [], f"the broker was RabbitMQ, yet Redis holds Celery keys: {celery_keys[:5]}"

        queue = fa.arena.keys.queue
        fa.arena.wait_until(lambda: scrape(port).get("tablanette_matches_queued") == 0, "an empty queue", 60)
        if vhost:  # nothing ready, nothing held unacknowledged by a worker (the killed one's came back)
            fa.arena.wait_until(lambda: _counts(vhost, queue) == (0, 0), lambda: f"{_counts(vhost, queue)}", 60)
        print(f"RabbitMQ league: {fa.done()} matches, the killed worker's match committed {seconds:.1f} s later")
    finally:
        fa.close()


def test_the_queue_depth_metric_reads_a_rabbitmq_queue(broker: tuple[str, str | None]) -> None:
    """``tablanette_matches_queued`` on a RabbitMQ broker: the queue's ready messages (0 before anyone
    declared it; a delivered, unacknowledged message not counted, as with Redis), a figure again after
    its connection broke, and no figure (quickly) when the broker cannot be reached."""
    url, _ = broker
    name = unique_prefix("depth") + ".matches"
    collector = queue_depth(url, name, "unused:")
    assert isinstance(collector, AmqpQueueDepth)
    redis_depth = queue_depth("redis://127.0.0.1:6379/0", name, "p:celery:")
    assert isinstance(redis_depth, QueueDepth) and redis_depth.key == "p:celery:" + name
    try:
        assert _queued(collector) == [0.0]  # no such queue yet: no match waits (and none is created)
        assert _queued(collector) == [0.0]
        queue = Queue(name, Exchange(name, type="direct"), routing_key=name, auto_delete=True)
        with Connection(url) as conn:
            producer = Producer(conn.default_channel)
            for i in range(3):
                producer.publish({"n": i}, exchange=queue.exchange, routing_key=name, declare=[queue])
            _settles_at(collector, [3.0])
            taken = conn.default_channel.basic_get(name, no_ack=False)  # delivered, held unacknowledged
            assert taken is not None
            _settles_at(collector, [2.0])
            collector.connection.connection.sock.shutdown(socket.SHUT_RDWR)  # the scrape's connection breaks
            assert _queued(collector) in ([], [2.0])
            assert _queued(collector) == [2.0]  # connected again
        _settles_at(collector, [3.0])  # the consumer's connection closed: its message is back
    finally:
        collector.close()
        with Connection(url) as conn:
            conn.default_channel.queue_delete(name)

    gone = AmqpQueueDepth(f"amqp://guest:guest@127.0.0.1:{free_port()}//", name)
    started = time.monotonic()
    assert _queued(gone) == [] and _queued(gone) == []  # no figure rather than a wrong one
    assert time.monotonic() - started < 10, "a scrape must not hang on an unreachable broker"


def test_a_league_on_rabbitmq_finishes_by_itself_after_the_broker_restarts_mid_league(
    tmp_path: Path, broker: tuple[str, str | None]
) -> None:
    """RabbitMQ itself goes away mid-league (``rabbitmqctl stop_app``: every connection closed, the
    broker refusing new ones) and comes back 5 s later. The workers and the scheduler reconnect by
    themselves; messages the workers held unacknowledged come back (Celery's queues and messages are
    durable); the league finishes with every match counted once and no bot charged."""
    url, vhost = broker
    if vhost is None:
        pytest.skip("restarting the broker needs rabbitmqctl on this machine")
    fa = FaultArena.create(tmp_path)
    try:
        fa.arena.extra_env.update(TABLANETTE_BROKER_URL=url, TABLANETTE_METRICS_PORT="0", TABLANETTE_LEASE_MS="10000")
        fa.start_league()
        in_flight = list(fa.wait_mid_league())
        at = time.time()
        assert _ctl("stop_app") is not None, "rabbitmqctl stop_app failed"
        try:
            time.sleep(5)
        finally:
            assert _ctl("start_app") is not None, "rabbitmqctl start_app failed: the broker stays down"
        seconds = fa.recovery("RabbitMQ stopped for 5 s mid-league", at, in_flight)
        fa.check_clean()
        reconnected = [name for name, c in fa.workers.items() if "Connected to amqp://" in c.text()]
        assert reconnected, "no worker said it was connected to RabbitMQ"
        fa.arena.wait_until(lambda: _counts(vhost, fa.arena.keys.queue) == (0, 0), "nothing left in RabbitMQ", 60)
        print(f"RabbitMQ restarted mid-league: {fa.done()} matches, in-flight ones committed {seconds:.1f} s later")
    finally:
        _ctl("start_app")  # whatever happened, the machine's broker is left running
        fa.close()
