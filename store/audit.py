"""The audit log: who logged in or was refused, revocations, takeovers, quarantines.

Every event is a structured log line (logger ``tablanette.audit``, one JSON
object) and an entry in a capped Redis list (``Keys.audit``, newest first, the
last :data:`KEEP` events), which ``tablanette audit`` shows an operator.

>>> event("login_refused", bot="x" * 100, reason="unknown or revoked token")["bot"][-3:]
'...'
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Protocol

import redis
from redis.asyncio import Redis as AsyncRedis

from .codec import text
from .keys import Keys

log = logging.getLogger("tablanette.audit")
KEEP = 10_000
"""Events kept in Redis (older ones are dropped)."""
FIELD_CHARS = 80
"""Longest text kept per field: a client cannot grow the log with long names."""


def event(kind: str, **fields: object) -> dict[str, Any]:
    """One audit event: its kind, the time, and its fields (texts cut to :data:`FIELD_CHARS`)."""
    out: dict[str, Any] = {"event": kind, "at": round(time.time(), 3)}
    for key, value in fields.items():
        if isinstance(value, str) and len(value) > FIELD_CHARS:
            value = value[: FIELD_CHARS - 3] + "..."
        out[key] = value
    return out


class AuditLog:
    """The audit log with a blocking client (CLI, workers, scheduler)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.key = Keys(prefix).audit

    def record(self, kind: str, **fields: object) -> dict[str, Any]:
        entry = event(kind, **fields)
        line = json.dumps(entry, separators=(",", ":"))
        log.info("%s", line)
        pipe = self.r.pipeline()
        pipe.lpush(self.key, line)
        pipe.ltrim(self.key, 0, KEEP - 1)
        pipe.execute()
        return entry

    def recent(self, limit: int = 50, kind: str | None = None, bot: str | None = None) -> list[dict[str, Any]]:
        """The newest events first (of one kind, about one bot, if given)."""
        filtered = kind is not None or bot is not None
        raw = self.r.lrange(self.key, 0, -1 if filtered else limit - 1)
        events = [json.loads(text(r)) for r in raw]
        if kind is not None:
            events = [e for e in events if e.get("event") == kind]
        if bot is not None:
            events = [e for e in events if e.get("bot") == bot]
        return events[:limit]


class Audit(Protocol):
    """Where an engine writes what it admitted and refused (:class:`AsyncAuditLog`, or :class:`LogAudit`)."""

    async def record(self, kind: str, **fields: object) -> None: ...


class LogAudit:
    """An engine's audit in its log only: one process with no Redis (``tablanette match``), whose logins
    are the programs it started itself."""

    async def record(self, kind: str, **fields: object) -> None:
        log.info("%s", json.dumps(event(kind, **fields), separators=(",", ":")))


class AsyncAuditLog:
    """The audit log with an asyncio client (the engine service)."""

    def __init__(self, client: AsyncRedis, prefix: str) -> None:
        self.r = client
        self.key = Keys(prefix).audit

    async def record(self, kind: str, **fields: object) -> None:
        line = json.dumps(event(kind, **fields), separators=(",", ":"))
        log.info("%s", line)
        pipe = self.r.pipeline()
        pipe.lpush(self.key, line)
        pipe.ltrim(self.key, 0, KEEP - 1)
        await pipe.execute()
