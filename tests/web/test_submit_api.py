"""Submitting a hosted bot's new version through the JSON API: only its owner, only a sound archive."""

from __future__ import annotations

import io
import json
import tarfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from arena_harness import ROOT, new_arena
from web_kit import Site

from cli.local import CLI, free_port
from hosting.source import MAX_PACKED, pack


@pytest.fixture(scope="module")
def site_and_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, str]]:
    arena = new_arena("submitapi", tmp_path_factory.mktemp("submitapi"))
    try:
        port = free_port()
        site = Site(arena, f"http://127.0.0.1:{port}", arena.spawn("web", [*CLI, "web", "--port", str(port)]))
        out = site.cli("bot", "submit", str(ROOT / "bots/jsonlines"), "--name", "perly")
        key = next((line for line in out.splitlines() if line.startswith("tbo_")), "")
        assert key, out
        again = site.cli("bot", "submit", str(ROOT / "bots/jsonlines"), "--name", "perly")
        assert "owner key" not in again  # shown once, with the first version only
        site.wait_up()
        yield site, key
    finally:
        arena.close()


def post(site: Site, bot: str, body: bytes, key: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/gzip"} | ({"Authorization": f"Bearer {key}"} if key else {})
    req = urllib.request.Request(site.url(f"/api/bots/{bot}/versions"), data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def tarball(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_the_owner_submits_a_new_version_with_the_same_source_hash_as_the_cli(site_and_key: tuple[Site, str]) -> None:
    site, key = site_and_key
    folder = ROOT / "bots/jsonlines"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:  # as `tar czf perly.tar.gz -C bots/jsonlines .` makes it
        tar.add(folder, arcname=".")
    upload = buf.getvalue()
    status, body = post(site, "perly", upload, key)
    assert status == 201, body
    assert body["name"] == "perly@3" and body["state"] == "submitted"
    assert body["source_hash"] == pack(folder)[1]  # packed the arena's way: the same files, the same hash
    assert [v["name"] for v in site.api("/bots/perly")["versions"]][:1] == ["perly@3"]


@pytest.mark.parametrize("key", [None, "tbo_wrong", "tbl_a-bot-token"])
def test_anyone_but_the_owner_is_refused(site_and_key: tuple[Site, str], key: str | None) -> None:
    site, _ = site_and_key
    before = len(site.api("/bots/perly")["versions"])
    status, body = post(site, "perly", tarball({"bot.toml": b'run = ["x"]'}), key)
    assert status == 401 and "owner key" in body["detail"], body
    assert len(site.api("/bots/perly")["versions"]) == before


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({"greedy.pl": b"print 1"}, "has no bot.toml"),
        ({"bot.toml": b'run = "perl greedy.pl"'}, '"run" must be a list of strings'),
        ({"../escape.txt": b"x", "bot.toml": b'run = ["x"]'}, "lies outside its folder"),
    ],
)
def test_a_bad_submission_says_why_and_keeps_nothing(
    site_and_key: tuple[Site, str], files: dict[str, bytes], says: str
) -> None:
    site, key = site_and_key
    before = len(site.api("/bots/perly")["versions"])
    status, body = post(site, "perly", tarball(files), key)
    assert status == 422 and says in body["detail"], body
    assert len(site.api("/bots/perly")["versions"]) == before


def test_garbage_and_oversized_uploads_are_refused(site_and_key: tuple[Site, str]) -> None:
    site, key = site_and_key
    status, body = post(site, "perly", b"not a tarball at all", key)
    assert status == 422 and "cannot unpack the source" in body["detail"], body
    status, body = post(site, "perly", b"\0" * (MAX_PACKED + 1), key)
    assert status == 413, body
    status, body = post(site, "nobody-here", tarball({"bot.toml": b'run = ["x"]'}), key)
    assert status == 401, body  # another bot's key (or none) never submits
