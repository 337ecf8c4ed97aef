"""Matches whose broker message was lost in a Redis outage are sent again by the scheduler.

A Celery worker that loses the broker drops the message it had reserved but not
yet started; that message then waits in the broker's unacked set for the
visibility timeout (hours), while the league believes the match is queued. This
once stalled a league in CI after a 3-second Redis restart. Here the loss is
made certain (the queue's list is emptied, as the dropped reservation leaves
it) and Redis is killed and restarted from its append-only file, quickly or
slowly: the feeder must put every match in flight back in the broker.
"""

from __future__ import annotations

import base64
import json
import logging
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import unique_prefix
from celery import Celery

from cli.local import free_port, redis_server_binary
from engine_service.rules import Rules
from scheduler.league import Feeder
from scheduler.queue import MatchQueue
from store.client import connect
from store.keys import Keys
from store.leagues import League, LeagueStore
from store.sessions import SessionEntry

QUEUE = "lost.matches"
BOTS = ["ann", "bob", "cat"]


class PrivateRedis:
    """A redis-server of the test's own, writing every command to its append-only file."""

    def __init__(self, workdir: Path) -> None:
        self.port, self.dir = free_port(), workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = redis_server_binary()
        assert binary, "redis-server is needed for this test"
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir)]
        argv += ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = connect(self.url)
        _wait(lambda: _pings(client), 20, "the private Redis to start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.kill()


def _pings(client: object) -> bool:
    try:
        return bool(client.ping())  # type: ignore[attr-defined]
    except Exception:
        return False


def _wait(check: object, timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():  # type: ignore[operator]
            return value
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def _at_least(count: int, ids: list[str]) -> list[str] | None:
    """``ids`` once there are ``count`` of them (None before: keep waiting)."""
    return ids if len(ids) >= count else None


def _queued_in_broker(server: PrivateRedis) -> list[str]:
    """The match ids of the messages waiting in the broker's queue (Celery's message protocol 2)."""
    ids = []
    for raw in connect(server.url).lrange(QUEUE, 0, -1):
        body = json.loads(base64.b64decode(json.loads(raw)["body"]))
        ids.append(body[0][1])  # args: (league, match)
    return sorted(ids)


@pytest.mark.parametrize("down_s", [0.0, 3.0], ids=["restarted-at-once", "down-3s"])
def test_matches_lost_with_a_redis_restart_are_sent_again(
    private_redis: PrivateRedis, down_s: float, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = unique_prefix("lost")
    store = LeagueStore(connect(private_redis.url, ride_out=True), prefix)
    league = League("lost", Rules.preset("tablic-pagat").with_overrides({"deals": 1}), bots=list(BOTS))
    store.create(league)
    for bot in BOTS:  # connected, as far as the feeder can tell (an engine replica writes these)
        store.r.set(Keys(prefix).session(bot), SessionEntry(bot, "replica-x", f"s-{bot}", "", 1).to_json())
    app = Celery("lost-test", broker=private_redis.url)
    stop = threading.Event()
    feeder = Feeder(store, "lost", MatchQueue(app, QUEUE), window=2, poll=0.05, should_stop=stop.is_set)
    thread = threading.Thread(target=feeder.run, daemon=True)
    caplog.set_level(logging.WARNING, logger="tablanette")
    thread.start()
    try:
        # Wait for the whole window, not the first message: the feeder sends one message at a time.
        sent = _wait(lambda: _at_least(2, _queued_in_broker(private_redis)), 30, "the first matches in the broker")
        assert len(sent) == 2, sent  # the window
        in_flight = sorted(store.in_flight("lost"))
        assert sent == in_flight
        connect(private_redis.url).delete(QUEUE)  # lost, as a dropped reservation leaves it
        private_redis.kill()
        time.sleep(down_s)
        private_redis.start()
        again = _wait(
            lambda: _at_least(len(in_flight), _queued_in_broker(private_redis)), 30, "the lost matches to be sent again"
        )
        assert again == in_flight == sorted(store.in_flight("lost"))  # each once: none lost, none sent twice
        assert "re-sending every match in flight" in caplog.text
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()


def test_a_redis_outage_is_counted_in_the_metrics_and_the_queue_depth_rides_it_out(
    private_redis: PrivateRedis,
) -> None:
    """``tablanette_redis_errors_total`` counts a ride-out client's failed tries while Redis is away, and
    the queue-depth gauge leaves its figure out during the outage rather than hang the scrape."""
    from prometheus_client import REGISTRY

    from worker.metrics import QueueDepth

    def errors() -> float:
        return REGISTRY.get_sample_value("tablanette_redis_errors_total") or 0.0

    client = connect(private_redis.url, ride_out=True)
    depth = QueueDepth(private_redis.url, QUEUE)
    client.rpush(QUEUE, "a", "b", "c")
    assert [(m.name, m.samples[0].value) for m in depth.collect()] == [("tablanette_matches_queued", 3.0)]
    before = errors()
    private_redis.kill()
    assert list(depth.collect()) == []  # no figure rather than a wrong one
    assert errors() == before + 1
    wrote = threading.Thread(target=client.set, args=("after-the-outage", "1"), daemon=True)
    wrote.start()  # rides the outage out, counting every failed try
    _wait(lambda: errors() >= before + 3, 30, "failed tries to be counted")
    private_redis.start()
    wrote.join(timeout=30)
    assert not wrote.is_alive() and client.get("after-the-outage") == b"1"
    assert [m.samples[0].value for m in depth.collect()] == [3.0]  # the AOF kept the queue
