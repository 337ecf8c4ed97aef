"""Quotas on hosted bots, attacked the way the issue found them open: one owner key spamming versions.

A real ``tablanette web`` and the real CLI, on a private Redis prefix, with small
quotas (3 versions an hour, 1 MB of source per bot) so each attack is quick: the
refused submission answers 429 with ``Retry-After`` (versions) or 413 (bytes),
the CLI exits non-zero with the same message, and nothing of it is kept (no
version, no number taken, no archive). The issue's own attack, six 7.3 MB
versions from one key at once, is replayed against the default quota.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, new_arena, unique_prefix
from web_kit import Site

from cli.local import CLI, free_port
from config import load_settings
from store.keys import Keys
from store.versions import Quota, QuotaError, Versions

PER_HOUR = 3
BOUND = 1 << 20
TOML = b'language = "python"\nprotocol = "jsonlines"\nrun = ["python3", "bot.py"]\n'


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    arena = new_arena("quotas", tmp_path_factory.mktemp("quotas"))
    arena.extra_env.update(
        TABLANETTE_VERSIONS_PER_HOUR=str(PER_HOUR), TABLANETTE_SOURCE_BYTES_PER_BOT=str(BOUND)
    )  # the web and the CLI alike
    try:
        port = free_port()
        site = Site(arena, f"http://127.0.0.1:{port}", arena.spawn("web", [*CLI, "web", "--port", str(port)]))
        site.wait_up()
        yield site
    finally:
        arena.close()


def folder(into: Path, name: str, payload: bytes = b"print('hi')\n") -> Path:
    path = into / name
    path.mkdir()
    (path / "bot.toml").write_bytes(TOML)
    (path / "bot.py").write_bytes(payload)
    return path


def tarball(payload: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("bot.toml", TOML), ("bot.py", payload)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def first_version(site: Site, tmp: Path, bot: str, payload: bytes = b"print('hi')\n") -> str:
    """The operator submits the bot's first version; its owner key."""
    out = site.cli("bot", "submit", str(folder(tmp, bot, payload)), "--name", bot)
    return next(line for line in out.splitlines() if line.startswith("tbo_"))


