"""Every process's settings, from environment variables prefixed ``TABLANETTE_``.

One :class:`ArenaSettings` serves the engine service, the workers, the
scheduler, the web ladder and the CLI, so a value means the same thing in every
process (the grace period the engine announces is the one the runner applies).
Values are validated when a process starts; a bad one stops it with a message
that names the variable (:class:`SettingsError`), never a traceback.

| variable | default | meaning |
|---|---|---|
| ``TABLANETTE_REDIS_URL`` (or ``REDIS_URL``) | ``redis://127.0.0.1:6379/0`` | Redis for tokens, sessions, leagues |
| ``TABLANETTE_REDIS_SENTINELS`` | unset | ``host:port,...`` of Sentinels that find the primary (docs/sentinel.md) |
| ``TABLANETTE_REDIS_SENTINEL_PASSWORD`` | unset | the Sentinels' own password (their ``requirepass``), if any |
| ``TABLANETTE_REDIS_MASTER`` | ``tablanette`` | the name the Sentinels know the primary by |
| ``TABLANETTE_REDIS_WAIT_REPLICAS`` | ``0`` | replicas that must hold a result before its commit counts (``WAIT``) |
| ``TABLANETTE_REDIS_WAIT_MS`` | ``1000`` | how long a commit waits for them before it asks again |
| ``TABLANETTE_PREFIX`` | ``tablanette`` | prefix of every Redis key (tests and leagues can share a server) |
| ``TABLANETTE_HOST`` / ``TABLANETTE_PORT`` | ``127.0.0.1`` / ``50051`` | where ``tablanette serve`` listens |
| ``TABLANETTE_ADVERTISE`` | ``HOST:PORT`` (host name for a wildcard HOST) | how runners reach this replica |
| ``TABLANETTE_DRAIN_SECONDS`` | ``5`` | how long a stopping replica lets in-flight calls finish |
| ``TABLANETTE_GRACE_MS`` | ``10000`` | how long a disconnected bot may take to come back |
| ``TABLANETTE_KEEPALIVE_MS`` | ``10000`` | how often bots must send something |
| ``TABLANETTE_MAX_MESSAGE_BYTES`` | ``1048576`` | largest message a bot may send |
| ``TABLANETTE_TLS_CERT`` / ``TABLANETTE_TLS_KEY`` | unset | serve TLS with this certificate and key |
| ``TABLANETTE_SESSION_TTL_MS`` | ``15000`` | lifetime of a session entry in Redis (refreshed at a third of it) |
| ``TABLANETTE_HELLO_RATE`` / ``_BURST`` | ``20`` / ``100`` | Hellos per second (and burst) from one peer address |
| ``TABLANETTE_TOKEN_HELLO_RATE`` / ``_BURST`` | ``1`` / ``10`` | Hellos per second (and burst) with one token |
| ``TABLANETTE_MAX_STREAMS_PER_ADDRESS`` | ``1024`` | live bot streams from one peer address |
| ``TABLANETTE_MAX_PREHELLO_PER_ADDRESS`` | ``128`` | streams from one peer address that have not said Hello yet |
| ``TABLANETTE_HELLO_TIMEOUT_MS`` | ``10000`` | how long a new stream may take to say Hello |
| ``TABLANETTE_MESSAGE_RATE`` / ``_BURST`` | ``500`` / ``1000`` | non-answer messages per second (burst) on a stream |
| ``TABLANETTE_OUTBOX_LIMIT`` | ``256`` | messages queued for a bot that does not read before it is disconnected |
| ``TABLANETTE_RULES_RATE`` / ``_BURST`` | ``20`` / ``50`` | Rules calls per second (and burst) per peer address |
| ``TABLANETTE_RULES_WORKERS`` | ``1`` | processes answering Rules service calls (off the event loop) |
| ``TABLANETTE_RULES_DEADLINE_MS`` | ``2000`` | the longest a Rules service call may take |
| ``TABLANETTE_RULES_MAX_PLAYS`` | ``5000`` | capture sets one Rules question may enumerate |
| ``TABLANETTE_MALFORMED_LOG_S`` | ``60`` | seconds between the counted log lines of one peer's malformed messages |
| ``TABLANETTE_BROKER_URL`` | the Redis URL | Celery broker: Redis, or RabbitMQ (``amqp://USER:PW@HOST:5672/VHOST``) |
| ``TABLANETTE_VISIBILITY_TIMEOUT`` | ``7200`` | seconds before an unacknowledged match is redelivered |
| ``TABLANETTE_TASK_TIME_LIMIT`` | ``visibility - 300`` (at least 60) | hard time limit of one match |
| ``TABLANETTE_LEASE_MS`` | ``30000`` | a running match's lease, renewed at a third of it |
| ``TABLANETTE_FEEDER_CLAIM_MS`` | ``10000`` | one scheduler a league: another takes over this long after it dies |
| ``TABLANETTE_MAX_ATTEMPTS`` | ``5`` | failed attempts before a match is marked failed (arena faults never count) |
| ``TABLANETTE_RESTORE_INTERVAL`` | ``10`` | seconds between sweeps returning abandoned matches to the queue |
| ``TABLANETTE_TLS_CA`` | unset | CA certificate (PEM) to reach engine replicas that serve TLS |
| ``TABLANETTE_METRICS_PORT`` | unset | serve Prometheus metrics on this port (``0``: a free one, printed) |
| ``TABLANETTE_METRICS_HOST`` | ``127.0.0.1`` | where metrics are served (``0.0.0.0``: for a scraper elsewhere) |
| ``TABLANETTE_HOST_DIR`` | ``/var/tmp/tablanette-hosted-PREFIX`` | where a host unpacks and builds versions |
| ``TABLANETTE_HOST_BUILDS`` | ``3`` | builds a host runs at once (at most one per bot) |
| ``TABLANETTE_HOST_PREFLIGHTS`` | ``4`` | preflights a host runs at once (at most one per bot) |
| ``TABLANETTE_HOST_BUILD_SECONDS`` | ``600`` | the longest one build may take before it is stopped |
| ``TABLANETTE_VERSIONS_PER_HOUR`` | ``10`` | versions one hosted bot (its owner key) may submit in any hour |
| ``TABLANETTE_SOURCE_BYTES_PER_BOT`` | ``33554432`` | source archive bytes one hosted bot keeps in Redis (32 MB) |
| ``TABLANETTE_HOSTED_SOURCE_BYTES_PER_ACCOUNT`` | ``52428800`` | source bytes one account's hosted bots keep (50 MB) |
| ``TABLANETTE_HOSTED_VERSIONS_BUILDING_PER_ACCOUNT`` | ``2`` | an account's versions building or in preflight at once |
| ``TABLANETTE_HOSTED_VERSIONS_ACTIVE_PER_ACCOUNT`` | ``5`` | an account's hosted bots in service at once |
| ``TABLANETTE_ARCHIVE_DIR`` | ``var/archive`` | where ``league archive`` moves finished leagues' records (Parquet) |
| ``TABLANETTE_ARCHIVE_AFTER_DAYS`` | ``30`` | days after a league finished that ``league archive --watch`` moves it |

>>> s = load_settings(port=0, prefix="doc")
>>> s.prefix, s.port, s.broker_url == s.redis_url
('doc', 0, True)
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import quote, urlsplit

from pydantic import AliasChoices, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "TABLANETTE_"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class SettingsError(ValueError):
    """A setting with a value no process can run with; the message names the variable."""


class ArenaSettings(BaseSettings):
    """The arena's settings (see the module's table)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", populate_by_name=True)

    redis_url: str = Field(DEFAULT_REDIS_URL, validation_alias=AliasChoices("TABLANETTE_REDIS_URL", "REDIS_URL"))
    redis_sentinels: str = ""
    redis_sentinel_password: str = Field("", repr=False)
    redis_master: str = Field("tablanette", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
    redis_wait_replicas: int = Field(0, ge=0, le=16)
    redis_wait_ms: int = Field(1000, ge=10, le=4000)  # under the client's 5 s socket timeout
    prefix: str = Field("tablanette", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
    # the engine service
    host: str = "127.0.0.1"
    port: int = Field(50051, ge=0, le=65535)
    advertise: str = ""
    grace_ms: int = Field(10_000, ge=0)
    keepalive_ms: int = Field(10_000, ge=100)
    max_message_bytes: int = Field(1 << 20, ge=128)
    tls_cert: str | None = None
    tls_key: str | None = None
    session_ttl_ms: int = Field(15_000, ge=300)
    drain_seconds: float = Field(5.0, ge=0)
    # the engine service's limits (docs/protocol.md, "Limits")
    hello_rate: float = Field(20.0, gt=0)
    hello_burst: int = Field(100, ge=1)
    token_hello_rate: float = Field(1.0, gt=0)
    token_hello_burst: int = Field(10, ge=1)
    max_streams_per_address: int = Field(1024, ge=1)
    max_prehello_per_address: int = Field(128, ge=1)
    hello_timeout_ms: int = Field(10_000, ge=100)
    message_rate: float = Field(500.0, gt=0)
    message_burst: int = Field(1000, ge=1)
    outbox_limit: int = Field(256, ge=8)
    rules_rate: float = Field(20.0, gt=0)
    rules_burst: int = Field(50, ge=1)
    rules_workers: int = Field(1, ge=1, le=64)
    rules_deadline_ms: int = Field(2000, ge=10)
    rules_max_plays: int = Field(5000, ge=10)
    malformed_log_s: float = Field(60.0, gt=0)
    # the workers
    broker_url: str = ""
    visibility_timeout: int = Field(7200, ge=2)
    task_time_limit: int = Field(0, ge=0)
    lease_ms: int = Field(30_000, ge=300)
    feeder_claim_ms: int = Field(10_000, ge=300)
    max_attempts: int = Field(
        5, ge=1, validation_alias=AliasChoices("TABLANETTE_MAX_ATTEMPTS", "TABLANETTE_MAX_DELIVERIES")
    )
    restore_interval: int = Field(10, ge=1)
    tls_ca: str | None = None
    # every long-running process (telemetry)
    metrics_port: int | None = Field(None, ge=0, le=65535)
    metrics_host: str = "127.0.0.1"
    # the hosting service (tablanette host)
    host_dir: str = ""
    host_builds: int = Field(3, ge=1, le=64)
    host_preflights: int = Field(4, ge=1, le=256)
    host_build_seconds: float = Field(600.0, ge=1)
    # hosted bots' quotas (docs/hosting.md, "Quotas")
    versions_per_hour: int = Field(10, ge=1)
    source_bytes_per_bot: int = Field(32 << 20, ge=1 << 20)
    # accounts (docs/accounts.md): bots one account may own, versions it may submit an hour (all its bots),
    # sign-ups an hour from one address
    bots_per_account: int = Field(20, ge=1)
    versions_per_hour_per_account: int = Field(30, ge=1)
    signups_per_hour: int = Field(5, ge=1)
    # an account's hosted bots, all together (store/account_quotas.py, scheduler/admission.py)
    hosted_source_bytes_per_account: int = Field(50 << 20, ge=1 << 20)
    hosted_versions_building_per_account: int = Field(2, ge=1)
    hosted_versions_active_per_account: int = Field(5, ge=1)
    # the archive of finished leagues (store/archive.py)
    archive_dir: str = Field("var/archive", min_length=1)
    archive_after_days: float = Field(30.0, ge=0)

    @model_validator(mode="after")
    def _derive_and_check(self) -> ArenaSettings:
        if self.redis_sentinels:  # every process reaches Redis through the URL: it names the Sentinels now
            self.redis_url = sentinel_url(
                self.redis_sentinels, self.redis_master, self.redis_url, self.redis_sentinel_password
            )
        self.broker_url = self.broker_url or self.redis_url
        self.tls_cert, self.tls_key, self.tls_ca = self.tls_cert or None, self.tls_key or None, self.tls_ca or None
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("TLS needs both TABLANETTE_TLS_CERT and TABLANETTE_TLS_KEY")
        if not self.task_time_limit:
            self.task_time_limit = max(self.visibility_timeout - 300, 60)
        if self.task_time_limit >= self.visibility_timeout:
            raise ValueError(
                f"TABLANETTE_TASK_TIME_LIMIT ({self.task_time_limit}s) must stay below the visibility timeout "
                f"({self.visibility_timeout}s), or a running match would be delivered twice"
            )
        if not self.advertise:
            # A wildcard address is no address to dial: advertise this machine's name instead.
            wildcard = self.host in ("0.0.0.0", "::", "[::]", "")
            self.advertise = f"{socket.gethostname() if wildcard else self.host}:{self.port}"
        return self

    @property
    def queue(self) -> str:
        """The Celery queue the workers take matches from."""
        return f"{self.prefix}.matches"


def sentinel_url(sentinels: str, master: str, redis_url: str, sentinel_password: str = "") -> str:
    """The Redis URL that names Sentinels: ``redis+sentinel://[:password@]host:port,.../master/db``,
    with ``?sentinel_password=...`` when the Sentinels themselves ask for one (their ``requirepass``).

    The primary's password and database come from ``redis_url``; :mod:`store.client` reads this form.

    >>> sentinel_url("10.0.0.1:26379, 10.0.0.2:26379", "tablanette", "redis://:pw@ignored:6379/2")
    'redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379/tablanette/2'
    >>> sentinel_url("10.0.0.1:26379", "t", "redis://localhost", sentinel_password="s&cret")
    'redis+sentinel://10.0.0.1:26379/t/0?sentinel_password=s%26cret'
    """
    addresses = [a.strip() for a in sentinels.split(",") if a.strip()]
    for address in addresses:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"TABLANETTE_REDIS_SENTINELS: {address!r} is not host:port")
    if not addresses:
        raise ValueError("TABLANETTE_REDIS_SENTINELS names no Sentinel (host:port,host:port,...)")
    parts = urlsplit(redis_url)
    if parts.scheme in ("redis+sentinel", "rediss+sentinel"):  # already the Sentinel form
        return redis_url
    if parts.scheme not in ("redis", "rediss"):
        raise ValueError(
            f"TABLANETTE_REDIS_URL must be redis:// beside TABLANETTE_REDIS_SENTINELS, not {parts.scheme}://"
        )
    auth = parts.netloc.rpartition("@")[0]
    db = parts.path.strip("/") or "0"
    scheme = "rediss+sentinel" if parts.scheme == "rediss" else "redis+sentinel"
    query = f"?sentinel_password={quote(sentinel_password, safe='')}" if sentinel_password else ""
    return f"{scheme}://{auth + '@' if auth else ''}{','.join(addresses)}/{master}/{db}{query}"


def load_settings(**overrides: Any) -> ArenaSettings:
    """The settings from the environment, ``overrides`` (not None) on top; :class:`SettingsError` if invalid."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return ArenaSettings(**given)
    except ValidationError as exc:
        raise SettingsError(_explain(exc)) from None


def _explain(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        if field:
            message = f"{ENV_PREFIX}{field.upper()} (got {err.get('input')!r}): {message}"
        lines.append(message)
    return "invalid settings: " + "; ".join(lines)
