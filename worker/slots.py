"""Per-bot game slots: a bot plays at most ``max_games`` matches at once (from its Hello).

``<prefix>:slots:<bot>`` is a sorted set of match ids scored by expiry time. A
worker takes one slot per seat before playing (all or none, in one Lua step),
renews them with its lease, and releases them at the end; a crashed worker's
slots expire by themselves. A bot that is not connected has no limit to apply
here: the match runner reports it unavailable instead.
"""

from __future__ import annotations

import time

import redis
from redis.asyncio import Redis as AsyncRedis

from engine_service.sessions import SessionEntry, session_key

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


def _key(prefix: str, bot: str) -> str:
    return f"{prefix}:slots:{bot}"


def max_games(client: redis.Redis, prefix: str, bot: str) -> int:
    """The bot's declared limit (1 when it is not connected or said nothing)."""
    raw = client.get(session_key(prefix, bot))
    return 1 if raw is None else max(1, SessionEntry.from_json(bot, raw).max_games)


def acquire(client: redis.Redis, prefix: str, bots: list[str], match_id: str, ttl_ms: int) -> bool:
    """Take a slot for every bot of a match, or none of them."""
    names = sorted(set(bots))
    limits = [max_games(client, prefix, b) for b in names]
    now = time.time()
    keys = [_key(prefix, b) for b in names]
    return bool(client.eval(_ACQUIRE, len(keys), *keys, match_id, now + ttl_ms / 1000, now, *limits))


async def renew(client: AsyncRedis, prefix: str, bots: list[str], match_id: str, ttl_ms: int) -> None:
    """Push the slots' expiry forward (called with the lease renewal)."""
    expiry = time.time() + ttl_ms / 1000
    pipe = client.pipeline()
    for bot in set(bots):
        pipe.zadd(_key(prefix, bot), {match_id: expiry}, xx=True)
    await pipe.execute()


def release(client: redis.Redis, prefix: str, bots: list[str], match_id: str) -> None:
    pipe = client.pipeline()
    for bot in set(bots):
        pipe.zrem(_key(prefix, bot), match_id)
    pipe.execute()
