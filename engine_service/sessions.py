"""The session registry in Redis: which replica holds which connected bot.

``<prefix>:session:<bot>`` holds JSON ``{"replica", "session_id", "version",
"max_games", "since"}`` with a TTL the holding replica keeps refreshing, so a
crashed replica's entries vanish by themselves. A newer connection overwrites
the entry; the replica that held the older one sees it is no longer the owner.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

# Delete the entry only if it still names this session (a newer one may own it).
_RELEASE = """
local raw = redis.call('GET', KEYS[1])
if raw and cjson.decode(raw)['session_id'] == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def session_key(prefix: str, bot: str) -> str:
    """Where a bot's session entry lives."""
    return f"{prefix}:session:{bot}"


@dataclass(frozen=True)
class SessionEntry:
    bot: str
    replica: str
    session_id: str
    version: str
    max_games: int

    @property
    def label(self) -> str:
        return f"{self.bot}@{self.version}" if self.version else self.bot

    @classmethod
    def from_json(cls, bot: str, raw: str | bytes) -> SessionEntry:
        d: dict[str, Any] = json.loads(raw)
        return cls(bot, d["replica"], d["session_id"], d.get("version", ""), d.get("max_games", 1))


class SessionRegistry:
    def __init__(self, client: Redis, prefix: str, ttl_ms: int) -> None:
        self.r = client
        self.prefix = prefix
        self.ttl_ms = ttl_ms

    def _key(self, bot: str) -> str:
        return session_key(self.prefix, bot)

    async def claim(self, entry: SessionEntry) -> None:
        data = {
            "replica": entry.replica,
            "session_id": entry.session_id,
            "version": entry.version,
            "max_games": entry.max_games,
        }
        await self.r.set(self._key(entry.bot), json.dumps(data), px=self.ttl_ms)

    async def refresh(self, entries: list[SessionEntry]) -> list[SessionEntry]:
        """Extend our entries; return the ones another session has taken over."""
        lost = []
        for e in entries:
            current = await self.lookup(e.bot)
            if current is not None and current.session_id != e.session_id:
                lost.append(e)
            else:
                await self.claim(e)
        return lost

    async def release(self, entry: SessionEntry) -> None:
        await self.r.eval(_RELEASE, 1, self._key(entry.bot), entry.session_id)

    async def lookup(self, bot: str) -> SessionEntry | None:
        raw = await self.r.get(self._key(bot))
        return None if raw is None else SessionEntry.from_json(bot, raw)


async def internal_secret(client: Redis, prefix: str) -> str:
    """The arena's shared secret for internal calls (created on first use)."""
    key = f"{prefix}:internal-secret"
    await client.set(key, secrets.token_hex(24), nx=True)
    value = await client.get(key)
    return value.decode() if isinstance(value, bytes) else str(value)
