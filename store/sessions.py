"""The session registry: which engine replica holds which connected bot.

``Keys.session(bot)`` holds JSON ``{"replica", "session_id", "version",
"max_games"}`` with a TTL the holding replica keeps refreshing, so a crashed
replica's entries vanish by themselves. A claim is a compare-and-set: it
writes the entry only if there is none, or if the entry is the session the
claiming Hello was judged to replace (so of two replicas admitting the same bot
at once, exactly one wins); the replica that held a replaced session sees at
its next refresh that it is no longer the owner. Refreshing and releasing are
atomic and touch only the caller's own session: a replica can never extend or
delete an entry a newer session wrote.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import redis
from redis.asyncio import Redis as AsyncRedis

from .codec import text
from .keys import Keys
from .tokens import VERSION_RE

# KEYS[1]: the session key. ARGV: the entry (JSON), TTL (ms), the session id it may replace ('' for none), its own
# session id. Write the entry if there is none, or the one there is the session to replace, or this very session
# (a claim sent twice); '' when written, else the session id that holds the bot.
_CLAIM = """
local raw = redis.call('GET', KEYS[1])
if raw then
  local held = cjson.decode(raw)['session_id']
  if held ~= ARGV[3] and held ~= ARGV[4] then return held end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''
"""

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


class Sessions(Protocol):
    """Where bots' live sessions are registered: in Redis for the arena (:class:`SessionRegistry`), or in
    one process's memory for an engine with no Redis (:class:`LocalSessions`: ``tablanette match``)."""

    async def claim(self, entry: SessionEntry, replaces: str | None = None) -> str | None: ...

    async def refresh(self, entries: Sequence[SessionEntry]) -> Refreshed: ...

    async def release(self, entry: SessionEntry) -> None: ...

    async def lookup(self, bot: str) -> SessionEntry | None: ...


class LocalSessions:
    """The sessions of one engine in one process, in its memory, by the same compare-and-set rules as
    :class:`SessionRegistry` (a claim wins if the bot has no session or its session is the one replaced).
    Nothing expires: the process is the sessions' whole world, and a session ends when it is released."""

    def __init__(self) -> None:
        self.entries: dict[str, SessionEntry] = {}

    async def claim(self, entry: SessionEntry, replaces: str | None = None) -> str | None:
        held = self.entries.get(entry.bot)
        if held is not None and held.session_id not in (replaces, entry.session_id):
            return held.session_id
        self.entries[entry.bot] = entry
        return None

    async def refresh(self, entries: Sequence[SessionEntry]) -> Refreshed:
        out = Refreshed([], [])
        for e in entries:
            held = self.entries.get(e.bot)
            if held is None:
                out.missing.append(e)
            elif held.session_id != e.session_id:
                out.taken_over.append(e)
        return out

    async def release(self, entry: SessionEntry) -> None:
        held = self.entries.get(entry.bot)
        if held is not None and held.session_id == entry.session_id:
            del self.entries[entry.bot]

    async def lookup(self, bot: str) -> SessionEntry | None:
        return self.entries.get(bot)


class SessionRegistry:
    """The registry for an engine replica or a match runner (asyncio client)."""

    def __init__(self, client: AsyncRedis, prefix: str, ttl_ms: int) -> None:
        self.r = client
        self.keys = Keys(prefix)
        self.ttl_ms = ttl_ms
        self._claim = client.register_script(_CLAIM)
        self._release = client.register_script(_RELEASE)
        self._refresh = client.register_script(_REFRESH)

    async def claim(self, entry: SessionEntry, replaces: str | None = None) -> str | None:
        """Register ``entry`` as the bot's live session, if the bot has none or its session is ``replaces``
        (or ``entry`` itself): None when registered, else the id of the session that holds the bot."""
        args: list[str | int] = [entry.to_json(), self.ttl_ms, replaces or "", entry.session_id]
        held = text(await self._claim(keys=[self.keys.session(entry.bot)], args=args))
        return held or None

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
