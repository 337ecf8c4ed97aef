"""Bot tokens: issued once, stored only as SHA-256 hashes in Redis.

Keys (under the configured prefix): ``bots`` (hash name -> JSON metadata),
``token:<sha256>`` (-> bot name). A revoked bot keeps its metadata (for the
ladder) but loses its token.
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

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class TokenError(ValueError):
    """A bad bot name, an existing bot, or an unknown bot."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_key(prefix: str, token: str | None = None, digest: str | None = None) -> str:
    """The Redis key that maps a token (given itself or its hash) to its bot's name."""
    return f"{prefix}:token:{digest or token_hash(token or '')}"


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
    """Sync token store (CLI and tests); the server uses :func:`lookup_token_async`."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def add(self, name: str) -> str:
        """Register ``name`` and return its new token (shown once, never stored)."""
        if not NAME_RE.match(name):
            raise TokenError(f"bot name {name!r} must be 1-64 letters, digits, '_', '.' or '-'")
        existing = self.r.hget(self._key("bots"), name)
        if existing is not None and not BotInfo.from_json(name, existing).revoked:
            raise TokenError(f"bot {name!r} already exists; revoke it first to issue a new token")
        token = "tbl_" + secrets.token_urlsafe(32)
        meta = {"created": time.time(), "revoked": False, "token_prefix": token[:8]}
        pipe = self.r.pipeline()
        pipe.hset(self._key("bots"), name, json.dumps(meta))
        pipe.set(token_key(self.prefix, token), name)
        pipe.hset(self._key("bot-token"), name, token_hash(token))
        pipe.execute()
        return token

    def revoke(self, name: str) -> None:
        raw = self.r.hget(self._key("bots"), name)
        if raw is None:
            raise TokenError(f"no bot named {name!r}")
        meta: dict[str, Any] = json.loads(raw)
        meta["revoked"] = True
        digest = self.r.hget(self._key("bot-token"), name)
        pipe = self.r.pipeline()
        if digest is not None:
            pipe.delete(token_key(self.prefix, digest=digest.decode() if isinstance(digest, bytes) else str(digest)))
        pipe.hdel(self._key("bot-token"), name)
        pipe.hset(self._key("bots"), name, json.dumps(meta))
        pipe.execute()

    def list(self) -> list[BotInfo]:
        raw = self.r.hgetall(self._key("bots"))
        return sorted(
            (BotInfo.from_json(k.decode() if isinstance(k, bytes) else k, v) for k, v in raw.items()),
            key=lambda b: b.name,
        )

    def lookup(self, token: str) -> str | None:
        name = self.r.get(token_key(self.prefix, token))
        return name.decode() if isinstance(name, bytes) else name
