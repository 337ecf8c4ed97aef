"""A bot in quarantine: its matches wait (never forfeited, nobody charged), the league says why, and
once an operator lifts it the held matches are played and the league finishes by itself."""

from __future__ import annotations

import json
import time

from arena_harness import Arena

from cli.local import CLI
from store.leagues import LeagueStore
from store.results import LeagueResults

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
