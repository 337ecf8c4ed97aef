"""A league across hosts: every part of the arena in a network namespace of its own, TLS on.

Redis, two engine replicas, two Celery workers, two bot machines and an
operator's machine (the CLI) are eight hosts of a private network
(:mod:`netns_kit`): each process is started inside its host with the addresses
a deployment would give it, its own address to listen on, Redis's and the
replicas' addresses to dial, never 127.0.0.1 (inside a host that is its own
loopback, where nothing listens). The replicas serve TLS with a certificate for
their addresses; bots and workers trust it through the CA file. Each bot knows
both replicas, its own first, so half the bots are on each, and matches between
them cross from one replica to the other.

The league must play to the end with every match counted once, every record
must verify, and every engine and worker must serve its metrics to a scraper on
another host (curl on the operator's machine).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netns_kit import Network, unavailable
from prometheus_client.parser import text_string_to_metric_families
from service_kit import self_signed

from cli.local import CLI, Child, LocalArena, redis_server_binary, worker_argv

LEAGUE = "hosts"
BOTS = {"ann": "engine-a", "bob": "engine-a", "cat": "engine-b", "dan": "engine-b"}
MATCHES = 12  # 6 pairings, 2 games each
ENGINE_PORT = 50051
METRICS_PORT = 9100


class Deployment:
    """The arena's processes on the network's hosts."""

    def __init__(self, workdir: Path) -> None:
        self.net = Network()
        self.hosts = {
            name: self.net.host(name)
            for name in ("redis", "engine-a", "engine-b", "worker-a", "worker-b", "bots-a", "bots-b", "ops")
        }
        redis_url = f"redis://{self.hosts['redis'].address}:6379/0"
        self.arena = LocalArena(workdir, redis_url=redis_url, prefix="multihost")
        self.cert, self.key = self_signed(
            workdir, "arena", ips=[self.hosts["engine-a"].address, self.hosts["engine-b"].address]
        )
        self.children: dict[str, Child] = {}

    def address(self, host: str, port: int = ENGINE_PORT) -> str:
        return f"{self.hosts[host].address}:{port}"

    def spawn(self, name: str, host: str, argv: list[str], **env: str) -> Child:
        child = self.arena.spawn(name, self.hosts[host].argv(argv), env)
        self.children[name] = child
        return child

    def run(self, host: str, argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """A command on ``host``, to its end."""
        return subprocess.run(
            self.hosts[host].argv(argv), capture_output=True, text=True, env=self.arena.child_env(), timeout=timeout
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

    def start_bot(self, name: str, home: str) -> None:
        other = "engine-b" if home == "engine-a" else "engine-a"
        token = self.cli("bot", "add", name).strip().splitlines()[-1]
        argv = [sys.executable, "-m", "bots", "random", "--name", name, "--ca", str(self.cert)]
        argv += ["--address", f"{self.address(home)},{self.address(other)}"]
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

    def close(self) -> None:
        self.arena.close(clear=False)  # Redis goes with its host: nothing to clean up in it
        self.net.close()


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (it scrapes the metrics from the operator's host)")
    d = Deployment(tmp_path)
    try:
        yield d
    finally:
        d.close()


def total(samples: dict[str, float], name: str) -> float:
    return sum(v for k, v in samples.items() if k == name or k.startswith(name + "{"))


def test_a_league_across_hosts_with_tls_plays_to_the_end_and_every_record_verifies(deployment: Deployment) -> None:
    d = deployment
    d.start_redis()
    for engine in ("engine-a", "engine-b"):
        d.start_engine(engine)
    for worker in ("worker-a", "worker-b"):
        d.start_worker(worker)
    for bot, home in BOTS.items():
        d.start_bot(bot, home)
    d.cli("league", "create", LEAGUE, "--games", "2", "--rule", "deals=1")
    d.cli("league", "add-bot", LEAGUE, *BOTS)

    started = time.monotonic()
    d.cli("league", "start", LEAGUE, "--window", "4", timeout=600)  # waits for bots that are still connecting
    print(f"league across 8 hosts: {MATCHES} matches in {time.monotonic() - started:.1f} s")

    status = json.loads(d.cli("league", "status", LEAGUE, "--json"))
    assert (status["status"], status["done"], status["failed"]) == ("finished", MATCHES, 0), status
    records = d.arena.workdir / "records.jsonl"
    d.cli("records", "export", "--league", LEAGUE, "--out", str(records))
    assert f"{MATCHES} record(s) verified" in d.cli("records", "verify", str(records))

    listed = {row["bot"]: row for row in json.loads(d.cli("bot", "list", "--json"))}
    for bot, home in BOTS.items():  # each bot stayed on its own replica, over TLS, the whole league
        assert listed[bot]["connected"] == d.address(home), listed[bot]

    engines = {h: d.scrape(h) for h in ("engine-a", "engine-b")}
    workers = {h: d.scrape(h) for h in ("worker-a", "worker-b")}
    for host, samples in engines.items():
        assert samples["tablanette_connected_bots"] == 2, host
        assert total(samples, "tablanette_move_latency_seconds_count") > 0, host
    for host, samples in workers.items():
        assert samples['tablanette_matches_total{outcome="done"}'] >= 1, f"{host} played no match"
    assert sum(s['tablanette_matches_total{outcome="done"}'] for s in workers.values()) == MATCHES
    for samples in [*engines.values(), *workers.values()]:
        assert samples["tablanette_redis_errors_total"] == 0
