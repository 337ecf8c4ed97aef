"""An arena deployed on the hosts of a private network (:mod:`netns_kit`): one process per host, TLS on.

Redis, two engine replicas, two Celery workers, two bot machines, an operator's
machine (the CLI) and a ``wan`` host (where a slow link ends, for the latency
test) are nine hosts. Each process is started inside its
host with the addresses a deployment would give it: its own address to listen
on, Redis's and the replicas' addresses to dial, never 127.0.0.1 (inside a host
that is its own loopback, where nothing listens). The replicas serve TLS with a
certificate for their addresses; bots and workers trust it through the CA file.
Each bot knows both replicas, its own first.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from netns_kit import Network, unavailable
from prometheus_client.parser import text_string_to_metric_families
from service_kit import self_signed

from cli.local import CLI, Child, LocalArena, redis_server_binary, worker_argv

LEAGUE = "hosts"
BOTS = {"ann": "engine-a", "bob": "engine-a", "cat": "engine-b", "dan": "engine-b"}
ENGINE_PORT = 50051
METRICS_PORT = 9100
HOSTS = ("redis", "engine-a", "engine-b", "worker-a", "worker-b", "bots-a", "bots-b", "ops", "wan")
"""``wan``: where a slow link to the replicas ends (:mod:`delay_relay`), for bots that dial through it."""
RELAY = Path(__file__).resolve().parent / "delay_relay.py"
LOSS = "arena_loss"
"""The nftables table :meth:`Deployment.lose` adds on a host."""


class Deployment:
    """The arena's processes on the network's hosts."""

    def __init__(self, workdir: Path, **env: str) -> None:
        self.net = Network()
        self.hosts = {name: self.net.host(name) for name in HOSTS}
        redis_url = f"redis://{self.hosts['redis'].address}:6379/0"
        self.arena = LocalArena(workdir, redis_url=redis_url, prefix="multihost", extra_env=dict(env))
        named = [self.hosts[h].address for h in ("engine-a", "engine-b", "wan")]  # bots may dial the relay
        self.cert, self.key = self_signed(workdir, "arena", ips=named)
        self.children: dict[str, Child] = {}
        self.relayed: dict[tuple[str, int], str] = {}
        """(replica, delay in ms) -> the relay's address that reaches it that much later each way."""

    def address(self, host: str, port: int = ENGINE_PORT) -> str:
        return f"{self.hosts[host].address}:{port}"

    def spawn(self, name: str, host: str, argv: list[str], **env: str) -> Child:
        child = self.arena.spawn(name, self.hosts[host].argv(argv), env)
        self.children[name] = child
        return child

    def run(
        self, host: str, argv: list[str], timeout: float = 120, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """A command on ``host``, to its end."""
        env = self.arena.child_env()
        return subprocess.run(
            self.hosts[host].argv(argv), capture_output=True, text=True, env=env, timeout=timeout, input=input
        )

    def cli(self, *args: str, timeout: float = 120) -> str:
        """``tablanette ARGS`` on the operator's host; its standard output (a failure fails the test)."""
        done = self.run("ops", [*CLI, *args], timeout)
        assert done.returncode == 0, f"tablanette {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def start_redis(self) -> None:
        redis = self.hosts["redis"]
        argv = [redis_server_binary() or "redis-server", "--bind", redis.address, "--port", "6379"]
        argv += ["--protected-mode", "no", "--save", "", "--appendonly", "no", "--dir", str(self.arena.workdir)]
        self.spawn("redis", "redis", argv).wait_for("Ready to accept connections", "Redis")

    def start_engine(self, host: str) -> None:
        address = self.hosts[host].address
        argv = [*CLI, "serve", "--host", address, "--port", str(ENGINE_PORT)]
        env = {
            "TABLANETTE_ADVERTISE": self.address(host),
            "TABLANETTE_TLS_CERT": str(self.cert),
            "TABLANETTE_TLS_KEY": str(self.key),
            "TABLANETTE_METRICS_PORT": str(METRICS_PORT),
            "TABLANETTE_METRICS_HOST": address,
        }
        self.spawn(host, host, argv, **env).wait_for(r"metrics on ", f"the engine service on {host}")

    def start_worker(self, host: str) -> None:
        env = {
            "TABLANETTE_TLS_CA": str(self.cert),
            "TABLANETTE_METRICS_PORT": str(METRICS_PORT),
            "TABLANETTE_METRICS_HOST": self.hosts[host].address,
        }
        child = self.spawn(host, host, worker_argv(host, f"{self.arena.prefix}.matches"), **env)
        child.wait_for(r"ready\.", f"the worker on {host}", timeout=60)

    def start_relay(self, *delays_ms: int) -> None:
        """A relay on the ``wan`` host reaching each replica ``delay`` ms later each way, for each delay."""
        specs = []
        for i, (engine, delay) in enumerate((e, d) for d in delays_ms for e in ("engine-a", "engine-b")):
            self.relayed[engine, delay] = listen = f"{self.hosts['wan'].address}:{40000 + i}"
            specs.append(f"{listen}={self.address(engine)}/{delay}")
        self.spawn("relay", "wan", [sys.executable, str(RELAY), *specs]).wait_for("relaying", "the delay relay")

    def start_bot(self, name: str, home: str, think_ms: int = 0, delay_ms: int | None = None) -> None:
        """A bot on its bot host, dialing its ``home`` replica first (through the relay's ``delay_ms``)."""
        other = "engine-b" if home == "engine-a" else "engine-a"
        token = self.cli("bot", "add", name).strip().splitlines()[-1]
        argv = [sys.executable, "-m", "bots", "random", "--name", name, "--ca", str(self.cert)]
        argv += ["--think-ms", str(think_ms)] if think_ms else []
        if delay_ms is None:
            argv += ["--address", f"{self.address(home)},{self.address(other)}"]
        else:
            argv += ["--address", f"{self.relayed[home, delay_ms]},{self.relayed[other, delay_ms]}"]
        host = "bots-a" if home == "engine-a" else "bots-b"
        self.spawn(f"bot-{name}", host, argv, TABLANETTE_TOKEN=token)

    def scrape(self, host: str) -> dict[str, float]:
        """The metrics of the process on ``host``, fetched with curl from the operator's host."""
        url = f"http://{self.address(host, METRICS_PORT)}/metrics"
        done = self.run("ops", ["curl", "--silent", "--show-error", "--max-time", "10", url], timeout=30)
        assert done.returncode == 0, f"curl {url}: {done.stderr}"
        samples = {}
        for family in text_string_to_metric_families(done.stdout):
            for s in family.samples:
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
                samples[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
        return samples

    def lose(self, host: str, percent: int) -> None:
        """Drop ``percent`` % of the packets ``host`` sends and of those it receives, at random (nftables)."""
        rules = [f"add table inet {LOSS}"]
        for chain, hook in (("out", "output"), ("in", "input")):
            rules.append(f"add chain inet {LOSS} {chain} {{ type filter hook {hook} priority 0; }}")
            rules.append(f"add rule inet {LOSS} {chain} numgen random mod 100 < {percent} drop")
        done = self.run(host, ["nft", "-f", "-"], input="\n".join(rules) + "\n")
        assert done.returncode == 0, f"nft on {host}: {done.stderr}"

    def start(self, think_ms: int = 0, delays_ms: dict[str, int] | None = None) -> None:
        """Redis, both replicas, both workers and every bot of :data:`BOTS` (thinking ``think_ms`` a move;
        ``delays_ms``: bots that reach the replicas through the relay, with its delay)."""
        self.start_redis()
        for engine in ("engine-a", "engine-b"):
            self.start_engine(engine)
        for worker in ("worker-a", "worker-b"):
            self.start_worker(worker)
        if delays_ms:
            self.start_relay(*sorted(set(delays_ms.values())))
        for bot, home in BOTS.items():
            self.start_bot(bot, home, think_ms, (delays_ms or {}).get(bot))

    def create_league(self, games: int = 2, league: str = LEAGUE, *options: str) -> int:
        """The league of :data:`BOTS`, ``games`` one-deal games a pairing (``options``: more of ``tablanette
        league create``'s); how many matches it has."""
        self.cli("league", "create", league, "--games", str(games), "--rule", "deals=1", *options)
        self.cli("league", "add-bot", league, *BOTS)
        return games * len(BOTS) * (len(BOTS) - 1) // 2

    def status(self, league: str = LEAGUE) -> dict[str, Any]:
        return dict(json.loads(self.cli("league", "status", league, "--json")))

    def verify_records(self, expected: int, league: str = LEAGUE) -> None:
        """Every record of the league verifies, and there are ``expected`` of them."""
        records = self.arena.workdir / f"{league}.jsonl"
        self.cli("records", "export", "--league", league, "--out", str(records))
        assert f"{expected} record(s) verified" in self.cli("records", "verify", str(records))

    def bots(self) -> list[dict[str, Any]]:
        """``tablanette bot list``: each bot and the replica it is connected to."""
        return list(json.loads(self.cli("bot", "list", "--json")))

    def ladder(self, league: str = LEAGUE) -> dict[str, dict[str, Any]]:
        return {row["bot"]: row for row in json.loads(self.cli("league", "ladder", league, "--json"))["rows"]}

    def close(self) -> None:
        self.arena.close(clear=False)  # Redis goes with its host: nothing to clean up in it
        self.net.close()


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    """A deployment on a network of its own (skipped, saying why, where namespaces cannot be made)."""
    yield from deployed(tmp_path)


def deployed(workdir: Path, **env: str) -> Iterator[Deployment]:
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (it scrapes the metrics from the operator's host)")
    d = Deployment(workdir, **env)
    try:
        yield d
    finally:
        d.close()


def total(samples: dict[str, float], name: str) -> float:
    """Every sample of ``name`` (any labels) summed."""
    return sum(v for k, v in samples.items() if k == name or k.startswith(name + "{"))
