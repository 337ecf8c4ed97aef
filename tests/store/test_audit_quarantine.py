"""The audit log (bounded, filterable, texts cut) and a league's quarantine (held with a reason, lifted)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import redis
from arena_harness import scratch_redis

from engine_service.rules import Rules
from store import audit as audit_module
from store.audit import AuditLog
from store.leagues import League, LeagueStore
from store.tokens import BotTokens


@pytest.fixture
def client() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("audit") as scratch:
        yield scratch


def test_the_audit_log_keeps_the_newest_events_and_filters_them(
    client: tuple[redis.Redis, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    r, prefix = client
    monkeypatch.setattr(audit_module, "KEEP", 5)
    log = AuditLog(r, prefix)
    for i in range(8):
        log.record("login" if i % 2 else "login_refused", bot=f"b{i}", peer="ipv4:127.0.0.1")
    events = log.recent(limit=50)
    assert [e["bot"] for e in events] == ["b7", "b6", "b5", "b4", "b3"]  # newest first, only the last 5 kept
    assert [e["bot"] for e in log.recent(kind="login")] == ["b7", "b5", "b3"]
    assert [e["bot"] for e in log.recent(bot="b6")] == ["b6"]
    assert [e["bot"] for e in log.recent(limit=1, kind="login_refused")] == ["b6"]


def test_audit_texts_are_cut_so_a_client_cannot_grow_the_log(client: tuple[redis.Redis, str]) -> None:
    r, prefix = client
    AuditLog(r, prefix).record("login_refused", bot="x" * 10_000, reason="unknown or revoked token")
    (raw,) = r.lrange(f"{prefix}:audit", 0, -1)
    assert len(raw) < 400
    assert json.loads(raw)["bot"].endswith("...")


def test_issuing_and_revoking_tokens_is_audited(client: tuple[redis.Redis, str]) -> None:
    r, prefix = client
    tokens = BotTokens(r, prefix)
    token = tokens.add("ann")
    tokens.revoke("ann")
    kinds = [(e["event"], e["bot"], e["token_prefix"]) for e in AuditLog(r, prefix).recent()]
    assert kinds == [("revoked", "ann", token[:8]), ("token_issued", "ann", token[:8])]


def test_a_quarantine_has_a_reason_shows_in_the_status_and_is_lifted(client: tuple[redis.Redis, str]) -> None:
    r, prefix = client
    store = LeagueStore(r, prefix)
    league = League("q", Rules.preset("tablic"), quarantine_illegal=5)
    league.bots = ["ann", "bob"]
    store.create(league)
    assert store.load("q").quarantine_illegal == 5
    assert store.load("q").quarantine_timeouts == 10  # the defaults
    assert store.quarantine("q", "bob", "25 illegal answers in match m1", "m1")
    assert not store.quarantine("q", "bob", "again", "m2")  # the first reason stays
    status = store.status("q")
    assert status.quarantined == {"bob": "25 illegal answers in match m1"}
    assert status.waiting_note() == "bob in quarantine: 25 illegal answers in match m1"
    assert status.to_json()["quarantined"] == {"bob": "25 illegal answers in match m1"}
    assert store.quarantined("q")["bob"]["match"] == "m1"
    assert store.lift("q", "bob")
    assert not store.lift("q", "bob")
    assert store.status("q").quarantined == {}
