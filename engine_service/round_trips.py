"""A bot's round-trip time, as the arena measures it, and the latency credit it earns.

The replica sends each bot a ``Keepalive`` with a fresh random ``echo`` right
after its Welcome and then with every keepalive; the bot sends it back at once
(every SDK does). The time from the sending to the echo is one sample. The
estimate is the smallest of the last :data:`WINDOW` samples: a round trip can
only be measured too long (the echo waited behind a turn, a busy bot, a
retransmission), never too short, so the minimum is the closest to the
network's own share, and it follows a route that changes within a few
keepalives. A stream that has no echo yet starts from the estimate of the
bot's previous stream on this replica, if any (``earlier``): a bot that
reconnects mid-turn gets that turn again, long before its first echo is back.

What a bot can and cannot do to it:

- It cannot make its round trip look shorter than it is: an echo must carry
  the random value of a ping still outstanding (:data:`OUTSTANDING` at most),
  and echoes of anything else are ignored.
- It can make it look longer, by holding its echoes back, and so buy thinking
  time. That is why the credit is capped by the league
  (``--latency-credit-ms``): a bot gains at most the cap a turn, which an
  operator sets to the worst network they mean to excuse. A bot that never
  echoes gets no credit at all.
"""

from __future__ import annotations

import math
import secrets
from collections import OrderedDict, deque

WINDOW = 8
"""How many recent samples the estimate is the smallest of."""
OUTSTANDING = 4
"""Pings a bot may still echo (older ones are forgotten: their echoes are ignored)."""


class RoundTrips:
    """The pings sent on one bot stream and the round trips their echoes measured (monotonic seconds)."""

    __slots__ = ("_earlier", "_pings", "_samples")

    def __init__(self, earlier: float | None = None) -> None:
        """``earlier``: the bot's round trip as its previous stream here measured it, used until this one's
        first echo."""
        self._earlier = earlier
        self._pings: OrderedDict[int, float] = OrderedDict()
        self._samples: deque[float] = deque(maxlen=WINDOW)

    def ping(self, now: float) -> int:
        """A new ping sent at ``now``: the value its Keepalive carries in ``echo``."""
        echo = secrets.randbits(62) + 1  # never 0: 0 is a bot's own keepalive
        self._pings[echo] = now
        while len(self._pings) > OUTSTANDING:
            self._pings.popitem(last=False)
        return echo

    def echoed(self, echo: int, now: float) -> float | None:
        """The bot sent ``echo`` back at ``now``: the round trip it measured, or None if it was not a ping
        of ours still outstanding (guessed, repeated or too old)."""
        sent = self._pings.pop(echo, None)
        if sent is None:
            return None
        sample = max(now - sent, 0.0)
        self._samples.append(sample)
        return sample

    def estimate(self) -> float | None:
        """The bot's round trip in seconds (the smallest recent sample; before any, the earlier stream's
        estimate), or None if it has never echoed here."""
        return min(self._samples) if self._samples else self._earlier

    def credit_ms(self, cap_ms: int) -> int:
        """The latency credit for a turn: the estimate in whole milliseconds (rounded up), at most
        ``cap_ms``; 0 when the league gives none (``cap_ms`` 0) or the bot has never echoed."""
        rtt = self.estimate()
        if cap_ms <= 0 or rtt is None:
            return 0
        return min(cap_ms, math.ceil(rtt * 1000))
