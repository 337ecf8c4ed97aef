"""An account's hosted bots, all together, attacked as an outsider would: source kept, versions building at once,
and bots in service at once, through the real app's JSON API and the real store on a real Redis.

A refusal must say the figure, the bound and what to do, and change nothing: no version, no archive, no bot
name claimed, no count of the account's hour spent. Two uploads at once at the bound: one passes. A bound is
freed as soon as a build ends, however it ends.
"""

from __future__ import annotations

import contextlib
import io
import os
import tarfile
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from arena_harness import scratch_redis
from fastapi.testclient import TestClient

from config import ArenaSettings
from engine_service.rules import Rules
from scheduler.admission import HELD, admit
from store.account_quotas import AccountQuota
from store.accounts import Accounts
from store.keys import Keys
from store.league_settings import League
from store.leagues import LeagueStore
from store.versions import Quota, QuotaError, Versions
from web.app import create_app

PASSWORD = "a long enough secret"
TOML = b'language = "python"\nprotocol = "jsonlines"\nrun = ["python3", "bot.py"]\n'
MB = 1 << 20


def tarball(payload: bytes = b"print('hi')\n") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("bot.toml", TOML), ("bot.py", payload)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def noise(size: int) -> bytes:
    """``size`` bytes that no gzip makes smaller: the archive keeps about as many."""
    return os.urandom(size)


@pytest.fixture
def store() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("hostedquota") as (r, prefix):
        Accounts(r, prefix).set_policy("open")
        yield r, prefix


def signed_up(r: redis.Redis, prefix: str, name: str = "alice", **settings: Any) -> tuple[TestClient, dict[str, str]]:
    """A web app with these settings, and an account's API key headers for uploads."""
    web = TestClient(create_app(r, prefix, ArenaSettings(**{"signups_per_hour": 1000, **settings})))
    res = web.post("/api/accounts", json={"name": name, "password": PASSWORD})
    csrf = res.json()["csrf"]
    key = web.post("/api/me/keys", json={"label": "ci"}, headers={"X-CSRF-Token": csrf}).json()["key"]
    return web, {"Authorization": f"Bearer {key}", "Content-Type": "application/gzip"}


def hour_spent(r: redis.Redis, prefix: str, account: str) -> int:
    return int(r.get(Keys(prefix).limit("account-versions", account)) or 0)


def nothing_of(r: redis.Redis, prefix: str, bot: str) -> None:
    """Nothing of ``bot`` is kept: no version, no number, no archive, no owner."""
    keys = Keys(prefix)
    assert not r.exists(keys.versions(bot)) and not r.hexists(keys.hosted, bot)
    assert not list(r.scan_iter(keys.source(f"{bot}@*")))
    assert not r.hexists(keys.bot_account, bot) and bot not in Accounts(r, prefix).bots_of("alice")


def test_versions_building_at_once_are_bounded_and_freed_when_a_build_ends(store: tuple[redis.Redis, str]) -> None:
    r, prefix = store
    web, upload = signed_up(r, prefix, hosted_versions_building_per_account=2)
    assert web.post("/api/bots/one/versions", content=tarball(), headers=upload).status_code == 201
    assert web.post("/api/bots/two/versions", content=tarball(), headers=upload).status_code == 201
    spent = hour_spent(r, prefix, "alice")
    for bot in ("one", "three"):  # a new version of a bot, or a new bot: the same refusal
        over = web.post(f"/api/bots/{bot}/versions", content=tarball(), headers=upload)
        assert over.status_code == 429 and over.headers["retry-after"] == "60", over.text
        assert over.json()["detail"] == (
            "account alice has 2 versions building or in preflight (one@1, two@1), the most an account may have "
            "at once (TABLANETTE_HOSTED_VERSIONS_BUILDING_PER_ACCOUNT=2): submit again once one of them is ready "
            "or has failed"
        )
    nothing_of(r, prefix, "three")
    assert [v.number for v in Versions(r, prefix).of("one")] == [1] and hour_spent(r, prefix, "alice") == spent

    versions = Versions(r, prefix)
    versions.set_state("one@1", "building")  # a host took it: still busy
    assert web.post("/api/bots/three/versions", content=tarball(), headers=upload).status_code == 429
    versions.set_state("one@1", "build-failed", "boom")  # its build ended: the place is free at once
    assert web.post("/api/bots/three/versions", content=tarball(), headers=upload).status_code == 201
    versions.set_state("two@1", "preflight")
    assert web.post("/api/bots/one/versions", content=tarball(), headers=upload).status_code == 429
    versions.set_state("two@1", "ready")  # a preflight passed frees it too
    assert web.post("/api/bots/one/versions", content=tarball(), headers=upload).status_code == 201


