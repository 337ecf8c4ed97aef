"""Redis clients for the arena's processes: long-lived ones ride out an outage, commands fail fast.

A scheduler, a worker or an engine replica must never need a person after a
Redis restart or pause: :func:`connect` (and :func:`connect_async`) with
``ride_out=True`` give a client whose every command, pipeline and script call
is retried by redis-py's own :class:`~redis.retry.Retry` (exponential back-off
with jitter, capped at 2 s) until Redis answers again, and which logs when
Redis went away and when it came back. Every command the arena sends is safe to
send twice (the Lua scripts are idempotent), so a retried command whose first
reply was lost does no harm.

A command-line call should rather say at once that Redis is unreachable:
``ride_out=False`` keeps redis-py's default of a few quick retries.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis
import redis.asyncio
import redis.asyncio.retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from telemetry import REDIS_ERRORS

log = logging.getLogger("tablanette.store")
T = TypeVar("T")
SOCKET_TIMEOUT = 5.0
"""Seconds without a reply before a command counts as failed (a paused Redis accepts but never answers)."""
BACKOFF = dict(cap=2.0, base=0.05)
LOG_EVERY = 10.0


_LOCK = threading.Lock()
_DOWN_SINCE: dict[str, float] = {}
_LOGGED: dict[str, float] = {}
"""Per Redis (not per connection: redis-py copies a Retry into every connection), when it went away."""
_ENDED = [0]


def _failed(what: str, error: Exception) -> None:
    """Count a failed try (``tablanette_redis_errors_total``); log an outage when it starts and every
    ``LOG_EVERY`` seconds while it lasts."""
    REDIS_ERRORS.inc()
    now = time.monotonic()
    with _LOCK:
        since = _DOWN_SINCE.setdefault(what, now)
        if now - _LOGGED.get(what, 0.0) >= LOG_EVERY:
            _LOGGED[what] = now
            log.warning("%s unreachable for %.0f s (%s); waiting for it", what, now - since, error)


def _answered(what: str) -> None:
    if what not in _DOWN_SINCE:  # the common case, without the lock
        return
    with _LOCK:
        since = _DOWN_SINCE.pop(what, None)
        _LOGGED.pop(what, None)
        _ENDED[0] += since is not None
    if since is not None:
        log.warning("%s is back after %.1f s", what, time.monotonic() - since)


def outages_ridden_out() -> int:
    """How many outages this process's ride-out clients have waited out so far (any Redis).

    A caller that keeps work in flight elsewhere (the scheduler's matches in the
    broker) compares it between passes: a change means something may have been
    lost with the outage.
    """
    return _ENDED[0]


class RideOutRetry(Retry):
    """redis-py's Retry, retrying forever and logging the outage."""

    def __init__(self, what: str) -> None:
        super().__init__(ExponentialWithJitterBackoff(**BACKOFF), retries=-1)
        self.what = what

    def call_with_retry(
        self,
        do: Callable[[], T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        def noting(error: Exception, *count: int) -> Any:
            _failed(self.what, error)
            return fail(error, *count)

        result = super().call_with_retry(do, noting, is_retryable, with_failure_count)
        _answered(self.what)
        return result


class AsyncRideOutRetry(redis.asyncio.retry.Retry):
    """The same for asyncio clients."""

    def __init__(self, what: str) -> None:
        super().__init__(ExponentialWithJitterBackoff(**BACKOFF), retries=-1)
        self.what = what

    async def call_with_retry(
        self,
        do: Callable[[], Awaitable[T]],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        async def noting(error: Exception, *count: int) -> Any:
            _failed(self.what, error)
            return await fail(error, *count)

        result = await super().call_with_retry(do, noting, is_retryable, with_failure_count)
        _answered(self.what)
        return result


def _where(url: str) -> str:
    return f"Redis at {url.rsplit('@', 1)[-1]}"  # never log a password


def connect(url: str, ride_out: bool = False) -> redis.Redis:
    """A blocking client; with ``ride_out`` its commands wait out any Redis outage."""
    if not ride_out:
        return redis.Redis.from_url(url, socket_timeout=SOCKET_TIMEOUT)
    return redis.Redis.from_url(
        url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=SOCKET_TIMEOUT, retry=RideOutRetry(_where(url))
    )


def connect_async(url: str, ride_out: bool = False, max_connections: int | None = None) -> redis.asyncio.Redis:
    """An asyncio client; with ``ride_out`` its commands wait out any Redis outage. With
    ``max_connections`` it keeps at most that many connections, and a command waits for a free
    one rather than failing (a burst of bots saying Hello at once)."""
    kwargs: dict[str, Any] = {"socket_timeout": SOCKET_TIMEOUT}
    if ride_out:
        kwargs.update(socket_connect_timeout=SOCKET_TIMEOUT, retry=AsyncRideOutRetry(_where(url)))
    if max_connections is None:
        return redis.asyncio.Redis.from_url(url, **kwargs)
    pool = redis.asyncio.BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=None, **kwargs)
    return redis.asyncio.Redis(connection_pool=pool)
