"""A standing ladder's fitted ratings over time: a point per bot each time its scheduler refits, bounded.

A standing ladder never ends, so a bot's fitted rating is not a number but a line: each time the scheduler
publishes its warm fit (:mod:`scheduler.standing_feed`), it records for each bot whose rating or interval
moved a :class:`Point`: when, how many results the league had, the rating and its 95% interval. The bot page
draws them (:func:`web.queries.bot_page`).

**Bounded.** A bot keeps at most :data:`MAX_POINTS` points, whatever how long the ladder runs: every one of its
last :data:`RECENT` points, and a sample of the older ones thinned to at most :data:`THINNED` (done when the
list passes its :func:`limit`, :data:`MAX_POINTS` less up to :data:`SPREAD` by a hash of the bot's name: at most
once every ``MAX_POINTS - SPREAD - RECENT - THINNED`` points, and bots that record together thin apart). Each
point carries the bot's own sequence number ``n`` (0 for its first); the older points kept are those with ``n``
divisible by the smallest power of two that leaves at most :data:`THINNED` of them. The strides nest, so the
sample stays evenly spaced over the bot's whole history (denser towards the recent end), and its first point is
always kept. A full line takes some 7 KB of Redis; ``bench/standing.py`` measures it, and the writes, at 10,000
bots.

**One round trip a refit.** :meth:`RatingHistory.record` writes every bot's point in one script call (the
league's keys share its hash tag, so the script is safe on a cluster too); a refit where nothing moved writes
nothing (:func:`worth_recording`).

In Redis each bot's points are a list (:meth:`store.keys.LeagueKeys.fitted_history`), oldest first, each
``n at results rating low high`` (``-`` for an interval end without bound).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis

from .codec import text
from .keys import Keys

MAX_POINTS = 200
"""A bot's points never outnumber this."""
RECENT = 50
"""Every one of a bot's last this many points is kept."""
THINNED = 100
"""The points older than the last :data:`RECENT` are thinned to at most this many."""
SPREAD = 25
"""A bot's line is thinned once longer than :data:`MAX_POINTS` less up to this many (:func:`limit`)."""
MOVE = 1.0
"""Elo: a point is recorded once the rating or an end of its interval moved this much since the last one..."""
EVERY = 3600.0
"""... or once this many seconds passed since it (so a bot's line reaches the present)."""

# KEYS: one bot's list each; ARGV: RECENT, THINNED, then per key its length limit and its point ("at results rating
# low high"). Each point gets the bot's next sequence number; a list past its limit keeps its last RECENT points and
# those older with n divisible by the smallest power of two leaving at most THINNED. Returns the lists thinned.
_RECORD = """
local recent, thinned = tonumber(ARGV[1]), tonumber(ARGV[2])
local function seq(point) return tonumber(string.match(point, '^%d+')) end
local done = 0
for i, key in ipairs(KEYS) do
  local last = redis.call('LINDEX', key, -1)
  local n = last and seq(last) + 1 or 0
  local len = redis.call('RPUSH', key, string.format('%d %s', n, ARGV[2 * i + 2]))
  if len > tonumber(ARGV[2 * i + 1]) then
    local old = redis.call('LRANGE', key, 0, len - recent - 1)
    local ns, twos = {}, {}  -- twos[j]: the old points whose number is divisible by 2^j and not 2^(j+1)
    for k, point in ipairs(old) do
      local m, j = seq(point), 0
      ns[k] = m
      if m == 0 then j = 64 end  -- the first point: divisible by every stride
      while m > 0 and m % 2 == 0 do m, j = m / 2, j + 1 end
      twos[j] = (twos[j] or 0) + 1
    end
    local s, kept = 0, #old
    while kept > thinned do kept, s = kept - (twos[s] or 0), s + 1 end
    local stride, front = 2 ^ s, {}
    for k = #old, 1, -1 do
      if ns[k] % stride == 0 then front[#front + 1] = old[k] end
    end
    redis.call('LTRIM', key, len - recent, -1)
    if #front > 0 then redis.call('LPUSH', key, unpack(front)) end
    done = done + 1
  end
end
return done
"""


