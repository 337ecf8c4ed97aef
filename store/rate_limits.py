"""Attempt limits with back-off, in Redis: how the front door stops guessing and floods.

Two shapes, both keyed by what is limited (an address, an account):

- :meth:`AttemptLimits.spend`: at most ``limit`` attempts a ``window`` (sign-ups, logins per address);
- :meth:`AttemptLimits.failed` / :meth:`AttemptLimits.locked_for`: after ``free`` failures in a row, each
  further failure locks the key for twice as long as the last (1 s, 2 s, 4 s ... at most :data:`MAX_LOCK`);
  a success (:meth:`AttemptLimits.clear`) forgets them.

Every count expires by itself, so nothing here needs cleaning. A refusal is :class:`Limited`, which says
when to try again (the web answers 429 with ``Retry-After``).
"""

from __future__ import annotations

import math
import time

import redis

from .codec import text
from .keys import Keys

MAX_LOCK = 900.0
"""Seconds: the longest one failure more can lock an account or an address."""
FAILURES_KEPT = 86_400
"""Seconds a run of failures is remembered after the last one."""


class Limited(Exception):
    """Too many attempts: ``retry_after`` seconds until the next is considered."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(1, math.ceil(retry_after))


class AttemptLimits:
    """Counters under :meth:`store.keys.Keys.limit` (``who`` is an address or an account name)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix

    def _key(self, kind: str, who: str) -> str:
        return Keys(self.prefix).limit(kind, who)

    def spend(self, kind: str, who: str, limit: int, window: float, what: str) -> None:
        """Count one attempt of ``kind`` by ``who``; :class:`Limited` once more than ``limit`` fall in a window."""
        key = self._key(kind, who)
        pipe = self.r.pipeline()
        pipe.incr(key)
        pipe.pttl(key)
        count, ttl_ms = pipe.execute()
        if ttl_ms < 0:  # the window starts with its first attempt
            self.r.pexpire(key, int(window * 1000))
            ttl_ms = int(window * 1000)
        if int(count) > limit:
            raise Limited(f"too many {what} from here: try again in {math.ceil(ttl_ms / 1000)} s", ttl_ms / 1000)

    def refund(self, kind: str, who: str) -> None:
        """Give back one attempt :meth:`spend` counted (one whose action was refused, and so did nothing)."""
        key = self._key(kind, who)
        if int(self.r.decr(key)) <= 0:
            self.r.delete(key)

    def locked_for(self, kind: str, who: str) -> float:
        """Seconds ``who`` must still wait after its failures (0: may try now)."""
        raw = self.r.get(self._key(kind + "-until", who))
        return 0.0 if raw is None else max(0.0, float(text(raw)) - time.time())

    def failed(self, kind: str, who: str, free: int) -> float:
        """Count one failure; the seconds of lock it earns (0 within the ``free`` ones)."""
        pipe = self.r.pipeline()
        pipe.incr(self._key(kind, who))
        pipe.expire(self._key(kind, who), FAILURES_KEPT)
        count = int(pipe.execute()[0])
        if count <= free:
            return 0.0
        lock = min(MAX_LOCK, 2.0 ** (count - free - 1))
        self.r.set(self._key(kind + "-until", who), repr(time.time() + lock), ex=int(lock) + 1)
        return lock

    def clear(self, kind: str, who: str) -> None:
        self.r.delete(self._key(kind, who), self._key(kind + "-until", who))
