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

With Sentinel (``TABLANETTE_REDIS_SENTINELS``; the settings then give every
process a ``redis+sentinel://[:password@]host:port,.../master/db`` URL), a
client asks the Sentinels where the primary is before each new connection
(redis-py's :class:`~redis.sentinel.Sentinel`): when the primary dies and the
Sentinels promote a replica, a ride-out client's commands fail over the
outage (the Sentinels say "no master" until the promotion) and then reach the
new primary, with no one restarting or re-pointing the process. The first
client a process makes for such a URL checks the Sentinels once
(:func:`check_sentinels`): none reachable, or none that knows the master's
name, is a :class:`SentinelError` at once, never a wait.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote

import redis
import redis.asyncio
import redis.asyncio.connection
import redis.asyncio.retry
import redis.asyncio.sentinel
import redis.connection
import redis.sentinel
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


SENTINEL_TIMEOUT = 1.0
"""Seconds to reach one Sentinel (or wait for its answer) before trying the next."""
SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")


class SentinelError(redis.ConnectionError):
    """The Sentinels a process was given cannot lead it to a primary: none answers, or none knows the name."""


@dataclass(frozen=True)
class SentinelTarget:
    """What a ``redis+sentinel://`` URL names: the Sentinels, the master's name, and the primary's db and password."""

    sentinels: tuple[tuple[str, int], ...]
    master: str
    db: int
    username: str | None
    password: str | None
    ssl: bool
    sentinel_password: str | None = None
    """The Sentinels' own password (``?sentinel_password=``), if they ask for one."""

    @property
    def where(self) -> str:
        return f"Redis master {self.master!r} of the Sentinels at {', '.join(f'{h}:{p}' for h, p in self.sentinels)}"


def sentinel_target(url: str) -> SentinelTarget | None:
    """The Sentinels a URL names, or None for a plain ``redis://`` URL.

    >>> t = sentinel_target("redis+sentinel://:pw@h1:26379,h2:26380/arena/2")
    >>> t.sentinels, t.master, t.db, t.password
    ((('h1', 26379), ('h2', 26380)), 'arena', 2, 'pw')
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in SENTINEL_SCHEMES:
        return None
    netloc, _, path = rest.partition("/")
    path, _, query = path.partition("?")
    asked = parse_qs(query).get("sentinel_password")
    auth, _, hosts = netloc.rpartition("@")
    user, _, password = auth.partition(":") if auth else ("", "", "")
    master, _, db = path.strip("/").partition("/")
    sentinels = []
    for address in hosts.split(","):
        host, _, port = address.strip().rpartition(":")
        if not host or not port.isdigit():
            raise SentinelError(f"{address!r} in {redacted(url)} is not a Sentinel's host:port")
        sentinels.append((host.strip("[]"), int(port)))
    if not master or not (db or "0").isdigit():
        raise SentinelError(f"{redacted(url)} names no master (redis+sentinel://host:port,.../master/db)")
    return SentinelTarget(
        tuple(sentinels),
        master,
        int(db or 0),
        unquote(user) or None,
        unquote(password) or None,
        scheme.startswith("rediss"),
        asked[0] if asked else None,
    )


_CHECKED: set[str] = set()


def check_sentinels(url: str) -> None:
    """Raise :class:`SentinelError` unless some Sentinel of ``url`` answers and knows its master's name.

    A primary the Sentinels hold down now is no error (a client waits for the failover);
    checked once per process and URL.
    """
    target = sentinel_target(url)
    if target is None or url in _CHECKED:
        return
    errors, strangers = [], []
    for host, port in target.sentinels:
        client = redis.Redis(
            host,
            port,
            password=target.sentinel_password,
            socket_timeout=SENTINEL_TIMEOUT,
            socket_connect_timeout=SENTINEL_TIMEOUT,
        )
        try:
            masters: dict[str, Any] = client.sentinel_masters()  # type: ignore[assignment]
        except redis.RedisError as exc:
            errors.append(f"{host}:{port} ({_sentinel_trouble(exc, target)})")
            continue
        finally:
            client.close()
        if target.master in masters:
            with _LOCK:
                _CHECKED.add(url)
            return
        strangers.append(f"{host}:{port} (knows {', '.join(sorted(masters)) or 'no master'})")
    if strangers:
        raise SentinelError(
            f"no Sentinel knows a master named {target.master!r} (TABLANETTE_REDIS_MASTER): "
            + "; ".join(strangers + errors)
        )
    raise SentinelError(f"no Sentinel reachable (TABLANETTE_REDIS_SENTINELS): {'; '.join(errors)}")


def _sentinel_trouble(exc: redis.RedisError, target: SentinelTarget) -> str:
    """Why a Sentinel did not answer, in the operator's words where Redis's are obscure (its password)."""
    said = str(exc)
    if "WRONGPASS" in said or "invalid username-password" in said:
        return "it refused the password TABLANETTE_REDIS_SENTINEL_PASSWORD gives"
    if (
        isinstance(exc, redis.AuthenticationError)
        or "NOAUTH" in said
        or "must be called with the client already" in said
    ):
        given = "refused the password given" if target.sentinel_password else "asks for a password"
        return f"it {given}: set TABLANETTE_REDIS_SENTINEL_PASSWORD to the Sentinels' requirepass"
    return said


def _sentinel_kwargs(target: SentinelTarget) -> dict[str, Any]:
    return {
        "min_other_sentinels": 0,
        "sentinel_kwargs": {
            "socket_timeout": SENTINEL_TIMEOUT,
            "socket_connect_timeout": SENTINEL_TIMEOUT,
            "password": target.sentinel_password,
        },
        "db": target.db,
        "username": target.username,
        "password": target.password,
    }


class _FollowingConnection(redis.sentinel.SentinelManagedConnection):
    """A Sentinel-managed connection that asks the Sentinels again on every reconnect.

    redis-py reconnects a connection that broke under a command straight to the address
    it had (``send_packed_command`` bypasses the Sentinel lookup), so a retried command
    would knock on a dead primary forever; here it asks where the primary is now.
    """

    def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
        if not self._sock and retry_socket_connect:  # not from connect_to, which has just asked
            self.host, self.port = self.connection_pool.get_master_address()
            retry_socket_connect = False  # a refused connect goes back to the client's retry, which asks again
        super().connect_check_health(check_health, retry_socket_connect)


class _AsyncFollowingConnection(redis.asyncio.sentinel.SentinelManagedConnection):
    """:class:`_FollowingConnection` for asyncio clients."""

    async def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
        if not self._reader and retry_socket_connect:
            self.host, self.port = await self.connection_pool.get_master_address()
            retry_socket_connect = False
        await super().connect_check_health(check_health, retry_socket_connect)


class _FollowingSSLConnection(_FollowingConnection, redis.connection.SSLConnection):
    """:class:`_FollowingConnection` over TLS (``rediss+sentinel://``)."""


class _AsyncFollowingSSLConnection(_AsyncFollowingConnection, redis.asyncio.connection.SSLConnection):
    """:class:`_AsyncFollowingConnection` over TLS."""


class _BlockingSentinelPool(redis.asyncio.sentinel.SentinelConnectionPool, redis.asyncio.BlockingConnectionPool):
    """A Sentinel pool that waits for a free connection rather than failing (see :func:`connect_async`)."""


def redacted(url: str) -> str:
    """The URL without its passwords (the user's, and the Sentinels' in the query): what a log may show.

    >>> redacted("redis+sentinel://:pw@h1:26379,h2:26379/arena/0?sentinel_password=s")
    'redis+sentinel://h1:26379,h2:26379/arena/0'
    >>> redacted("redis://user:pw@localhost:6379/2")
    'redis://localhost:6379/2'
    """
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.rsplit('@', 1)[-1].partition('?')[0]}"


def _where(url: str) -> str:
    target = sentinel_target(url)
    return target.where if target else f"Redis at {url.rsplit('@', 1)[-1]}"  # never log a password


def connect(url: str, ride_out: bool = False, timeout: float | None = None) -> redis.Redis:
    """A blocking client; with ``ride_out`` its commands wait out any Redis outage (a failover too).

    ``timeout``: seconds to connect or to wait for a reply, for a caller that must not wait
    (a metrics scrape); by default :data:`SOCKET_TIMEOUT`.
    """
    wait = SOCKET_TIMEOUT if timeout is None else timeout
    kwargs: dict[str, Any] = {"socket_timeout": wait}
    if ride_out or timeout is not None:
        kwargs["socket_connect_timeout"] = wait
    if ride_out:
        kwargs["retry"] = RideOutRetry(_where(url))
    target = sentinel_target(url)
    if target is None:
        return redis.Redis.from_url(url, **kwargs)
    check_sentinels(url)
    # redis-py 8.1 leaves its Sentinel calls untyped and 8.2 types them: the ignores hold for both
    sentinel = redis.sentinel.Sentinel(target.sentinels, **_sentinel_kwargs(target))  # type: ignore[no-untyped-call, unused-ignore]
    kind = _FollowingSSLConnection if target.ssl else _FollowingConnection
    client: redis.Redis = sentinel.master_for(target.master, connection_class=kind, **kwargs)  # type: ignore[no-untyped-call, unused-ignore]
    return client


def connect_async(url: str, ride_out: bool = False, max_connections: int | None = None) -> redis.asyncio.Redis:
    """An asyncio client; with ``ride_out`` its commands wait out any Redis outage. With
    ``max_connections`` it keeps at most that many connections, and a command waits for a free
    one rather than failing (a burst of bots saying Hello at once)."""
    kwargs: dict[str, Any] = {"socket_timeout": SOCKET_TIMEOUT}
    if ride_out:
        kwargs.update(socket_connect_timeout=SOCKET_TIMEOUT, retry=AsyncRideOutRetry(_where(url)))
    target = sentinel_target(url)
    if target is not None:
        check_sentinels(url)
        sentinel = redis.asyncio.sentinel.Sentinel(target.sentinels, **_sentinel_kwargs(target))  # type: ignore[no-untyped-call, unused-ignore]
        if max_connections is not None:  # a burst waits for a free connection, as below
            kwargs.update(max_connections=max_connections, timeout=None)
        kind = _BlockingSentinelPool if max_connections is not None else redis.asyncio.sentinel.SentinelConnectionPool
        aclient: redis.asyncio.Redis = sentinel.master_for(
            target.master,
            connection_pool_class=kind,
            connection_class=_AsyncFollowingSSLConnection if target.ssl else _AsyncFollowingConnection,
            **kwargs,
        )
        return aclient
    if max_connections is None:
        return redis.asyncio.Redis.from_url(url, **kwargs)
    pool = redis.asyncio.BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=None, **kwargs)
    return redis.asyncio.Redis(connection_pool=pool)


def async_twin(client: redis.Redis) -> redis.asyncio.Redis:
    """An asyncio client of the server ``client`` talks to (a plain one: a Sentinel-managed arena passes
    :func:`connect_async` of its URL instead)."""
    kw = client.connection_pool.connection_kwargs
    keep = {k: kw[k] for k in ("host", "port", "db", "username", "password", "socket_timeout") if k in kw}
    if "path" in kw:
        return redis.asyncio.Redis(unix_socket_path=kw["path"], **keep)
    return redis.asyncio.Redis(**keep)