def post(site: Site, bot: str, body: bytes, key: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    headers = {"Content-Type": "application/gzip", "Authorization": f"Bearer {key}"}
    req = urllib.request.Request(site.url(f"/api/bots/{bot}/versions"), data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, json.loads(res.read()), {k.lower(): v for k, v in res.headers.items()}
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), {k.lower(): v for k, v in err.headers.items()}


def kept(site: Site, bot: str) -> tuple[list[int], int, list[str]]:
    """What the store holds of ``bot``: its version numbers, its version counter, its archives' keys."""
    r, keys = site.arena.redis, Keys(site.arena.prefix)
    numbers = sorted(int(n) for n in r.hkeys(keys.versions(bot)))
    sources = sorted(k.decode() for k in r.scan_iter(keys.source(f"{bot}@*")))
    return numbers, int(r.hget(keys.hosted, bot) or 0), sources


def test_version_spam_from_one_key_is_refused_with_429_and_nothing_kept(site: Site, tmp_path: Path) -> None:
    key = first_version(site, tmp_path, "spammer")
    for n in range(2, PER_HOUR + 1):
        status, body, _ = post(site, "spammer", tarball(f"print({n})".encode()), key)
        assert status == 201 and body["name"] == f"spammer@{n}", body
    status, body, headers = post(site, "spammer", tarball(b"print('one too many')"), key)
    assert status == 429, body
    assert body["detail"].startswith(f"spammer has had {PER_HOUR} versions in the last hour"), body
    assert f"TABLANETTE_VERSIONS_PER_HOUR={PER_HOUR}" in body["detail"]
    assert 3000 < int(headers["retry-after"]) <= 3600, headers  # the oldest of the hour leaves it in about an hour
    numbers, counter, sources = kept(site, "spammer")
    assert (numbers, counter) == ([1, 2, 3], 3), (numbers, counter)
    assert sources == [f"{site.arena.prefix}:source:spammer@{n}" for n in (1, 2, 3)]

    done = site.arena.tablanette("bot", "submit", str(folder(tmp_path, "again")), "--name", "spammer")
    assert done.returncode != 0, done.stdout
    said = " ".join(done.stderr.split())
    assert f"spammer has had {PER_HOUR} versions in the last hour" in said and "TABLANETTE_VERSIONS_PER_HOUR" in said
    assert kept(site, "spammer")[:2] == ([1, 2, 3], 3)


def test_a_burst_of_submissions_at_once_passes_no_more_than_the_quota(site: Site, tmp_path: Path) -> None:
    key = first_version(site, tmp_path, "burst")
    answers: list[int] = []
    start = threading.Barrier(8)

    def one(i: int) -> None:
        start.wait()
        answers.append(post(site, "burst", tarball(f"print({i})".encode()), key)[0])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(answers) == [201] * (PER_HOUR - 1) + [429] * (8 - PER_HOUR + 1), answers
    numbers, counter, sources = kept(site, "burst")
    assert numbers == list(range(1, PER_HOUR + 1)) and counter == PER_HOUR and len(sources) == PER_HOUR


def test_more_source_than_a_bot_may_keep_is_refused_with_413_until_failed_versions_give_theirs_up(
    site: Site, tmp_path: Path
) -> None:
    noise = os.urandom(400_000)  # incompressible: each archive is about 400 KB
    key = first_version(site, tmp_path, "hoarder", noise)
    status, body, _ = post(site, "hoarder", tarball(noise[::-1]), key)
    assert status == 201, body
    status, body, _ = post(site, "hoarder", tarball(noise[1:]), key)
    assert status == 413, body
    detail = body["detail"]
    assert detail.startswith("hoarder keeps 0.8 MB of source in the arena's store; this archive's 0.4 MB"), detail
    assert "TABLANETTE_SOURCE_BYTES_PER_BOT" in detail and "1.0 MB" in detail
    assert kept(site, "hoarder")[:2] == ([1, 2], 2)

    versions = Versions(site.arena.redis, site.arena.prefix)
    versions.set_state("hoarder@1", "build-failed", "the build exited with status 2")  # as a host would
    status, body, _ = post(site, "hoarder", tarball(noise[1:]), key)
    assert status == 201 and body["name"] == "hoarder@3", body
    numbers, _, sources = kept(site, "hoarder")
    assert numbers == [1, 2, 3] and sources == [f"{site.arena.prefix}:source:hoarder@{n}" for n in (2, 3)]
    assert versions.require("hoarder@1").state == "build-failed"  # its record and report stay; only the archive went


def test_the_issues_attack_six_large_versions_at_once_meets_the_default_bound() -> None:
    """Six 7.3 MB versions from one bot within seconds: with the defaults, four are kept (29 MB), the
    others refused; Redis never holds more than the bound for the bot."""
    r, prefix = redis.Redis.from_url(REDIS_URL), unique_prefix("quota-default")
    try:
        quota = Quota.of(load_settings())
        assert (quota.versions_per_hour, quota.source_bytes) == (10, 32 << 20)
        versions = Versions(r, prefix)
        archive = os.urandom(7_300_000)
        results = []
        for i in range(6):
            try:
                versions.submit("big", {"run": ["x"]}, archive, f"h{i}", quota)
                results.append("kept")
            except QuotaError as exc:
                results.append(f"refused {exc.status}")
        assert results == ["kept"] * 4 + ["refused 413"] * 2, results
        held = sum(int(r.strlen(Keys(prefix).source(f"big@{n}"))) for n in range(1, 7))
        assert held == 4 * len(archive) <= quota.source_bytes
    finally:
        clear_prefix(r, prefix)
        r.close()
