"""How an account proves itself: web sessions (with their CSRF token) and personal API keys.

Both are random secrets handed out once and kept only as SHA-256 hashes, like bot tokens
(:mod:`store.tokens`), so a copy of the store logs no one in.

- A **web session** is the value of an HttpOnly cookie, made fresh at each login (a session id a visitor
  brings is never adopted: no fixation) and ended at logout, at suspension and at deletion; it lives
  :data:`SESSION_TTL` seconds. It holds a CSRF token which every state-changing request made with the
  cookie must send back (``X-CSRF-Token``).
- A **personal API key** (``tbk_...``) is for scripts, CI and ``tablanette remote``: sent as
  ``Authorization: Bearer KEY``, it needs no CSRF token (a browser never sends it by itself). Keys have a
  label and an id; an account lists and revokes its own, and all die with the account.

Keys (under ``<prefix>``): ``web-session:<sha256>`` (string, TTL: JSON account, csrf, created),
``account-web-sessions:<account>`` (set of session hashes), ``api-key:<sha256>`` (string: JSON account,
id), ``account-api-keys:<account>`` (hash id -> JSON label, created, prefix, hash).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis

from .codec import text

SESSION_TTL = 14 * 86_400
"""Seconds a web session lives after its login."""
MAX_KEYS = 20
"""API keys one account may hold at once."""


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class CredentialError(ValueError):
    """An unknown key id, or more keys than an account may hold."""


@dataclass(frozen=True)
class WebSession:
    account: str
    csrf: str
    created: float


@dataclass(frozen=True)
class ApiKey:
    id: str
    label: str
    created: float
    prefix: str
    """The key's first characters, to recognise it in a list (the rest is never kept)."""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "created": self.created, "prefix": self.prefix}


class Credentials:
    """Web sessions and API keys of every account under ``prefix``."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix

    def _session(self, hashed: str) -> str:
        return f"{self.prefix}:web-session:{hashed}"

    def _sessions_of(self, account: str) -> str:
        return f"{self.prefix}:account-web-sessions:{account}"

    def _key(self, hashed: str) -> str:
        return f"{self.prefix}:api-key:{hashed}"

    def _keys_of(self, account: str) -> str:
        return f"{self.prefix}:account-api-keys:{account}"

    # ------------------------------------------------------------ web sessions

    def open_session(self, account: str) -> tuple[str, WebSession]:
        """A new session for ``account``: the cookie's value (shown once) and the session."""
        sid = secrets.token_urlsafe(32)
        session = WebSession(account, secrets.token_urlsafe(24), time.time())
        hashed = digest(sid)
        pipe = self.r.pipeline()
        pipe.set(self._session(hashed), json.dumps(session.__dict__), ex=SESSION_TTL)
        pipe.sadd(self._sessions_of(account), hashed)
        pipe.expire(self._sessions_of(account), SESSION_TTL)
        pipe.execute()
        return sid, session

    def session(self, sid: str) -> WebSession | None:
        """The live session a cookie's value opens, or None."""
        if not sid or len(sid) > 128:
            return None
        raw = self.r.get(self._session(digest(sid)))
        return None if raw is None else WebSession(**json.loads(raw))

    def end_session(self, sid: str) -> None:
        session = self.session(sid)
        self.r.delete(self._session(digest(sid)))
        if session is not None:
            self.r.srem(self._sessions_of(session.account), digest(sid))

    def end_sessions(self, account: str) -> int:
        """End every web session of ``account``; how many were live."""
        hashed = [text(h) for h in self.r.smembers(self._sessions_of(account))]
        pipe = self.r.pipeline()
        for h in hashed:
            pipe.delete(self._session(h))
        pipe.delete(self._sessions_of(account))
        return sum(int(n) for n in pipe.execute()[:-1])

    # ------------------------------------------------------------ API keys

    def create_key(self, account: str, label: str) -> tuple[str, ApiKey]:
        """A new API key for ``account``: the key (shown once) and what is kept of it."""
        if self.r.hlen(self._keys_of(account)) >= MAX_KEYS:
            raise CredentialError(f"an account holds at most {MAX_KEYS} API keys: revoke one first")
        key = "tbk_" + secrets.token_urlsafe(32)
        info = ApiKey(secrets.token_hex(6), label, time.time(), key[:10])
        pipe = self.r.pipeline()
        pipe.set(self._key(digest(key)), json.dumps({"account": account, "id": info.id}))
        pipe.hset(self._keys_of(account), info.id, json.dumps({**info.to_json(), "hash": digest(key)}))
        pipe.execute()
        return key, info

    def keys(self, account: str) -> list[ApiKey]:
        raw = self.r.hgetall(self._keys_of(account))
        rows = [json.loads(v) for v in raw.values()]
        return sorted((ApiKey(d["id"], d["label"], d["created"], d["prefix"]) for d in rows), key=lambda k: k.created)

    def key_owner(self, key: str) -> tuple[str, str] | None:
        """The account and key id a live API key belongs to, or None."""
        if not key.startswith("tbk_") or len(key) > 128:
            return None
        raw = self.r.get(self._key(digest(key)))
        if raw is None:
            return None
        d = json.loads(raw)
        return str(d["account"]), str(d["id"])

    def revoke_key(self, account: str, key_id: str) -> ApiKey:
        raw = self.r.hget(self._keys_of(account), key_id)
        if raw is None:
            raise CredentialError(f"no API key with id {key_id!r} on this account")
        d = json.loads(raw)
        pipe = self.r.pipeline()
        pipe.delete(self._key(d["hash"]))
        pipe.hdel(self._keys_of(account), key_id)
        pipe.execute()
        return ApiKey(d["id"], d["label"], d["created"], d["prefix"])

    def revoke_keys(self, account: str) -> int:
        """Revoke every API key of ``account``; how many there were."""
        raw = self.r.hgetall(self._keys_of(account))
        pipe = self.r.pipeline()
        for v in raw.values():
            pipe.delete(self._key(json.loads(v)["hash"]))
        pipe.delete(self._keys_of(account))
        pipe.execute()
        return len(raw)
