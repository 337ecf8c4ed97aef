"""Worker settings from the environment (``TABLANETTE_`` prefix, like the engine service).

| variable | default | meaning |
|---|---|---|
| ``TABLANETTE_BROKER_URL`` | the Redis URL | Celery broker (Redis) |
| ``TABLANETTE_VISIBILITY_TIMEOUT`` | ``7200`` | seconds before an unacknowledged match is redelivered |
| ``TABLANETTE_TASK_TIME_LIMIT`` | ``visibility - 300`` (at least 60) | hard time limit of one match |
| ``TABLANETTE_LEASE_MS`` | ``30000`` | a running match's lease, renewed at a third of it |
| ``TABLANETTE_MAX_DELIVERIES`` | ``5`` | attempts after which a match is marked failed |
| ``TABLANETTE_TLS_CA`` | unset | CA certificate (PEM) to reach engine replicas that serve TLS |
| ``TABLANETTE_RESTORE_INTERVAL`` | ``10`` | seconds between sweeps returning abandoned matches to the queue |
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from engine_service.config import redis_url


@dataclass(frozen=True)
class WorkerSettings:
    redis_url: str
    broker_url: str
    prefix: str
    visibility_timeout: int
    task_time_limit: int
    lease_ms: int
    max_deliveries: int
    grace_ms: int
    restore_interval: int
    tls_ca: str | None

    @classmethod
    def from_env(cls) -> WorkerSettings:
        url = redis_url()
        vis = int(os.environ.get("TABLANETTE_VISIBILITY_TIMEOUT", "7200"))
        limit = int(os.environ.get("TABLANETTE_TASK_TIME_LIMIT", str(max(vis - 300, 60))))
        if limit >= vis:
            raise ValueError(
                f"TABLANETTE_TASK_TIME_LIMIT ({limit}s) must stay below the visibility timeout ({vis}s), "
                "or a running match would be delivered twice"
            )
        return cls(
            redis_url=url,
            broker_url=os.environ.get("TABLANETTE_BROKER_URL", url),
            prefix=os.environ.get("TABLANETTE_PREFIX", "tablanette"),
            visibility_timeout=vis,
            task_time_limit=limit,
            lease_ms=int(os.environ.get("TABLANETTE_LEASE_MS", "30000")),
            max_deliveries=int(os.environ.get("TABLANETTE_MAX_DELIVERIES", "5")),
            grace_ms=int(os.environ.get("TABLANETTE_GRACE_MS", "10000")),
            restore_interval=int(os.environ.get("TABLANETTE_RESTORE_INTERVAL", "10")),
            tls_ca=os.environ.get("TABLANETTE_TLS_CA") or None,
        )

    @property
    def queue(self) -> str:
        return f"{self.prefix}.matches"
