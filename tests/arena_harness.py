"""Real processes for end-to-end tests: Redis on its own key prefix, engine service
replicas on free ports, bot processes (Python, Node.js, C++).

Nothing here is a stand-in: every helper starts the real program and talks to it
over loopback.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import redis

from scheduler.local import clear_prefix

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = os.environ.get("TABLANETTE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
LISTEN_RE = re.compile(r"listening on [\d.]+:(\d+)")


def unique_prefix(name: str) -> str:
    return f"test-{name}-{secrets.token_hex(4)}"


@dataclass
class Proc:
    """A started child process with its log file."""

    popen: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int | None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        return self.popen.returncode


@dataclass
class Arena:
    """One test's arena: a Redis prefix, its replicas and bots, cleaned up at the end."""

    prefix: str
    tmp: Path
    env_extra: dict[str, str] = field(default_factory=dict)
    procs: list[Proc] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.redis = redis.Redis.from_url(REDIS_URL)

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            TABLANETTE_REDIS_URL=REDIS_URL,
            TABLANETTE_PREFIX=self.prefix,
            PYTHONUNBUFFERED="1",
            PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        )
        env.update(self.env_extra)
        env.update(extra)
        return env

    def spawn(self, name: str, argv: list[str], **env: str) -> Proc:
        log = self.tmp / f"{name}.log"
        fh = log.open("wb")
        popen = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, env=self.env(**env), cwd=ROOT)
        proc = Proc(popen, log)
        self.procs.append(proc)
        return proc

    def start_engine(self, name: str = "engine", **env: str) -> tuple[Proc, int]:
        """A real engine service on a free port (or ``TABLANETTE_PORT``); returns it and its port."""
        proc = self.spawn(name, [sys.executable, "-m", "engine_service"], **{"TABLANETTE_PORT": "0", **env})
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            m = LISTEN_RE.search(proc.text())
            if m:
                return proc, int(m.group(1))
            if not proc.alive():
                break
            time.sleep(0.05)
        raise RuntimeError(f"engine service did not start:\n{proc.text()}")

    def add_bot(self, name: str) -> str:
        from engine_service.tokens import BotTokens

        return BotTokens(self.redis, self.prefix).add(name)

    def start_python_bot(self, kind: str, name: str, token: str, port: int, *extra: str) -> Proc:
        argv = [
            sys.executable,
            "-m",
            "bots",
            kind,
            "--name",
            name,
            "--token",
            token,
            "--address",
            f"127.0.0.1:{port}",
            *extra,
        ]
        return self.spawn(f"bot-{name}", argv)

    def start_node_bot(self, name: str, token: str, port: int) -> Proc:
        node = shutil.which("node")
        assert node, "node is required"
        argv = [
            node,
            str(ROOT / "bots/node/bot.js"),
            "--address",
            f"127.0.0.1:{port}",
            "--token",
            token,
            "--name",
            name,
        ]
        return self.spawn(f"bot-{name}", argv)

    def start_cpp_bot(self, name: str, token: str, port: int) -> Proc:
        exe = ROOT / "bots/cpp/build/tablanette-cpp-bot"
        argv = [str(exe), "--address", f"127.0.0.1:{port}", "--token", token, "--name", name]
        return self.spawn(f"bot-{name}", argv)

    def start_worker(self, name: str, **env: str) -> Proc:
        """A real Celery worker process (threads pool, one match at a time)."""
        from scheduler.local import worker_argv

        return self.spawn(name, worker_argv(name, f"{self.prefix}.matches"), **env)

    def tablanette(self, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
        """Run the ``tablanette`` CLI against this arena and return its result."""
        return subprocess.run(
            [sys.executable, "-c", "from scheduler.cli import main; main()", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(**env),
            cwd=ROOT,
        )

    def wait_connected(self, *bots: str, timeout: float = 20) -> None:
        """Until every bot has a live session in the registry."""
        deadline = time.monotonic() + timeout
        missing = list(bots)
        while time.monotonic() < deadline:
            missing = [b for b in bots if self.redis.get(f"{self.prefix}:session:{b}") is None]
            if not missing:
                return
            time.sleep(0.05)
        logs = "\n".join(f"--- {p.log.name}\n{p.text()[-2000:]}" for p in self.procs)
        raise TimeoutError(f"bots never connected: {missing}\n{logs}")

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        clear_prefix(self.redis, self.prefix)
        self.redis.close()


def arena_fixture(tmp_path: Path, name: str) -> Iterator[Arena]:
    arena = Arena(unique_prefix(name), tmp_path)
    try:
        yield arena
    finally:
        arena.close()
