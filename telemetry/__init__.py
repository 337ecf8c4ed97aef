"""Every long-running process's metrics: the Prometheus series all of them share, and the endpoint.

An engine replica and a worker each serve their series over HTTP, as Prometheus
scrapes them (``GET /metrics``), when ``TABLANETTE_METRICS_PORT`` is set: a port,
or ``0`` for a free one; either way the process prints ``metrics on HOST:PORT``.
Unset, a process serves none. The series of each are defined beside the code
they count: :mod:`engine_service.metrics`, :mod:`worker.metrics`; this room
holds what every process has (Redis errors, counted by :mod:`store.client`) and
the endpoint, and imports nothing of the project.
"""

from __future__ import annotations

from prometheus_client import Counter, disable_created_metrics, start_http_server

# Without this every counter has a ``_created`` twin: noise for dashboards and for people.
disable_created_metrics()  # type: ignore[no-untyped-call]

REDIS_ERRORS = Counter(
    "tablanette_redis_errors",
    "Redis commands that failed in this process (each failed try counts; ride-out clients then retry)",
)


def serve(port: int, host: str = "127.0.0.1") -> int:
    """Serve this process's metrics on ``host:port`` (0: a free port) from a daemon thread; the port."""
    server, _ = start_http_server(port, host)
    return int(server.server_port)
