"""Rate limits for one engine replica: token buckets per key (a peer address, a token, a stream).

Each :class:`RateLimit` holds a bucket per key, refilled at ``rate`` per second
up to ``burst``; :meth:`RateLimit.take` spends one token or says how long to wait.
Buckets live in this replica's memory (limits are per replica) and the number of
keys is bounded: the least recently used bucket is forgotten first, so a flood
of new addresses cannot grow memory.

>>> limit = RateLimit(rate=1.0, burst=2, clock=iter([0.0, 0.0, 0.0, 1.5]).__next__)
>>> [limit.take("a") for _ in range(4)]
[0.0, 0.0, 1.0, 0.0]
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import NoReturn

import grpc


class RateLimit:
    def __init__(
        self, rate: float, burst: int, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)

    def take(self, key: str) -> float:
        """Spend one token of ``key``'s bucket: 0.0 if allowed, else the seconds until one is there."""
        now = self.clock()
        tokens, when = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - when) * self.rate)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return wait

    def forget(self, key: str) -> None:
        """Drop ``key``'s bucket (its stream has ended: a new one starts full anyway)."""
        self._buckets.pop(key, None)

    def __len__(self) -> int:
        return len(self._buckets)


def peer_address(peer: str) -> str:
    """The client's address without its port: ``ipv4:127.0.0.1:5555`` -> ``ipv4:127.0.0.1``.

    >>> peer_address("ipv6:[::1]:40000"), peer_address("ipv4:10.0.0.7:123"), peer_address("unix:/tmp/s")
    ('ipv6:[::1]', 'ipv4:10.0.0.7', 'unix:/tmp/s')
    """
    if peer.startswith(("ipv4:", "ipv6:")):
        return peer.rsplit(":", 1)[0]
    return peer


async def abort_busy(context: grpc.aio.ServicerContext, why: str, wait: float) -> NoReturn:
    """Refuse a call because a limit was reached: RESOURCE_EXHAUSTED, with the wait as a hint
    (trailing metadata ``retry-after-ms``) that every SDK honours."""
    ms = max(1, round(wait * 1000))
    context.set_trailing_metadata((("retry-after-ms", str(ms)),))
    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"{why}; retry in {ms} ms")
    raise AssertionError("unreachable")  # context.abort raises
