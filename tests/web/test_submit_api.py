"""A hosted bot's owner through the JSON API: new versions (only its owner, only a sound archive), and
requests to lift a version's quarantine."""

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
from store.audit import AuditLog
from store.leagues import LeagueStore


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


def post_json(site: Site, path: str, body: dict[str, str], key: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
    req = urllib.request.Request(site.url(path), data=json.dumps(body).encode(), headers=headers, method="POST")
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


def test_the_owner_asks_for_a_lift_which_the_operator_sees_until_lifting_it(site_and_key: tuple[Site, str]) -> None:
    site, key = site_and_key
    arena = site.arena
    site.cli("league", "create", "held")
    leagues = LeagueStore(arena.redis, arena.prefix)
    path = "/api/bots/perly/versions/1/lift-request"
    ask = {"league": "held", "message": "fixed the slow opening search in perly@2"}
    status, body = post_json(site, path, ask, key)
    assert (status, body["detail"]) == (409, "perly@1 is not in quarantine in league held")
    assert leagues.quarantine("held", "perly@1", "12 timeouts in match m1", "m1")
    for wrong in (None, "tbo_not-the-key"):
        status, body = post_json(site, path, ask, wrong)
        assert status == 401 and "owner key" in body["detail"], body
    assert post_json(site, path, {**ask, "league": "nope"}, key)[0] == 404
    assert post_json(site, "/api/bots/perly/versions/99/lift-request", ask, key)[0] == 404
    assert post_json(site, path, {**ask, "message": ""}, key)[0] == 422
    assert post_json(site, path, {**ask, "message": "x" * 2001}, key)[0] == 422
    assert "lift_request" not in leagues.quarantined("held")["perly@1"]  # nothing refused was kept

    status, made = post_json(site, path, ask, key)
    assert status == 201 and made["message"] == ask["message"] and made["bot"] == "perly@1", made
    assert leagues.quarantined("held")["perly@1"]["lift_request"]["message"] == ask["message"]
    shown = site.cli("league", "status", "held")
    assert "perly@1 in quarantine: 12 timeouts in match m1 (its owner asks for a lift:" in " ".join(shown.split())
    latest = AuditLog(arena.redis, arena.prefix).recent(1, kind="lift_requested")[0]
    assert (latest["bot"], latest["league"]) == ("perly@1", "held")

    site.cli("league", "lift", "held", "perly@1")
    assert leagues.quarantined("held") == {}
    assert leagues.quarantine("held", "perly@1", "3 forfeits in the league")  # a new quarantine: no old request
    assert "lift_request" not in leagues.quarantined("held")["perly@1"]
