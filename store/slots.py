"""Per-bot game slots: a bot plays at most ``max_games`` matches at once (from its Hello).

``Keys.slots(bot)`` is a sorted set of match ids scored by expiry time. A
worker takes one slot per seat before playing (all or none, in one Lua step),
renews them with its lease, and releases them at the end; a crashed worker's
slots expire by themselves. A bot that is not connected counts as allowing one
game at a time (the match runner then reports it unavailable).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import redis

from .keys import Keys
from .sessions import read_session

# KEYS: the bots' slot sets; ARGV: match id, expiry, now, then one limit per key.
_ACQUIRE = """
local mid, expiry, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if not redis.call('ZSCORE', key, mid) and redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then
    return 0
  end
end
for _, key in ipairs(KEYS) do redis.call('ZADD', key, expiry, mid) end
return 1
"""


class GameSlots:
    """The bots' game slots on one Redis client (the acquire script registered once)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self.keys = Keys(prefix)
        self._acquire = client.register_script(_ACQUIRE)

    def max_games(self, bot: str) -> int:
        """The bot's declared limit (1 when it is not connected or said nothing)."""
        entry = read_session(self.r, self.prefix, bot)
        return 1 if entry is None else max(1, entry.max_games)

    def acquire(self, bots: Sequence[str], match_id: str, ttl_ms: int) -> bool:
        """Take a slot for every bot of a match, or none of them."""
        names = sorted(set(bots))
        limits = [self.max_games(b) for b in names]
        now = time.time()
        keys = [self.keys.slots(b) for b in names]
        return bool(self._acquire(keys=keys, args=[match_id, now + ttl_ms / 1000, now, *limits]))

    def renew(self, bots: Sequence[str], match_id: str, ttl_ms: int) -> None:
        """Push the slots' expiry forward (with the lease renewal)."""
        expiry = time.time() + ttl_ms / 1000
        pipe = self.r.pipeline()
        for bot in set(bots):
            pipe.zadd(self.keys.slots(bot), {match_id: expiry}, xx=True)
        pipe.execute()

    def release(self, bots: Sequence[str], match_id: str) -> None:
        pipe = self.r.pipeline()
        for bot in set(bots):
            pipe.zrem(self.keys.slots(bot), match_id)
        pipe.execute()

    def playing(self, bot: str) -> int:
        """How many slots the bot holds now (expired ones included until the next acquire sweeps them)."""
        return int(self.r.zcard(self.keys.slots(bot)))
