"""Games that share a deal: nothing of one is served while another game of the deal is unplayed or running.

A league on mirrored deals is planned and its games are committed one by one,
as the workers would. After each commit, every GET route of the web API (taken
from the app itself, so a route added later is covered too), both record exports
and the live stream are asked about every game; no answer may hold a card that is
still hidden in a game not yet over, nor the deal seed of such a game.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from arena_harness import scratch_redis
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from bots import make_bot, play_match
from engine_service.rules import Rules, match_record
from scheduler.league import plan_league
from scheduler.pairings import PlannedMatch
from store.archiver import Archiver
from store.embargo import Embargo
from store.keys import LeagueKeys
from store.leagues import League, LeagueStore
from store.ledger import Ledger
from store.results import LeagueResults
from store.units import mirror_unit
from web.app import create_app, pages

RULES = Rules.preset("tablic", target=31)
CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}
BOTS = ["ann", "ben", "cid"]


@pytest.fixture
def arena() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("embargo") as scratch:
        yield scratch


def mirrored_league(client: redis.Redis, prefix: str, name: str = "twins", players: int = 2) -> list[PlannedMatch]:
    store = LeagueStore(client, prefix)
    rules = Rules.preset("tablic", players=players, target=31)
    store.create(League(name, rules, "round-robin", 2, deals="mirrored"))
    store.add_bots(name, BOTS if players == 3 else BOTS[:2])
    league = store.settle_deals(store.load(name))
    plan = plan_league(league, store.deal_seeds(league))
    store.write_plan(league, plan)
    return plan


def commit(client: redis.Redis, prefix: str, league: str, m: PlannedMatch) -> dict[str, Any]:
    rules = LeagueStore(client, prefix).load(league).rules
    players = [make_bot("greedy", f"{m.match_id}/{s}") for s in range(len(m.seats))]
    record = match_record(play_match(rules, m.seed, players), list(m.seats), f"{league}/{m.match_id}")
    keys = LeagueKeys(prefix, league)
    assert Ledger(client).commit(keys, m.match_id, record, m.seats, [CLEAN] * len(m.seats), 24, 1500,
                                 unit=mirror_unit(m.seed, m.seats))  # fmt: skip
    return record


def hidden_hands(record: dict[str, Any]) -> list[str]:
    """Every hand of the record's first deal as the JSON a reader would find it in (compact, as the API
    answers, or spaced, as a page might show it)."""
    hands = [hand for rnd in record["deals"][0]["hands"] for hand in rnd]
    return [json.dumps(hand, separators=sep) for hand in hands for sep in ((",", ":"), (", ", ": "))]


def every_answer(web: TestClient, league: str, plan: list[PlannedMatch], finished: set[str]) -> dict[str, str]:
    """GET every API route and page of the app for every match and bot: path -> the body it answered."""
    app: Any = web.app
    api = [path for path, ops in app.openapi()["paths"].items() if "get" in ops]
    paths = [*api, *(r.path for r in pages.routes if isinstance(r, APIRoute))]
    bodies = {}
    for template in paths:
        for m in plan:
            for bot in m.seats:
                path = template
                for name, value in (("league_id", league), ("match_id", m.match_id), ("bot", bot), ("number", "1")):
                    path = re.sub(r"\{" + name + r"(:path)?\}", value, path)
                # a game not yet played streams its events until it ends (here none come): its twin's is asked
                unplayed = "/live/" in template and m.match_id not in finished
                if "{" not in path and path not in bodies and not unplayed:
                    bodies[path] = web.get(path).text
    return bodies


def test_no_route_and_no_export_serves_a_shared_deal_before_its_last_game_is_over(
    arena: tuple[redis.Redis, str], tmp_path: Path
) -> None:
    client, prefix = arena
    plan = mirrored_league(client, prefix)
    assert {m.deal for m in plan} == {"r1/p1/d1"} and len(plan) == 2
    first = commit(client, prefix, "twins", plan[0])
    secrets_of_the_deal = [plan[0].seed, *hidden_hands(first)]

    with TestClient(create_app(client, prefix)) as api:
        check_held_then_released(client, prefix, tmp_path, api, plan, first, secrets_of_the_deal)


def check_held_then_released(
    client: redis.Redis,
    prefix: str,
    tmp_path: Path,
    api: TestClient,
    plan: list[PlannedMatch],
    first: dict[str, Any],
    secrets_of_the_deal: list[str],
) -> None:
    answers = every_answer(api, "twins", plan, {plan[0].match_id})
    assert len(answers) >= 8  # the league, its ladder, matches, replays, live, each match, each bot...
    for path, body in answers.items():
        for secret in secrets_of_the_deal:
            assert secret not in body, f"{path} serves a card (or the seed) of a deal still being played"
    held = api.get(f"/api/leagues/twins/replays/{plan[0].match_id}")
    assert held.status_code == 409 and held.json()["held"]["games_left"] == 1
    assert "shares its deal" in held.json()["detail"]
    assert api.get(f"/api/leagues/twins/live/{plan[0].match_id}").status_code == 409
    detail = api.get(f"/api/leagues/twins/matches/{plan[0].match_id}").json()
    assert detail["record"] is None and detail["score"] is None and detail["held"]["deal"] == "r1/p1/d1"
    assert detail["live_held"] is None or detail["live_held"]["games_left"] == 1
    # the last game of the deal, still to be played, may be watched: every other game of its deal is over
    assert Embargo(client, prefix).hold("twins", plan[1].match_id, live=True) is None
    assert list(LeagueResults(client, prefix).records("twins")) == []
    manifest = Archiver(client, prefix, tmp_path / "archive").export("twins", tmp_path / "export")
    assert manifest["rows"]["matches"] == 0

    second = commit(client, prefix, "twins", plan[1])
    assert api.get(f"/api/leagues/twins/replays/{plan[0].match_id}").status_code == 200
    assert [r["id"] for r in LeagueResults(client, prefix).records("twins")] == [first["id"], second["id"]]
    assert Archiver(client, prefix, tmp_path / "archive").export("twins", tmp_path / "export")["rows"]["matches"] == 2
    assert any(hand in api.get(f"/api/leagues/twins/matches/{plan[0].match_id}").text for hand in hidden_hands(first))


def test_a_table_rotation_is_held_until_its_third_game_and_a_cancelled_league_lets_go(
    arena: tuple[redis.Redis, str],
) -> None:
    client, prefix = arena
    plan = mirrored_league(client, prefix, "table", players=3)
    embargo = Embargo(client, prefix)
    assert len(plan) == 3 and len({m.seed for m in plan}) == 1
    commit(client, prefix, "table", plan[0])
    commit(client, prefix, "table", plan[1])
    assert set(embargo.holds("table", [m.match_id for m in plan])) == {m.match_id for m in plan}
    assert embargo.hold("table", plan[0].match_id).left == 1  # type: ignore[union-attr]
    LeagueStore(client, prefix).cancel("table")  # the third will never be played, and nothing runs
    assert embargo.holds("table", [m.match_id for m in plan]) == {}


def test_a_running_game_stays_held_while_its_twin_runs(arena: tuple[redis.Redis, str]) -> None:
    client, prefix = arena
    plan = mirrored_league(client, prefix, "running")
    store = LeagueStore(client, prefix)
    keys = store.keys("running")
    for m in plan:
        store.ledger.set_state(keys, m.match_id, "running")
    embargo = Embargo(client, prefix)
    assert set(embargo.holds("running", [m.match_id for m in plan], live=True)) == {m.match_id for m in plan}
    store.cancel("running")  # cancelled, but both still run: still held
    assert set(embargo.holds("running", [m.match_id for m in plan], live=True)) == {m.match_id for m in plan}


def test_independent_deals_hold_nothing_and_a_replanned_old_league_is_counted(
    arena: tuple[redis.Redis, str],
) -> None:
    client, prefix = arena
    store = LeagueStore(client, prefix)
    store.create(League("solo", RULES, "round-robin", 2))
    store.add_bots("solo", BOTS[:2])
    league = store.settle_deals(store.load("solo"))
    assert league.dealt == "independent"  # connected bots may remember a deal: auto deals them apart
    plan = plan_league(league, store.deal_seeds(league))
    assert len({m.seed for m in plan}) == len(plan) and not any(m.deal for m in plan)
    store.write_plan(league, plan)
    commit(client, prefix, "solo", plan[0])
    assert Embargo(client, prefix).holds("solo", [m.match_id for m in plan]) == {}

    # a league planned before deals were counted: its twins get their deal when the plan is written again
    old = mirrored_league(client, prefix, "old")
    keys = store.keys("old")
    for m in old:
        client.hdel(keys.match(m.match_id), "deal")
    client.delete(keys.open_deals)
    commit(client, prefix, "old", old[0])
    assert Embargo(client, prefix).holds("old", [old[0].match_id]) == {}  # not counted: not held (as before)
    store.write_plan(store.load("old"), old)
    assert set(Embargo(client, prefix).holds("old", [old[0].match_id])) == {old[0].match_id}
    commit(client, prefix, "old", old[1])
    assert Embargo(client, prefix).holds("old", [m.match_id for m in old]) == {}
