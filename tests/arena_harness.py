"""Real processes for end-to-end tests: the arena's own supervisor on a private key prefix.

Every helper starts the real program (engine service replicas on free ports,
Celery workers, bots in Python, Node.js and C++) through
:class:`cli.local.LocalArena`, the supervisor ``tablanette up`` and the demo
use, and talks to it over loopback. Nothing here is a stand-in.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import redis
from prometheus_client.parser import text_string_to_metric_families

from cli.local import ROOT, Child, LocalArena, clear_prefix, free_port

REDIS_URL = os.environ.get("TABLANETTE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

Arena = LocalArena
Proc = Child
__all__ = [
    "REDIS_URL",
    "ROOT",
    "Arena",
    "Proc",
    "arena_fixture",
    "clear_prefix",
    "free_port",
    "metrics_port",
    "new_arena",
    "readable_folder",
    "scrape",
    "scratch_redis",
    "unique_prefix",
]


def unique_prefix(name: str) -> str:
    return f"test-{name}-{secrets.token_hex(4)}"


@contextlib.contextmanager
def scratch_redis(name: str) -> Iterator[tuple[redis.Redis, str]]:
    """A client of the test Redis and a fresh key prefix of its own; every key under it is deleted afterwards."""
    r = redis.Redis.from_url(REDIS_URL)
    prefix = unique_prefix(name)
    try:
        yield r, prefix
    finally:
        clear_prefix(r, prefix)
        r.close()


def new_arena(name: str, workdir: Path) -> LocalArena:
    """An arena on the test Redis under a fresh prefix of its own."""
    return LocalArena(workdir, redis_url=REDIS_URL, prefix=unique_prefix(name))


def arena_fixture(tmp_path: Path, name: str) -> Iterator[LocalArena]:
    """An arena whose processes stop, and whose keys are deleted, when the test ends (pass or fail)."""
    arena = new_arena(name, tmp_path)
    try:
        yield arena
    finally:
        arena.close()


@contextlib.contextmanager
def readable_folder(prefix: str) -> Iterator[Path]:
    """A fresh folder the sandbox's unprivileged user can reach (pytest's own are private to root, and a
    clone may lie in a private folder too), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir="/var/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def metrics_port(child: Child) -> int:
    """The port of a process's metrics endpoint (started with ``TABLANETTE_METRICS_PORT=0``), from its log."""
    return int(child.wait_for(r"metrics on [\d.]+:(\d+)", f"{child.name}'s metrics endpoint").group(1))


def scrape(port: int) -> dict[str, float]:
    """``GET /metrics`` on ``port``, as Prometheus reads it: ``{'name{label="value",...}': value}`` per sample
    (labels sorted; a sample without labels is its bare name)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return samples
