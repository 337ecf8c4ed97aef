"""The front door attacked as an outsider would: through the JSON API of the real app on a real Redis.

Every refusal must be clear and change nothing: a sign-up the policy forbids, a guessed password, a
forged cross-site request, a planted session id, one account reaching for another's bots or keys, a
suspended or deleted account's credentials.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from arena_harness import ROOT, scratch_redis
from fastapi.testclient import TestClient

from config import ArenaSettings
from hosting.source import pack
from store.accounts import Accounts
from store.audit import AuditLog
from store.tokens import BotTokens
from web.app import create_app
from web.callers import COOKIE
from web.front_door import FREE_FAILURES, LOGINS_PER_WINDOW

PASSWORD = "a long enough secret"


@pytest.fixture
def store() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("frontdoor") as (r, prefix):
        yield r, prefix


def app_on(r: redis.Redis, prefix: str, **settings: Any) -> TestClient:
    return TestClient(create_app(r, prefix, ArenaSettings(**{"signups_per_hour": 1000, **settings})))


def sign_up(client: TestClient, name: str, password: str = PASSWORD, invite: str = "") -> str:
    """Sign ``name`` up (and so log in); its CSRF token."""
    res = client.post("/api/accounts", json={"name": name, "password": password, "invite": invite})
    assert res.status_code == 201, res.text
    return str(res.json()["csrf"])


def stored(r: redis.Redis, prefix: str) -> bytes:
    """Every string and hash value under the prefix, joined: what a copy of the store would show."""
    out = []
    for k in r.scan_iter(f"{prefix}:*"):
        kind = r.type(k)
        if kind == b"string":
            out.append(r.get(k) or b"")
        elif kind == b"hash":
            out.extend(v for v in r.hgetall(k).values())
    return b"\n".join(out)


@pytest.fixture
def open_arena(store: tuple[redis.Redis, str]) -> Iterator[tuple[redis.Redis, str]]:
    Accounts(*store).set_policy("open")
    yield store


def test_sign_up_follows_the_policy_the_operator_set(store: tuple[redis.Redis, str]) -> None:
    r, prefix = store
    web, accounts = app_on(r, prefix), Accounts(r, prefix)
    res = web.post("/api/accounts", json={"name": "alice", "password": PASSWORD})
    assert (res.status_code, res.json()["detail"]) == (403, "sign-up is closed on this arena: ask its operator")
    accounts.set_policy("invite")
    assert web.post("/api/accounts", json={"name": "alice", "password": PASSWORD}).status_code == 403
    code = accounts.issue_invite()
    sign_up(web, "alice", invite=code)
    again = web.post("/api/accounts", json={"name": "bob", "password": PASSWORD, "invite": code})
    assert again.status_code == 403 and "unknown, used or expired" in again.json()["detail"]
    assert accounts.get("bob") is None and accounts.require("alice").state == "active"
    accounts.set_policy("open")
    sign_up(app_on(r, prefix), "bob")


def test_names_and_passwords_are_checked_and_only_an_argon2id_hash_is_kept(
    open_arena: tuple[redis.Redis, str],
) -> None:
    r, prefix = open_arena
    web = app_on(r, prefix)
    for name, password, status in [
        ("<script>alert(1)</script>", PASSWORD, 422),
        ("al", PASSWORD, 422),
        ("alice", "short", 422),
        ("alice", "alice is my password", 422),
        ("alice", "x" * 10_000, 422),  # refused before it is hashed
    ]:
        res = web.post("/api/accounts", json={"name": name, "password": password})
        assert res.status_code == status, (name, res.text)
        assert not Accounts(r, prefix).all()
    sign_up(web, "Alice")
    res = app_on(r, prefix).post("/api/accounts", json={"name": "alice", "password": PASSWORD})
    assert (res.status_code, res.json()["detail"]) == (409, "the name 'alice' is taken")
    kept = r.get(f"{prefix}:account:alice")
    assert kept is not None and PASSWORD.encode() not in kept
    assert json.loads(kept)["hash"].startswith("$argon2id$")


def test_a_wrong_password_and_an_unknown_name_are_the_same_refusal_and_guessing_backs_off(
    open_arena: tuple[redis.Redis, str],
) -> None:
    r, prefix = open_arena
    sign_up(app_on(r, prefix), "alice")
    web = app_on(r, prefix)
    wrong = web.post("/api/session", json={"name": "alice", "password": "not the secret"})
    unknown = web.post("/api/session", json={"name": "nobody", "password": "not the secret"})
    assert (
        (wrong.status_code, wrong.json())
        == (unknown.status_code, unknown.json())
        == (
            401,
            {"detail": "wrong name or password"},
        )
    )
    for _ in range(FREE_FAILURES - 1):
        assert web.post("/api/session", json={"name": "alice", "password": "guess"}).status_code == 401
    assert web.post("/api/session", json={"name": "alice", "password": "guess"}).status_code == 401  # locks it
    locked = web.post("/api/session", json={"name": "alice", "password": PASSWORD})  # even the right one
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) >= 1
    for _ in range(FREE_FAILURES + 1):  # a name nobody has locks the same way: the lock tells nothing
        web.post("/api/session", json={"name": "nobody", "password": "guess"})
    assert web.post("/api/session", json={"name": "nobody", "password": "guess"}).status_code == 429
    assert AuditLog(r, prefix).recent(kind="account_login_refused")
    assert not web.cookies.get(COOKIE)


def test_one_address_cannot_flood_logins_or_sign_ups(open_arena: tuple[redis.Redis, str]) -> None:
    r, prefix = open_arena
    web = app_on(r, prefix, signups_per_hour=2)
    sign_up(web, "first")
    sign_up(web, "second")
    res = web.post("/api/accounts", json={"name": "third", "password": PASSWORD})
    assert res.status_code == 429 and "sign-ups" in res.json()["detail"] and "retry-after" in res.headers
    assert Accounts(r, prefix).get("third") is None
    codes = [
        web.post("/api/session", json={"name": f"n{i:03}", "password": "guess"}).status_code
        for i in range(LOGINS_PER_WINDOW + 1)
    ]
    assert codes[:LOGINS_PER_WINDOW] == [401] * LOGINS_PER_WINDOW and codes[-1] == 429


def test_a_cookie_alone_changes_nothing_without_its_csrf_token_from_this_site(
    open_arena: tuple[redis.Redis, str],
) -> None:
    r, prefix = open_arena
    web = app_on(r, prefix)
    csrf = sign_up(web, "alice")
    forged = [
        web.post("/api/me/bots", json={"name": "evil"}),
        web.post("/api/me/bots", json={"name": "evil"}, headers={"X-CSRF-Token": "guessed"}),
        web.post("/api/me/keys", json={"label": "x"}),
        web.post("/api/me/bots", json={"name": "evil"}, headers={"X-CSRF-Token": csrf, "Origin": "http://evil.test"}),
        web.post("/api/me/delete", json={"password": PASSWORD}),
    ]
    assert [f.status_code for f in forged] == [403] * len(forged)
    assert "CSRF" in forged[0].json()["detail"] and "another site" in forged[3].json()["detail"]
    me = web.get("/api/me").json()
    assert me["bots"] == [] and me["keys"] == [] and BotTokens(r, prefix).info("evil") is None
    made = web.post(
        "/api/me/bots", json={"name": "good"}, headers={"X-CSRF-Token": csrf, "Origin": "http://testserver"}
    )
    assert made.status_code == 201


def test_a_planted_session_id_is_never_adopted_and_the_cookie_is_httponly_and_strict(
    open_arena: tuple[redis.Redis, str],
) -> None:
    r, prefix = open_arena
    sign_up(app_on(r, prefix), "alice")
    web = app_on(r, prefix)
    planted = "attacker-chose-this-session-id"
    res = web.post(
        "/api/session", json={"name": "alice", "password": PASSWORD}, headers={"Cookie": f"{COOKIE}={planted}"}
    )
    assert res.status_code == 200
    cookie = res.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and planted not in cookie
    given = cookie.split(";")[0].split("=", 1)[1]
    assert app_on(r, prefix).get("/api/me", headers={"Cookie": f"{COOKIE}={planted}"}).status_code == 401
    assert app_on(r, prefix).get("/api/me", headers={"Cookie": f"{COOKIE}={given}"}).status_code == 200
    again = app_on(r, prefix).post(  # a second login from that browser: a new session, the old one ended
        "/api/session", json={"name": "alice", "password": PASSWORD}, headers={"Cookie": f"{COOKIE}={given}"}
    )
    assert again.status_code == 200
    assert app_on(r, prefix).get("/api/me", headers={"Cookie": f"{COOKIE}={given}"}).status_code == 401


def test_one_account_cannot_touch_anothers_bots_or_keys(open_arena: tuple[redis.Redis, str]) -> None:
    r, prefix = open_arena
    alice, bob = app_on(r, prefix), app_on(r, prefix)
    a_csrf, b_csrf = sign_up(alice, "alice"), sign_up(bob, "bob")
    token = alice.post("/api/me/bots", json={"name": "ace"}, headers={"X-CSRF-Token": a_csrf}).json()["token"]
    key = alice.post("/api/me/keys", json={"label": "ci"}, headers={"X-CSRF-Token": a_csrf}).json()
    archive, _ = pack(ROOT / "bots/jsonlines")
    upload = {"Authorization": f"Bearer {key['key']}", "Content-Type": "application/gzip"}
    assert alice.post("/api/bots/hostly/versions", content=archive, headers=upload).status_code == 201
    BotTokens(r, prefix).add("operators")  # a bot the operator registered: nobody's to claim

    h = {"X-CSRF-Token": b_csrf}
    attempts = {
        "rotate": bob.post("/api/me/bots/ace/token", headers=h),
        "revoke": bob.delete("/api/me/bots/ace/token", headers=h),
        "claim": bob.post("/api/me/bots", json={"name": "ace"}, headers=h),
        "claim hosted": bob.post("/api/me/bots", json={"name": "hostly"}, headers=h),
        "claim operator's": bob.post("/api/me/bots", json={"name": "operators"}, headers=h),
        "submit": bob.post("/api/bots/hostly/versions", content=archive, headers=h),
        "revoke key": bob.delete(f"/api/me/keys/{key['id']}", headers=h),
        "visibility": bob.post("/api/bots/hostly/output-visibility", json={"public": True}, headers=h),
    }
    assert {k: v.status_code for k, v in attempts.items()} == {
        "rotate": 404,
        "revoke": 404,
        "claim": 409,
        "claim hosted": 409,
        "claim operator's": 409,
        "submit": 401,
        "revoke key": 404,
        "visibility": 401,
    }
    assert BotTokens(r, prefix).lookup(token) == "ace"
    assert [v["number"] for v in alice.get("/api/me").json()["bots"][1]["versions"]] == [1]
    assert bob.get("/api/me").json()["bots"] == []
    assert alice.get("/api/me", headers={"Authorization": f"Bearer {key['key']}"}).status_code == 200


def test_suspension_shuts_an_account_out_and_its_lift_lets_it_back_with_nothing_lost(
    open_arena: tuple[redis.Redis, str],
) -> None:
    r, prefix = open_arena
    web = app_on(r, prefix)
    csrf = sign_up(web, "alice")
    token = web.post("/api/me/bots", json={"name": "ace"}, headers={"X-CSRF-Token": csrf}).json()["token"]
    key = web.post("/api/me/keys", json={"label": "ci"}, headers={"X-CSRF-Token": csrf}).json()["key"]
    bearer = {"Authorization": f"Bearer {key}"}
    accounts = Accounts(r, prefix)
    accounts.suspend("alice", reason="spam")
    assert web.get("/api/me").status_code == 401
    assert app_on(r, prefix).get("/api/me", headers=bearer).status_code == 401
    assert BotTokens(r, prefix).lookup(token) is None
    assert app_on(r, prefix).post("/api/session", json={"name": "alice", "password": PASSWORD}).status_code == 401
    accounts.unsuspend("alice")
    assert app_on(r, prefix).get("/api/me", headers=bearer).json()["bots"][0]["token"] == "revoked"
    fresh = app_on(r, prefix).post("/api/me/bots/ace/token", headers=bearer)
    assert fresh.status_code == 200 and BotTokens(r, prefix).lookup(fresh.json()["token"]) == "ace"
    assert [e["account"] for e in AuditLog(r, prefix).recent(kind="suspended")] == ["alice"]


def test_an_account_deletes_itself_its_credentials_die_and_its_names_stay_taken(
    open_arena: tuple[redis.Redis, str],
) -> None:
    r, prefix = open_arena
    web = app_on(r, prefix)
    csrf = sign_up(web, "alice")
    token = web.post("/api/me/bots", json={"name": "ace"}, headers={"X-CSRF-Token": csrf}).json()["token"]
    key = web.post("/api/me/keys", json={"label": "ci"}, headers={"X-CSRF-Token": csrf}).json()["key"]
    wrong = web.post("/api/me/delete", json={"password": "not the secret"}, headers={"X-CSRF-Token": csrf})
    assert wrong.status_code == 403 and Accounts(r, prefix).require("alice").state == "active"
    assert web.post("/api/me/delete", json={"password": PASSWORD}, headers={"X-CSRF-Token": csrf}).status_code == 200
    assert BotTokens(r, prefix).lookup(token) is None and BotTokens(r, prefix).info("ace") is not None
    assert app_on(r, prefix).get("/api/me", headers={"Authorization": f"Bearer {key}"}).status_code == 401
    other = app_on(r, prefix)
    assert other.post("/api/accounts", json={"name": "alice", "password": PASSWORD}).status_code == 409
    b_csrf = sign_up(other, "bob")
    assert other.post("/api/me/bots", json={"name": "ace"}, headers={"X-CSRF-Token": b_csrf}).status_code == 409


def test_keys_are_shown_once_listed_by_prefix_and_dead_once_revoked(open_arena: tuple[redis.Redis, str]) -> None:
    r, prefix = open_arena
    web = app_on(r, prefix)
    csrf = sign_up(web, "alice")
    made = web.post("/api/me/keys", json={"label": "<b>ci</b>"}, headers={"X-CSRF-Token": csrf}).json()
    listed = web.get("/api/me").json()["keys"]
    assert listed == [{k: made[k] for k in ("id", "label", "created", "prefix")}] and "key" not in listed[0]
    assert made["key"].encode() not in stored(r, prefix)
    bearer = {"Authorization": f"Bearer {made['key']}"}
    assert app_on(r, prefix).get("/api/me", headers=bearer).json()["key_id"] == made["id"]  # which key asks
    assert web.delete(f"/api/me/keys/{made['id']}", headers={"X-CSRF-Token": csrf}).status_code == 200
    assert app_on(r, prefix).get("/api/me", headers=bearer).status_code == 401
    assert web.delete("/api/session", headers={"X-CSRF-Token": csrf}).status_code == 200
    assert web.get("/api/me").status_code == 401


def test_an_account_has_quotas_of_bots_and_of_versions_an_hour_over_all_its_bots(
    open_arena: tuple[redis.Redis, str],
) -> None:
    r, prefix = open_arena
    web = app_on(r, prefix, bots_per_account=2, versions_per_hour_per_account=2, hosted_versions_building_per_account=9)
    csrf = sign_up(web, "alice")
    h = {"X-CSRF-Token": csrf}
    assert web.post("/api/me/bots", json={"name": "one"}, headers=h).status_code == 201
    archive, _ = pack(ROOT / "bots/jsonlines")
    upload = {**h, "Content-Type": "application/gzip"}
    assert web.post("/api/bots/two/versions", content=archive, headers=upload).status_code == 201
    third = web.post("/api/me/bots", json={"name": "three"}, headers=h)
    assert (third.status_code, third.json()["detail"]) == (409, "an account owns at most 2 bots")
    assert web.post("/api/bots/two/versions", content=archive, headers=upload).status_code == 201
    over = web.post("/api/bots/two/versions", content=archive, headers=upload)
    assert over.status_code == 429 and "versions from this account" in over.json()["detail"]
    assert [v["number"] for v in web.get("/api/me").json()["bots"][1]["versions"]] == [1, 2]
