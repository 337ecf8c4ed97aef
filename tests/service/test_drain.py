"""Graceful drain: SIGTERM turns health NOT_SERVING, ends bot streams with UNAVAILABLE, exits 0.

SDK bots treat UNAVAILABLE as "reconnect": when an engine comes back on the
same address they reconnect, and a match in progress continues.
"""

from __future__ import annotations

import signal
import threading
import time

import grpc
from arena_harness import Arena
from grpc_health.v1 import health_pb2, health_pb2_grpc
from service_kit import MatchThread, RawBot, check_clean, start_healthy, wait_until

from engine_service.rules import Rules
from store.keys import Keys

DRAIN_GRACE = "60"  # seconds the engine would give in-flight calls (TABLANETTE_DRAIN_SECONDS)
EXIT_WITHIN = 30.0  # from SIGTERM to exit: a drain that waited out the grace fails, a loaded machine does not


class HealthWatch:
    """A live ``Health.Watch`` stream collecting every status it is sent."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.call = health_pb2_grpc.HealthStub(self.channel).Watch(health_pb2.HealthCheckRequest())
        self.statuses: list[int] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for resp in self.call:
                self.statuses.append(resp.status)
        except grpc.RpcError:
            pass

    def close(self) -> None:
        self.call.cancel()
        self.channel.close()


def test_sigterm_drains_and_the_sdk_bot_retries(arena: Arena) -> None:
    proc, port = arena.start_engine(TABLANETTE_DRAIN_SECONDS=DRAIN_GRACE)
    sdk = arena.start_python_bot("greedy", "drainee", arena.add_bot("drainee"), port)
    arena.wait_connected("drainee")
    raw = RawBot(port)
    raw.welcome(arena.add_bot("raw-drainee"), "raw-drainee")
    watch = HealthWatch(port)
    wait_until(lambda: watch.statuses == [health_pb2.HealthCheckResponse.SERVING], what="health SERVING")

    sent = time.monotonic()
    proc.popen.send_signal(signal.SIGTERM)
    code, details = raw.status(timeout=EXIT_WITHIN)
    assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
    assert "shutting down" in details
    wait_until(lambda: health_pb2.HealthCheckResponse.NOT_SERVING in watch.statuses, 5, "health NOT_SERVING")
    watch.close()
    assert proc.popen.wait(timeout=EXIT_WITHIN + 1) == 0, proc.text()
    assert time.monotonic() - sent < EXIT_WITHIN, f"the drain took {time.monotonic() - sent:.1f} s"
    assert "draining engine service" in proc.text()

    # the SDK bot was told UNAVAILABLE and keeps retrying; an engine back on the address gets it again
    wait_until(lambda: "ended (UNAVAILABLE" in sdk.text(), what="the SDK bot's retry")
    assert sdk.alive()
    assert arena.redis.get(Keys(arena.prefix).session("drainee")) is None
    arena.start_engine("engine-again", TABLANETTE_PORT=str(port))
    arena.wait_connected("drainee")
    assert sdk.alive()
    raw.close()


def test_draining_an_engine_mid_match_the_game_continues(arena: Arena) -> None:
    proc, port = arena.start_engine(TABLANETTE_DRAIN_SECONDS=DRAIN_GRACE)
    bots = start_healthy(arena, port)
    match = MatchThread(arena.prefix, Rules.preset("tablic", target=31), "drain", bots, "drain/1", grace_ms=10_000)
    match.wait_answers(6)

    sent = time.monotonic()
    proc.popen.send_signal(signal.SIGTERM)
    assert proc.popen.wait(timeout=EXIT_WITHIN + 1) == 0, proc.text()
    assert time.monotonic() - sent < EXIT_WITHIN, f"the drain took {time.monotonic() - sent:.1f} s"
    assert match.thread.is_alive(), "the match ended with its engine"

    arena.start_engine("engine-again", TABLANETTE_PORT=str(port))
    outcome = match.result()
    check_clean(outcome, reasons=("target",))