@dataclass(frozen=True)
class Point:
    """A bot's fitted rating at one refit: when (unix seconds), over how many results, and its 95% interval
    (an end None: without bound)."""

    at: float
    results: int
    rating: float
    low: float | None
    high: float | None

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"a rating point needs a finite rating, not {self.rating}")
        if not math.isfinite(self.at) or self.at < 0 or self.results < 0:
            raise ValueError(f"a rating point needs a time and a number of results >= 0, not {self.at}, {self.results}")

    @classmethod
    def of(cls, at: float, results: int, rating: float, low: float, high: float) -> Point:
        """A point as the fit gives it, rounded as it is stored (0.1 Elo, whole seconds), an infinite end None."""
        low_end = round(low, 1) if math.isfinite(low) else None
        high_end = round(high, 1) if math.isfinite(high) else None
        return cls(float(round(at)), results, round(rating, 1), low_end, high_end)

    def encode(self) -> str:
        """``at results rating low high`` (the script puts the sequence number in front)."""
        ends = ("-" if x is None else f"{x:.1f}" for x in (self.low, self.high))
        return f"{self.at:.0f} {self.results} {self.rating:.1f} {' '.join(ends)}"

    @classmethod
    def decode(cls, raw: object) -> Point:
        """A stored point (``n at results rating low high``)."""
        fields = text(raw).split()
        if len(fields) != 6:
            raise ValueError(f"a stored rating point has 6 fields, not {text(raw)!r}")
        low, high = (None if x == "-" else float(x) for x in fields[4:])
        return cls(float(fields[1]), int(fields[2]), float(fields[3]), low, high)

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "results": self.results, "rating": self.rating, "interval": [self.low, self.high]}


def limit(bot: str) -> int:
    """The length past which the bot's line is thinned: :data:`MAX_POINTS` less up to :data:`SPREAD` by a hash of
    its name, so bots that record at every refit (a small ladder) do not all thin at the same refit.

    >>> MAX_POINTS - SPREAD <= limit("ann") <= MAX_POINTS
    True
    """
    return MAX_POINTS - zlib.crc32(bot.encode()) % (SPREAD + 1)


def worth_recording(last: Point | None, new: Point) -> bool:
    """Whether ``new`` says something ``last`` (the bot's last point recorded) did not: the bot's first, or its
    rating or an interval end moved by :data:`MOVE` Elo, or :data:`EVERY` seconds passed."""
    if last is None or new.at - last.at >= EVERY:
        return True
    for before, now in ((last.rating, new.rating), (last.low, new.low), (last.high, new.high)):
        if (before is None) != (now is None) or (before is not None and now is not None and abs(now - before) >= MOVE):
            return True
    return False


class RatingHistory:
    """The fitted-rating points of the standing ladders under one prefix (the script registered once)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.keys = Keys(prefix)
        self._record = client.register_script(_RECORD)

    def record(self, league_id: str, points: Mapping[str, Point]) -> int:
        """Append each bot's point to its line, thinning a line past :data:`MAX_POINTS`, in one round trip (one
        script call, atomic); how many lines it thinned."""
        if not points:
            return 0
        if bad := [bot for bot in points if not bot or bot != bot.strip()]:
            raise ValueError(f"a rating point needs a bot's name, not {bad[0]!r}")
        keys = self.keys.league(league_id)
        names = list(points)
        args: list[str | int] = [RECENT, THINNED]
        for bot in names:
            args += [limit(bot), points[bot].encode()]
        return int(self._record(keys=[keys.fitted_history(b) for b in names], args=args))

    def of(self, league_id: str, bot: str) -> list[Point]:
        """The bot's points, oldest first (none if it has none)."""
        return [Point.decode(p) for p in self.r.lrange(self.keys.league(league_id).fitted_history(bot), 0, -1)]

    def last(self, league_id: str, bots: list[str]) -> dict[str, Point]:
        """Each bot's last point, for those that have one (one pipelined read)."""
        keys = self.keys.league(league_id)
        pipe = self.r.pipeline(transaction=False)
        for bot in bots:
            pipe.lindex(keys.fitted_history(bot), -1)
        return {bot: Point.decode(raw) for bot, raw in zip(bots, pipe.execute(), strict=True) if raw is not None}
