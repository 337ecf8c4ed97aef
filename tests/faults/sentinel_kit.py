"""A Redis primary, its replicas and three Sentinels of a test's own, on loopback free ports.

Every server writes to a folder of the test's; the Sentinels watch the primary under
:data:`MASTER` with a quorum of two and declare it down after :data:`DOWN_AFTER_MS`,
so killing the primary (SIGKILL) promotes a replica within a few seconds. Nothing
here touches the shared Redis.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from cli.local import free_port, redis_server_binary

MASTER = "tablanette-test"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    password: str | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, password=self.password, socket_timeout=2, socket_connect_timeout=1)

    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class SentinelGroup:
    """The servers; :meth:`start` returns once every Sentinel sees the primary and its replicas."""

    folder: Path
    replicas: int = 2
    sentinel_password: str = ""
    """The Sentinels' ``requirepass`` (they use it among themselves too); empty: none."""
    servers: dict[str, Server] = field(default_factory=dict)

    @property
    def sentinels(self) -> str:
        """``TABLANETTE_REDIS_SENTINELS`` for this group."""
        return ",".join(f"127.0.0.1:{s.port}" for n, s in self.servers.items() if n.startswith("sentinel"))

    def _spawn(self, name: str, argv: list[str]) -> Server:
        binary = redis_server_binary()
        assert binary, "redis-server is needed for the failover test"
        log = self.folder / f"{name}.log"
        port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 0
        with log.open("wb") as out:
            proc = subprocess.Popen([binary, *argv], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = Server(name, port, proc, log)
        self.servers[name] = server
        return server

    def _data_server(self, name: str, *extra: str) -> Server:
        data = self.folder / name
        data.mkdir(parents=True, exist_ok=True)
        argv = ["--port", str(free_port()), "--bind", "127.0.0.1", "--dir", str(data), "--save", ""]
        return self._spawn(name, [*argv, "--appendonly", "yes", "--appendfsync", "everysec", *extra])

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        primary = self._data_server("primary")
        _wait(lambda: _pings(primary), 20, "the primary")
        for i in range(1, self.replicas + 1):
            self._data_server(f"replica{i}", "--replicaof", "127.0.0.1", str(primary.port))
        _wait(lambda: _linked_replicas(primary) == self.replicas, 30, "the replicas to sync with the primary")
        for i in range(1, 4):
            port = free_port()
            conf = self.folder / f"sentinel{i}.conf"  # a Sentinel rewrites its file: one each, writable
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.folder}\n"
                f"sentinel monitor {MASTER} 127.0.0.1 {primary.port} 2\n"
                f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
                f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n"
                f"sentinel parallel-syncs {MASTER} 1\n"
                + (f"requirepass {self.sentinel_password}\n" if self.sentinel_password else "")
            )
            sentinel = self._spawn(f"sentinel{i}", [str(conf), "--sentinel", "--port", str(port)])
            sentinel.password = self.sentinel_password or None
        _wait(self._sentinels_ready, 30, "the Sentinels to see the primary, its replicas and each other")

    def _sentinels_ready(self) -> bool:
        for name, server in self.servers.items():
            if not name.startswith("sentinel"):
                continue
            try:
                state = server.client().sentinel_master(MASTER)
            except redis.RedisError:
                return False
            if int(state["num-slaves"]) < self.replicas or int(state["num-other-sentinels"]) < 2:
                return False
        return True

    def master_port(self) -> int | None:
        """The primary's port as the Sentinels say it now (the first that answers)."""
        for name, server in self.servers.items():
            if name.startswith("sentinel"):
                with contextlib.suppress(redis.RedisError):
                    return int(server.client().sentinel_get_master_addr_by_name(MASTER)[1])
        return None

    def primary(self) -> Server:
        port = self.master_port()
        return next(s for s in self.servers.values() if s.port == port)

    def stop(self) -> None:
        for server in self.servers.values():
            if server.alive():
                server.proc.send_signal(signal.SIGKILL)
                server.proc.wait(5)

    def logs(self) -> str:
        return "\n".join(f"--- {s.name}\n{s.log.read_text(errors='replace')[-1500:]}" for s in self.servers.values())


def _pings(server: Server) -> bool:
    try:
        return bool(server.client().ping())
    except redis.RedisError:
        return False


def _linked_replicas(primary: Server) -> int:
    try:
        info = primary.client().info("replication")
    except redis.RedisError:
        return 0
    links = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)]
    return sum(1 for v in links if v.get("state") == "online")


def _wait(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)
