"""The operator's `tablanette account` commands, as a subprocess on a real arena's Redis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import new_arena

from cli.local import LocalArena
from store.accounts import Accounts
from store.tokens import BotTokens


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[LocalArena]:
    a = new_arena("accountcli", tmp_path)
    try:
        yield a
    finally:
        a.close()


def run(arena: LocalArena, *args: str, ok: bool = True) -> str:
    done = arena.tablanette("account", *args)
    assert (done.returncode == 0) == ok, f"tablanette account {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_the_operator_opens_invites_lists_suspends_and_deletes(arena: LocalArena) -> None:
    accounts = Accounts(arena.redis, arena.prefix)
    assert "sign-up: closed" in run(arena, "policy")
    assert "must be one of open, invite, closed" in run(arena, "policy", "wide", ok=False)
    assert "sign-up: invite" in run(arena, "policy", "invite")
    codes = run(arena, "invite", "--count", "2").split()
    assert len(codes) == 2 and all(c.startswith("tbi_") for c in codes)
    accounts.sign_up("alice", "a long enough secret", codes[0])
    accounts.claim_bot("alice", "ace")
    token = BotTokens(arena.redis, arena.prefix).add("ace")
    listed = run(arena, "list")
    assert "alice" in listed and "active" in listed and "ace" in listed
    assert "alice: suspended" in run(arena, "suspend", "alice", "--reason", "spam")
    assert accounts.require("alice").state == "suspended"
    assert BotTokens(arena.redis, arena.prefix).lookup(token) is None
    assert "alice: active" in run(arena, "unsuspend", "alice")
    assert "no account named 'nobody'" in run(arena, "suspend", "nobody", ok=False)
    assert "alice: deleted" in run(arena, "delete", "alice", "--yes")
    assert accounts.authenticate("alice", "a long enough secret") is None
    assert "deleted" in run(arena, "list")
