"""Bot tokens: issued once, stored only as SHA-256 hashes in Redis.

Keys (:class:`store.keys.Keys`): ``bots`` (hash name -> JSON metadata),
``bot-token`` (hash name -> the live token's hash), ``token:<sha256>`` (-> bot
name). A revoked bot keeps its metadata (for the ladder) but loses its token.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis
from redis.asyncio import Redis as AsyncRedis

from .audit import AuditLog
from .codec import text
from .keys import Keys

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
VERSION_RE = re.compile(r"^(?P<bot>[A-Za-z0-9][A-Za-z0-9_.-]{0,63})@(?P<number>[1-9][0-9]{0,5})$")
"""A hosted bot's version, ``bot@n`` (:mod:`store.versions`): a bot name of its own, whose token its host holds."""


class TokenError(ValueError):
    """A bad bot name, an existing bot, or an unknown bot."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class BotInfo:
    name: str
    created: float
    revoked: bool
    token_prefix: str

    @classmethod
    def from_json(cls, name: str, raw: str | bytes) -> BotInfo:
        d = json.loads(raw)
        return cls(name, d["created"], d.get("revoked", False), d.get("token_prefix", ""))


class BotTokens:
    """The token store with a blocking client (CLI and tests); the server uses :func:`lookup_token`."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.keys = Keys(prefix)

    def add(self, name: str) -> str:
        """Register ``name`` and return its new token (shown once, never stored)."""
        if not NAME_RE.match(name) and not VERSION_RE.match(name):
            raise TokenError(f"bot name {name!r} must be 1-64 letters, digits, '_', '.' or '-'")
        existing = self.r.hget(self.keys.bots, name)
        if existing is not None and not BotInfo.from_json(name, existing).revoked:
            raise TokenError(f"bot {name!r} already exists; revoke it first to issue a new token")
        token = "tbl_" + secrets.token_urlsafe(32)
        meta = {"created": time.time(), "revoked": False, "token_prefix": token[:8]}
        pipe = self.r.pipeline()
        pipe.hset(self.keys.bots, name, json.dumps(meta))
        pipe.set(self.keys.token(token_hash(token)), name)
        pipe.hset(self.keys.bot_token, name, token_hash(token))
        pipe.execute()
        AuditLog(self.r, self.keys.prefix).record("token_issued", bot=name, token_prefix=token[:8])
        return token

    def revoke(self, name: str) -> None:
        """Revoke the bot's token: it cannot connect any more, and its live sessions are closed."""
        raw = self.r.hget(self.keys.bots, name)
        if raw is None:
            raise TokenError(f"no bot named {name!r}")
        meta: dict[str, Any] = json.loads(raw)
        meta["revoked"] = True
        digest = self.r.hget(self.keys.bot_token, name)
        pipe = self.r.pipeline()
        if digest is not None:
            pipe.delete(self.keys.token(text(digest)))
        pipe.hdel(self.keys.bot_token, name)
        pipe.hset(self.keys.bots, name, json.dumps(meta))
        pipe.publish(self.keys.events, json.dumps({"revoked": name}))  # live sessions end at once
        pipe.execute()
        AuditLog(self.r, self.keys.prefix).record("revoked", bot=name, token_prefix=meta.get("token_prefix", ""))

    def reissue(self, name: str) -> str:
        """A new token for ``name``, revoking the old one first if it has one (a hosted version's host
        does this each time it starts running the version: it holds the only copy)."""
        info = self.info(name)
        if info is not None and not info.revoked:
            self.revoke(name)
        return self.add(name)

    def list(self) -> list[BotInfo]:
        raw = self.r.hgetall(self.keys.bots)
        return sorted((BotInfo.from_json(text(k), v) for k, v in raw.items()), key=lambda b: b.name)

    def info(self, name: str) -> BotInfo | None:
        """The bot's registration, or None if no bot has that name."""
        raw = self.r.hget(self.keys.bots, name)
        return None if raw is None else BotInfo.from_json(name, raw)

    def lookup(self, token: str) -> str | None:
        """The name of the bot a live token belongs to."""
        name = self.r.get(self.keys.token(token_hash(token)))
        return None if name is None else text(name)


async def lookup_token(client: AsyncRedis, prefix: str, token: str) -> str | None:
    """The name of the bot a live token belongs to (asyncio client: the engine service)."""
    name = await client.get(Keys(prefix).token(token_hash(token)))
    return None if name is None else text(name)
