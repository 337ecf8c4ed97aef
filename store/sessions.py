"""The session registry: which engine replica holds which connected bot.

``Keys.session(bot)`` holds JSON ``{"replica", "session_id", "version",
"max_games"}`` with a TTL the holding replica keeps refreshing, so a crashed
replica's entries vanish by themselves. A newer connection overwrites the
entry; the replica that held the older one sees it is no longer the owner.
Refreshing and releasing are atomic and touch only the caller's own session:
a replica can never extend or delete an entry a newer session wrote.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.asyncio import Redis as AsyncRedis

from .codec import text
from .keys import Keys
from .tokens import VERSION_RE

# KEYS[1]: the session key. ARGV: session id. Delete the entry only if it still names this session.
_RELEASE = """
local raw = redis.call('GET', KEYS[1])
if raw and cjson.decode(raw)['session_id'] == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

# KEYS[1]: the session key. ARGV: session id, TTL (ms).
# 1: extended; 0: another session owns the entry now; -1: there is no entry (it expired or was released).
_REFRESH = """
local raw = redis.call('GET', KEYS[1])
if not raw then return -1 end
if cjson.decode(raw)['session_id'] ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""


@dataclass(frozen=True)
class SessionEntry:
    bot: str
    replica: str
    session_id: str
    version: str
    max_games: int

    @property
    def label(self) -> str:
        """``name@version``: the name alone when the bot gave no version, or when the name is a hosted
        version's (``bot@n`` already says which version it is; its program's own label would only blur it)."""
        return f"{self.bot}@{self.version}" if self.version and not VERSION_RE.match(self.bot) else self.bot

    def to_json(self) -> str:
        return json.dumps(
            {
                "replica": self.replica,
                "session_id": self.session_id,
                "version": self.version,
                "max_games": self.max_games,
            }
        )

    @classmethod
    def from_json(cls, bot: str, raw: str | bytes) -> SessionEntry:
        d: dict[str, Any] = json.loads(raw)
        return cls(bot, d["replica"], d["session_id"], d.get("version", ""), d.get("max_games", 1))


@dataclass
class Refreshed:
    """What :meth:`SessionRegistry.refresh` found."""

    taken_over: list[SessionEntry]
    missing: list[SessionEntry]


class SessionRegistry:
    """The registry for an engine replica or a match runner (asyncio client)."""

    def __init__(self, client: AsyncRedis, prefix: str, ttl_ms: int) -> None:
        self.r = client
        self.keys = Keys(prefix)
        self.ttl_ms = ttl_ms
        self._release = client.register_script(_RELEASE)
        self._refresh = client.register_script(_REFRESH)

    async def claim(self, entry: SessionEntry) -> None:
        """Register ``entry`` as the bot's live session (a newer session replaces an older one)."""
        await self.r.set(self.keys.session(entry.bot), entry.to_json(), px=self.ttl_ms)

    async def refresh(self, entries: Sequence[SessionEntry]) -> Refreshed:
        """Extend our own entries, in one round trip; never touches another session's entry.

        Returns the entries another session has taken over, and those that are
        gone (expired during a Redis outage, say): the caller claims those again
        if their connection is still live.
        """
        out = Refreshed([], [])
        if not entries:
            return out
        pipe = self.r.pipeline(transaction=False)
        for e in entries:
            await self._refresh(keys=[self.keys.session(e.bot)], args=[e.session_id, self.ttl_ms], client=pipe)
        for e, answer in zip(entries, await pipe.execute(), strict=True):
            if int(answer) == 0:
                out.taken_over.append(e)
            elif int(answer) < 0:
                out.missing.append(e)
        return out

    async def release(self, entry: SessionEntry) -> None:
        """Remove the bot's entry if it is still this session's."""
        await self._release(keys=[self.keys.session(entry.bot)], args=[entry.session_id])

    async def lookup(self, bot: str) -> SessionEntry | None:
        raw = await self.r.get(self.keys.session(bot))
        return None if raw is None else SessionEntry.from_json(bot, raw)


def read_session(client: redis.Redis, prefix: str, bot: str) -> SessionEntry | None:
    """The bot's live session, read with a blocking client (CLI, slots, tests)."""
    raw = client.get(Keys(prefix).session(bot))
    return None if raw is None else SessionEntry.from_json(bot, raw)


async def internal_secret(client: AsyncRedis, prefix: str) -> str:
    """The arena's shared secret for internal calls (created on first use)."""
    key = Keys(prefix).internal_secret
    await client.set(key, secrets.token_hex(24), nx=True)
    return text(await client.get(key))


def internal_secret_sync(client: redis.Redis, prefix: str) -> str:
    """:func:`internal_secret`, for a synchronous client (a bot host's CPU meter)."""
    key = Keys(prefix).internal_secret
    client.set(key, secrets.token_hex(24), nx=True)
    return text(client.get(key))
