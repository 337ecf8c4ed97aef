"""An engine replica's Prometheus series (served by :mod:`telemetry` when ``TABLANETTE_METRICS_PORT`` is set).

- ``tablanette_connected_bots``: bots with a live stream on this replica;
- ``tablanette_move_latency_seconds{bot}``: from a turn asked of a bot to its
  legal answer, for the turns it answered;
- ``tablanette_turns_total{bot,outcome}``: turns asked of bots here, by how they
  ended (``played``, ``timeout``, ``disconnected``);
- ``tablanette_round_trip_seconds{bot}``: the bot's round trip as this replica
  last estimated it (:mod:`engine_service.round_trips`), the latency credit it
  earns where a league gives one;
- ``tablanette_malformed_messages_total{rpc}``: messages that did not decode as
  their RPC's request, by RPC (refused with INVALID_ARGUMENT; logged in
  moderation by :mod:`engine_service.malformed`);
- ``tablanette_redis_errors_total`` (:mod:`telemetry`).

What a match made of those turns (timeouts charged, illegal plays, forfeits) is
the worker's to count (:mod:`worker.metrics`): a turn asked twice after a
handoff is one move.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Counter, Gauge, Histogram

from tablanette.v1 import dispatch_pb2 as dpb

CONNECTED = Gauge("tablanette_connected_bots", "Bots with a live stream on this engine replica")
MOVE_LATENCY = Histogram(
    "tablanette_move_latency_seconds",
    "From a turn asked of a bot to its legal answer (turns it answered)",
    ["bot"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
TURNS = Counter("tablanette_turns", "Turns asked of bots on this replica, by how they ended", ["bot", "outcome"])
ROUND_TRIP = Gauge(
    "tablanette_round_trip_seconds", "A bot's round trip as this replica last estimated it (keepalive echoes)", ["bot"]
)
MALFORMED = Counter(
    "tablanette_malformed_messages",
    "Messages that did not decode as their RPC's request (refused with INVALID_ARGUMENT), by RPC",
    ["rpc"],
)
_OUTCOMES = {
    dpb.PlayResponse.PLAYED: "played",
    dpb.PlayResponse.TIMEOUT: "timeout",
    dpb.PlayResponse.DISCONNECTED: "disconnected",
}


def count_connected(live: Callable[[], int]) -> None:
    """Read the number of connected bots from ``live`` at every scrape."""
    CONNECTED.set_function(live)


_PLAYED: dict[str, tuple[Counter, Histogram]] = {}
"""Each bot's ``played`` counter and latency histogram: found once, not by label on every move."""


def turn_ended(bot: str, outcome: dpb.PlayResponse.Outcome, seconds: float) -> None:
    """A turn asked of ``bot`` ended with ``outcome`` after ``seconds`` (this runs for every move)."""
    if outcome != dpb.PlayResponse.PLAYED:
        TURNS.labels(bot, _OUTCOMES.get(outcome, "other")).inc()
        return
    series = _PLAYED.get(bot)
    if series is None:
        series = _PLAYED[bot] = (TURNS.labels(bot, "played"), MOVE_LATENCY.labels(bot))
    series[0].inc()
    series[1].observe(seconds)


def round_trip(bot: str, seconds: float) -> None:
    """``bot``'s round-trip estimate is now ``seconds``."""
    ROUND_TRIP.labels(bot).set(seconds)


def malformed(rpc: str) -> None:
    """A message sent to ``rpc`` (a registered method: the label set is bounded) did not decode."""
    MALFORMED.labels(rpc).inc()
