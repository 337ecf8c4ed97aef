"""A running match's lease: one runner at a time, renewed while it plays.

The lease is a redis-py :class:`~redis.lock.Lock` on ``LeagueKeys.lease(match)``
(``SET NX PX`` to take it, compare-and-expire to renew, compare-and-delete to
release). Its token names the runner (``worker/random``) and *fences* the
commit: :meth:`store.ledger.Ledger.commit` refuses a runner whose token no
longer holds the lease, so two runners can never both commit one match.

:meth:`MatchLease.kept` renews the lease in a background thread (at a third of
its time to live) and calls ``also`` each time (the bots' game slots ride on
it). When the lease is lost (it expired while the runner was paused or Redis
was away, and maybe another runner took it) :attr:`MatchLease.lost` is set and
the callbacks given to :meth:`MatchLease.on_lost` run: the runner stops the
match at once instead of playing on beside the new holder.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator

import redis
from redis.exceptions import LockError, LockNotOwnedError

from .keys import LeagueKeys

log = logging.getLogger("tablanette.store.leases")


class MatchLease:
    """The lease of one match for one runner."""

    def __init__(self, client: redis.Redis, keys: LeagueKeys, match_id: str, ttl_ms: int, owner: str) -> None:
        self.ttl_ms = ttl_ms
        self.token = f"{owner}/{secrets.token_hex(4)}"
        self.lock = client.lock(keys.lease(match_id), timeout=ttl_ms / 1000, blocking=False, thread_local=False)
        self.lost = threading.Event()
        self._on_lost: list[Callable[[], None]] = []
        self._callbacks = threading.Lock()

    @property
    def name(self) -> str:
        return str(self.lock.name)

    def acquire(self) -> bool:
        """Take the lease if nobody holds it (True again if this runner already holds it)."""
        if self.lock.acquire(token=self.token):
            return True
        if self.lock.redis.get(self.lock.name) == self.token.encode():  # a retried SET whose reply was lost
            self.lock.local.token = self.token.encode()
            return True
        return False

    def on_lost(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (from the renewing thread) when the lease is lost; at once if it already is."""
        with self._callbacks:
            if not self.lost.is_set():
                self._on_lost.append(callback)
                return
        callback()

    def _lose(self, why: str) -> None:
        log.error("lost the lease %s: %s", self.name, why)
        with self._callbacks:
            self.lost.set()
            callbacks, self._on_lost = self._on_lost, []
        for callback in callbacks:
            callback()

    def renew(self) -> bool:
        """Reset the lease's time to live; False if another runner holds it now (or nobody does)."""
        try:
            return bool(self.lock.reacquire())
        except LockNotOwnedError:
            return False

    def release(self) -> None:
        """Give the lease up, if it is still ours (never deletes another runner's)."""
        with contextlib.suppress(LockError, redis.RedisError):
            self.lock.release()

    @contextlib.contextmanager
    def kept(self, also: Callable[[], None] = lambda: None) -> Iterator[MatchLease]:
        """Renew the lease (and run ``also``) in the background until the block ends."""
        stop = threading.Event()
        thread = threading.Thread(target=self._keep, args=(stop, also), daemon=True, name=f"lease {self.name}")
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join(timeout=5)

    def _keep(self, stop: threading.Event, also: Callable[[], None]) -> None:
        renewed = time.monotonic()
        while not stop.wait(self.ttl_ms / 3000):
            try:
                if not self.renew():
                    self._lose("it expired (this runner was held up) and is gone or another runner's now")
                    return
                also()
                renewed = time.monotonic()
            except redis.RedisError as exc:  # a client that does not ride out outages
                if time.monotonic() - renewed >= self.ttl_ms / 1000:
                    self._lose(f"Redis unreachable past its time to live ({exc})")
                    return
                log.warning("cannot renew the lease %s yet: %s", self.name, exc)
