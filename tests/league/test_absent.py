"""A bot that is not connected: the league says it waits for it, plays everything else, and after
the league's absence limit either pauses for it (and goes on by itself when it comes) or forfeits
its remaining matches. Nobody else is charged anything."""

from __future__ import annotations

import json
import time

import pytest
from arena_harness import Arena

from cli.local import CLI
from engine_service.rules import verify_record
from store.leagues import LeagueStore
from store.results import LeagueResults

pytestmark = pytest.mark.slow
PRESENT = {"ann": "greedy", "bea": "random"}
ABSENT = "cid"


def start(arena: Arena) -> int:
    _, port = arena.start_engine()
    for name, kind in PRESENT.items():
        arena.start_python_bot(kind, name, arena.add_bot(name), port)
    arena.start_worker("w1")
    arena.wait_connected(*PRESENT)
    return port


def create(arena: Arena, name: str, *args: str) -> None:
    absent_token = arena.add_bot(ABSENT)  # registered, never started (yet)
    arena.extra_env["ABSENT_TOKEN"] = absent_token
    for cmd in (
        ["league", "create", name, "--games", "2", "--rule", "deals=1", *args],
        ["league", "add-bot", name, *PRESENT, ABSENT],
    ):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stdout + done.stderr


def status(arena: Arena, name: str) -> dict[str, object]:
    out: dict[str, object] = json.loads(arena.tablanette("league", "status", name, "--json").stdout)
    return out


def wait_for(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_the_league_pauses_for_an_absent_bot_says_so_and_goes_on_when_it_comes(arena: Arena) -> None:
    port = start(arena)
    create(arena, "pause", "--absent-timeout", "1", "--absent-action", "pause")
    feeder = arena.spawn("feeder", [*CLI, "league", "start", "pause", "--window", "2"])
    wait_for(lambda: status(arena, "pause")["status"] == "paused", 120, "the league to pause for cid")
    s = status(arena, "pause")
    assert s["done"] == 2 and ABSENT in s["absent"]  # ann-bea played; the rest waits for cid
    text = arena.tablanette("league", "status", "pause").stdout
    assert "paused" in text and "waiting for cid: not connected" in text
    arena.start_python_bot("random", ABSENT, str(arena.extra_env["ABSENT_TOKEN"]), port)
    wait_for(lambda: not feeder.alive(), 180, "the league to finish once cid came")
    s = status(arena, "pause")
    assert (s["status"], s["done"], s["failed"], s["absent"]) == ("finished", 6, 0, {})
    rows = LeagueResults(arena.redis, arena.prefix).standings("pause")
    assert all(r.forfeits == 0 and r.games == 4 for r in rows)


def test_an_absent_bot_past_the_limit_forfeits_its_matches_and_only_it_is_charged(arena: Arena) -> None:
    start(arena)
    create(arena, "forfeit", "--absent-timeout", "2", "--absent-action", "forfeit")
    run = arena.tablanette("league", "start", "forfeit", "--window", "2", timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "waiting for cid: not connected" in run.stdout + run.stderr
    s = status(arena, "forfeit")
    assert (s["status"], s["done"], s["failed"]) == ("finished", 6, 0)
    rows = {r.bot: r for r in LeagueResults(arena.redis, arena.prefix).standings("forfeit")}
    assert rows[ABSENT].forfeits == rows[ABSENT].losses == 4 and rows[ABSENT].games == 4
    assert rows["ann"].forfeits == rows["bea"].forfeits == 0
    for record in LeagueResults(arena.redis, arena.prefix).records("forfeit"):
        verify_record(record)
        if ABSENT in record["players"]:
            assert record["result"]["reason"] == "forfeit"
            assert record["result"]["forfeit_seat"] == record["players"].index(ABSENT)
    assert LeagueStore(arena.redis, arena.prefix).troubles("forfeit") == []
