"""How the SDK comes back: which refusals end a bot, how long it waits before trying again, and where.

A dropped connection is tried again after 0.25 s, doubling to at most 2 s, each
wait jittered by +-20% so bots dropped together do not return in lockstep; the
arena's own suggestion (``retry-after-ms``) and a few refusals
(:data:`WAIT_AT_LEAST`) set a floor. A bad token, a wrong name or a malformed
Hello (:data:`FATAL`) cannot be fixed by trying again: the bot stops with
:class:`BotRejected`. Used by :class:`bots.sdk.BotClient`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import grpc

FATAL = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT)
"""Statuses no retry can fix: the client stops with :class:`BotRejected`."""
WAIT_AT_LEAST = {grpc.StatusCode.ALREADY_EXISTS: 5.0, grpc.StatusCode.RESOURCE_EXHAUSTED: 1.0}
"""Seconds to wait, at the least, before trying again after these refusals (or the arena's retry-after-ms)."""
BACKOFF_START = 0.25
BACKOFF_MAX = 2.0
"""Seconds. The cap is well under the arena's grace period, so a bot whose replica
restarts (or who must move to another) is back before its games are forfeited."""
JITTER = 0.2


WELCOME_TIMEOUT = 3.0
"""Seconds to wait for a replica's Welcome before trying the next address."""
CHANNEL_OPTIONS = (
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.enable_retries", 0),
)
"""Every session's channel. gRPC's own retries are off: the client reconnects by itself (above),
and with them on (grpcio 1.85) a stream that meets a replica's shutdown GOAWAY while it starts
is parked for a transparent retry that never ends, and does not end when cancelled either:
the bot hung there for good, never trying again (tests/service/test_shutdown_goaway.py)."""


def parse_addresses(address: str | Sequence[str]) -> list[str]:
    """``host:port`` entries of a comma-separated list (or a sequence of them).

    >>> parse_addresses("a:1, b:2,,")
    ['a:1', 'b:2']
    """
    parts = address.split(",") if isinstance(address, str) else list(address)
    found = [p.strip() for p in parts if p.strip()]
    if not found:
        raise ValueError("no engine service address given")
    return found


def backoff_delays(start: float = BACKOFF_START, cap: float = BACKOFF_MAX) -> Iterator[float]:
    """The reconnect waits before jitter: ``start`` doubling to ``cap``.

    >>> from itertools import islice
    >>> list(islice(backoff_delays(), 6))
    [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    """
    delay = start
    while True:
        yield delay
        delay = min(delay * 2, cap)


def jittered(delay: float, rng: random.Random = random.Random()) -> float:  # noqa: B008
    """``delay`` +-20%, so bots dropped together do not return in lockstep."""
    return delay * (1 + rng.uniform(-JITTER, JITTER))


def retry_after(exc: grpc.RpcError) -> float:
    """The arena's suggested wait (trailing metadata ``retry-after-ms``), in seconds; 0 if none."""
    try:
        for key, value in exc.trailing_metadata() or ():
            if key == "retry-after-ms":
                return int(value) / 1000
    except (AttributeError, ValueError):
        pass
    return 0.0


class BotRejected(RuntimeError):
    """The arena refused this bot (bad token, wrong name, malformed hello)."""
