"""One configuration source: environment variables prefixed ``TABLANETTE_``.

| variable | default | meaning |
|---|---|---|
| ``TABLANETTE_REDIS_URL`` (or ``REDIS_URL``) | ``redis://127.0.0.1:6379/0`` | Redis for tokens, sessions, leagues |
| ``TABLANETTE_PREFIX`` | ``tablanette`` | prefix of every Redis key (tests and leagues can share a server) |
| ``TABLANETTE_HOST`` / ``TABLANETTE_PORT`` | ``127.0.0.1`` / ``50051`` | where ``tablanette serve`` listens |
| ``TABLANETTE_ADVERTISE`` | ``HOST:PORT`` (host name for a wildcard HOST) | how runners reach this replica |
| ``TABLANETTE_DRAIN_SECONDS`` | ``5`` | how long a stopping replica lets in-flight calls finish |
| ``TABLANETTE_GRACE_MS`` | ``10000`` | how long a disconnected bot may take to come back |
| ``TABLANETTE_KEEPALIVE_MS`` | ``10000`` | how often bots must send something |
| ``TABLANETTE_MAX_MESSAGE_BYTES`` | ``1048576`` | largest message a client may send |
| ``TABLANETTE_TLS_CERT`` / ``TABLANETTE_TLS_KEY`` | unset | serve TLS with this certificate and key |
| ``TABLANETTE_SESSION_TTL_MS`` | ``15000`` | lifetime of a session entry in Redis (refreshed at a third of it) |
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, replace
from typing import Any


def _env(name: str, default: str) -> str:
    return os.environ.get(f"TABLANETTE_{name}", default)


def redis_url() -> str:
    return os.environ.get("TABLANETTE_REDIS_URL") or os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@dataclass(frozen=True)
class Settings:
    redis_url: str
    prefix: str
    host: str
    port: int
    advertise: str
    grace_ms: int
    keepalive_ms: int
    max_message_bytes: int
    tls_cert: str | None
    tls_key: str | None
    session_ttl_ms: int
    drain_seconds: float = 5.0

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        host = _env("HOST", "127.0.0.1")
        port = int(_env("PORT", "50051"))
        settings = cls(
            redis_url=redis_url(),
            prefix=_env("PREFIX", "tablanette"),
            host=host,
            port=port,
            advertise=_env("ADVERTISE", ""),
            grace_ms=int(_env("GRACE_MS", "10000")),
            keepalive_ms=int(_env("KEEPALIVE_MS", "10000")),
            max_message_bytes=int(_env("MAX_MESSAGE_BYTES", str(1 << 20))),
            tls_cert=os.environ.get("TABLANETTE_TLS_CERT") or None,
            tls_key=os.environ.get("TABLANETTE_TLS_KEY") or None,
            session_ttl_ms=int(_env("SESSION_TTL_MS", "15000")),
            drain_seconds=float(_env("DRAIN_SECONDS", "5")),
        )
        settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
        if not settings.advertise:
            # A wildcard address is no address to dial: advertise this machine's name instead.
            host = socket.gethostname() if settings.host in ("0.0.0.0", "::", "[::]", "") else settings.host
            settings = replace(settings, advertise=f"{host}:{settings.port}")
        if bool(settings.tls_cert) != bool(settings.tls_key):
            raise ValueError("TLS needs both a certificate and a key file")
        return settings

    def key(self, *parts: str) -> str:
        """A Redis key under this arena's prefix."""
        return ":".join((self.prefix, *parts))