def test_source_kept_by_an_account_is_bounded_over_all_its_bots_and_a_refusal_keeps_nothing(
    store: tuple[redis.Redis, str],
) -> None:
    r, prefix = store
    web, upload = signed_up(r, prefix, hosted_source_bytes_per_account=MB, hosted_versions_building_per_account=9)
    assert web.post("/api/bots/big/versions", content=tarball(noise(600_000)), headers=upload).status_code == 201
    spent = hour_spent(r, prefix, "alice")
    over = web.post("/api/bots/more/versions", content=tarball(noise(600_000)), headers=upload)
    assert over.status_code == 413, over.text
    detail = over.json()["detail"]
    assert detail.startswith(
        "account alice keeps 0.6 MB of hosted source; this archive's 0.6 MB would pass the most"
    ), detail
    assert "1.0 MB (TABLANETTE_HOSTED_SOURCE_BYTES_PER_ACCOUNT)" in detail and "ask the arena's operator" in detail
    nothing_of(r, prefix, "more")  # not even its name: anyone may claim it still
    assert hour_spent(r, prefix, "alice") == spent
    assert web.get("/api/me", headers=upload).json()["bots"] == [{"bot": "big", "kind": "hosted", "versions": [
        {"name": "big@1", "number": 1, "state": "submitted"}
    ]}]  # fmt: skip

    Versions(r, prefix).set_state("big@1", "build-failed", "boom")  # nothing builds it again: its source may go
    assert web.post("/api/bots/more/versions", content=tarball(noise(600_000)), headers=upload).status_code == 201
    assert not r.exists(Keys(prefix).source("big@1")) and r.exists(Keys(prefix).source("more@1"))


def test_two_uploads_at_once_at_the_bound_only_one_passes(store: tuple[redis.Redis, str]) -> None:
    """Store level, eight threads at once, to two bots or one: the account's bound holds under the race."""
    r, prefix = store
    accounts, versions = Accounts(r, prefix), Versions(r, prefix)
    accounts.sign_up("alice", PASSWORD)
    bots = [f"b{i}" for i in range(8)]
    for bot in bots:
        assert accounts.claim_bot("alice", bot)
    manifest = {"language": "python", "protocol": "jsonlines", "run": ["python3", "bot.py"]}

    def race(quota: AccountQuota, archive: bytes, to: list[str]) -> list[str]:
        start, passed = threading.Barrier(len(to)), []

        def one(bot: str) -> None:
            start.wait()
            with contextlib.suppress(QuotaError):
                passed.append(versions.submit(bot, manifest, archive, "h", Quota(100, 32 * MB, quota)).name)

        threads = [threading.Thread(target=one, args=(bot,)) for bot in to]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return passed

    building = race(AccountQuota(64 * MB, 1, 5), b"x" * 100, bots)
    assert len(building) == 1, building
    versions.set_state(building[0], "ready")
    again = race(AccountQuota(64 * MB, 1, 5), b"x" * 100, ["b0"] * 8)  # one bot, eight uploads
    assert len(again) == 1, again
    versions.set_state(again[0], "ready")

    bound = versions.account_usage("alice").kept + 3 * MB
    sized = race(AccountQuota(bound, 100, 5), b"y" * (2 * MB), bots)  # each fits alone, no two together
    assert len(sized) == 1, sized
    made = sorted(v.name for bot in bots for v in versions.of(bot))
    assert made == sorted([building[0], again[0], sized[0]]), made
    assert versions.account_usage("alice").kept <= bound


def test_hosted_bots_in_service_are_bounded_at_admission_and_one_held_back_says_why(
    store: tuple[redis.Redis, str],
) -> None:
    r, prefix = store
    accounts, leagues, versions = Accounts(r, prefix), LeagueStore(r, prefix), Versions(r, prefix)
    accounts.sign_up("alice", PASSWORD)
    leagues.create(League("open", Rules.preset("tablic"), format="standing", admit="accounts"))
    manifest = {"language": "python", "protocol": "jsonlines", "run": ["python3", "bot.py"]}
    for bot in ("first", "second"):
        assert accounts.claim_bot("alice", bot)
        versions.submit(bot, manifest, b"x", "h")
        versions.set_state(f"{bot}@1", "ready")
    assert admit(leagues, leagues.load("open"), active=1) == ["first@1"]  # the older submission first
    held = versions.require("second@1")
    assert held.state == "ready" and held.note.startswith(HELD), held.note
    assert "account alice has 1 hosted bots in service (first)" in held.note
    assert "TABLANETTE_HOSTED_VERSIONS_ACTIVE_PER_ACCOUNT=1" in held.note
    assert admit(leagues, leagues.load("open"), active=1) == []  # still held, still saying so

    versions.submit("first", manifest, b"x", "h")
    versions.set_state("first@2", "ready")
    assert admit(leagues, leagues.load("open"), active=1) == ["first@2"]  # a newer version takes its place
    assert leagues.load("open").bots == ["first@2"]

    leagues.remove_bots("open", ["first@2"])  # the operator takes it out: a place frees
    assert admit(leagues, leagues.load("open"), active=1) == ["second@1"]
    assert versions.require("second@1").note == ""  # it plays: the note is gone
