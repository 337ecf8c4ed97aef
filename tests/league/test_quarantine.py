"""A bot in quarantine (or whose account is suspended): its matches wait (never forfeited, nobody
charged), the league says why, and once an operator lifts it the held matches are played and the league
finishes by itself."""

from __future__ import annotations

import json
import sys
import time

from arena_harness import Arena

from cli.local import CLI
from store.accounts import Accounts
from store.leagues import LeagueStore
from store.results import LeagueResults
from store.tokens import BotTokens

BOTS = {"ann": "greedy", "bea": "random", "cid": "greedy"}


def wait_for(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_held_matches_wait_for_the_lift_then_the_league_finishes(arena: Arena) -> None:
    _, port = arena.start_engine()
    for name, kind in BOTS.items():
        arena.start_python_bot(kind, name, arena.add_bot(name), port)
    arena.start_worker("w1")
    arena.wait_connected(*BOTS)
    for cmd in (["league", "create", "q", "--games", "2", "--rule", "deals=1"], ["league", "add-bot", "q", *BOTS]):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stdout + done.stderr
    store = LeagueStore(arena.redis, arena.prefix)
    store.quarantine("q", "cid", "an operator's test", "")
    feeder = arena.spawn("feeder", [*CLI, "league", "start", "q", "--window", "2"])
    wait_for(lambda: store.status("q").status == "waiting", 120, "the league to wait on cid")
    status = json.loads(arena.tablanette("league", "status", "q", "--json").stdout)
    assert status["quarantined"] == {"cid": "an operator's test"}
    assert (status["done"], status["failed"]) == (2, 0), status  # ann-bea played; cid's four matches wait
    assert feeder.alive()
    lifted = arena.tablanette("league", "lift", "q", "cid")
    assert lifted.returncode == 0 and "out of quarantine" in lifted.stdout, lifted.stderr
    wait_for(lambda: not feeder.alive(), 120, "the league to finish once cid is lifted")
    assert feeder.popen.returncode == 0, feeder.tail()
    final = store.status("q")
    assert (final.status, final.done, final.failed) == ("finished", 6, 0)
    for row in LeagueResults(arena.redis, arena.prefix).standings("q"):
        assert row.games == 4 and (row.timeouts, row.illegal, row.forfeits) == (0, 0, 0), row


def test_a_suspended_accounts_bot_is_held_not_forfeited_and_plays_once_the_suspension_is_lifted(
    arena: Arena,
) -> None:
    accounts = Accounts(arena.redis, arena.prefix)
    accounts.set_policy("open")
    accounts.sign_up("carol", "a long enough secret")
    _, port = arena.start_engine()
    for name, kind in BOTS.items():
        if name == "cid":
            assert accounts.claim_bot("carol", name)
        arena.start_python_bot(kind, name, arena.add_bot(name), port)
    arena.start_worker("w1")
    arena.wait_connected(*BOTS)
    create = ["league", "create", "s", "--games", "2", "--rule", "deals=1"]
    for cmd in ([*create, "--absent-action", "forfeit", "--absent-timeout", "1"], ["league", "add-bot", "s", *BOTS]):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stdout + done.stderr
    accounts.suspend("carol", "a test")  # cid's token dies: it is absent, past the timeout, and suspended
    store = LeagueStore(arena.redis, arena.prefix)
    feeder = arena.spawn("feeder", [*CLI, "league", "start", "s", "--window", "2"])
    wait_for(lambda: store.status("s").status == "waiting", 120, "the league to wait on cid")
    time.sleep(3)  # well past the absence timeout: a forfeit would have come by now
    assert (store.status("s").done, store.status("s").failed) == (2, 0)
    assert "cid's account is suspended" in feeder.tail()
    accounts.unsuspend("carol")
    token = BotTokens(arena.redis, arena.prefix).reissue("cid")  # the owner's new token, the same program
    argv = [sys.executable, "-m", "bots", "greedy", "--name", "cid", "--address", f"127.0.0.1:{port}"]
    arena.spawn("bot-cid-again", argv, {"TABLANETTE_TOKEN": token})
    wait_for(lambda: not feeder.alive(), 120, "the league to finish once carol's suspension is lifted")
    assert feeder.popen.returncode == 0, feeder.tail()
    assert (store.status("s").status, store.status("s").done) == ("finished", 6)
    for row in LeagueResults(arena.redis, arena.prefix).standings("s"):
        assert row.games == 4 and row.forfeits == 0, row
