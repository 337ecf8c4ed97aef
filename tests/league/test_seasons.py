"""A standing ladder's seasons on the test Redis, with real records committed by the ledger (no workers):
a season keeps the ladder as it stood, numbered and never changed; ``--new`` fits the ladder afresh on the
results after it while the older ones stay stored; the scheduler's planner takes a new season in while it
runs, and a restarted one starts from it; the refusals; the command and the JSON API."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from itertools import count

import pytest
import redis
from arena_harness import REDIS_URL, scratch_redis
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from bots import make_bot, play_match
from cli.app import app as cli
from engine_service.rules import Rules, match_record
from scheduler.ladder import fitted, ladder, los_matrix
from scheduler.league import Feeder
from scheduler.ratings import Outcome, fit_ratings
from scheduler.seasons import take_season
from scheduler.standing import StandingPlanner
from scheduler.standing_feed import StandingKeeper
from store.audit import AuditLog
from store.keys import Keys
from store.leagues import League, LeagueError, LeagueStore
from store.ledger import Ledger
from store.results import LeagueResults
from store.seasons import SeasonError, Seasons
from web.app import create_app

RULES = Rules.preset("tablic", deals=1)
CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}
SEEDS = count()


@pytest.fixture
def arena() -> Iterator[tuple[LeagueStore, LeagueResults]]:
    with scratch_redis("seasons") as (client, prefix):
        store = LeagueStore(client, prefix)
        store.create(League("L", RULES, "standing", bots=["a", "b", "c"], seed="seasons"))
        store.create(League("event", RULES, "round-robin", bots=["a", "b"], seed="seasons"))
        yield store, LeagueResults(client, prefix)


def win(store: LeagueStore, winner: str, loser: str, match_id: str | None = None) -> None:
    """Commit a real match (greedy against random, one deal) that ``winner`` won, as a worker commits one."""
    while True:
        seed = f"s{next(SEEDS)}"
        played = play_match(RULES, seed, [make_bot("greedy", seed), make_bot("random", seed)])
        if played.result is None or played.result.winner is None:
            continue  # a draw: play another deal
        seats = [winner, loser] if played.result.winner == 0 else [loser, winner]
        mid = match_id or seed
        record = match_record(played, seats, f"L/{mid}")
        assert Ledger(store.r).commit(store.keys("L"), mid, record, seats, [CLEAN, CLEAN], 24, 1500)
        return


def test_a_season_keeps_the_ladder_as_it_stood_numbered_and_never_changed(
    arena: tuple[LeagueStore, LeagueResults],
) -> None:
    store, results = arena
    for winner, loser in [("a", "b")] * 4 + [("b", "c")] * 4 + [("a", "c")] * 2 + [("c", "a")]:
        win(store, winner, loser)
    shown = ladder(results, store.load("L"))
    first = take_season(store, results, "L", "spring \x1b[31mred\x1b[0m")
    assert first["season"] == 1 and first["label"] == "spring red"  # no escape sequence kept
    assert first["results"] == 11 and first["from"] == 0 and first["to"] == 11 and first["leader"] == "a"
    kept = Seasons(store.r, store.prefix).table("L", 1)
    fields = ("rank", "bot", "rating", "interval", "provisional", "games", "wins", "draws", "losses", "form")
    assert [{f: r[f] for f in fields} for r in kept["rows"]] == [{f: r[f] for f in fields} for r in shown["rows"]]
    assert kept["rows"][0]["wins"] == 6 and kept["groups"] == shown["groups"]

    win(store, "c", "a")
    win(store, "c", "b")
    second = take_season(store, results, "L")
    assert second["season"] == 2 and second["results"] == 13
    assert Seasons(store.r, store.prefix).table("L", 1) == kept  # an older season is never changed
    threads = [threading.Thread(target=take_season, args=(store, results, "L", f"t{i}")) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    summaries = Seasons(store.r, store.prefix).summaries("L")
    assert [s["season"] for s in summaries] == [1, 2, 3, 4, 5, 6]  # at once, each its own number
    assert sorted(s["label"] for s in summaries[2:]) == ["t0", "t1", "t2", "t3"]
    for s in summaries:  # each ladder beside its own summary
        assert {k: v for k, v in Seasons(store.r, store.prefix).table("L", s["season"]).items() if k in s} == s


def test_a_new_season_fits_only_the_results_after_it_and_the_older_ones_stay(
    arena: tuple[LeagueStore, LeagueResults],
) -> None:
    store, results = arena
    for i in range(8):
        win(store, "a", "b", f"old{i}")
    before = take_season(store, results, "L", "one", new=True)
    assert before["new"] and before["to"] == 8 and before["leader"] == "a"
    empty = ladder(results, store.load("L"))  # at once: no game this season yet
    assert empty["results"] == 0 and empty["season_from"] == 8 and all(r["games"] == 0 for r in empty["rows"])
    for i in range(5):
        win(store, "b", "a", f"new{i}")
    league = store.load("L")
    fitted(results, league, max_age=0)  # as the reader does once its cache is REFIT_EVERY seconds old
    now = ladder(results, league)
    assert now["results"] == 5 and [r["bot"] for r in now["rows"]][:2] == ["b", "a"]
    fresh = fit_ratings([Outcome.from_json(o) for o in results.outcomes("L")[8:]], league.bots)
    assert [(r["bot"], r["rating"]) for r in now["rows"]] == [(r.bot, round(r.rating, 1)) for r in fresh.ratings]
    row = {r["bot"]: r for r in now["rows"]}
    assert (row["b"]["games"], row["b"]["wins"], row["b"]["losses"]) == (5, 5, 0)  # this season's, not 13 games
    assert (row["a"]["games"], row["a"]["wins"], row["a"]["losses"]) == (5, 0, 5)
    assert los_matrix(results, league)["results"] == 5
    assert results.outcome_count("L") == 13 and results.record("L", "old0") is not None  # the old ones stay
    assert results.standing("L", "a").games == 13  # the bot's record over every season
    assert Seasons(store.r, store.prefix).table("L", 1)["rows"][0]["bot"] == "a"  # season 1 as it was


def test_a_running_planner_takes_a_new_season_in_and_a_restarted_one_starts_from_it(
    arena: tuple[LeagueStore, LeagueResults],
) -> None:
    store, results = arena
    league = store.load("L")
    keeper = StandingKeeper(store, "L", StandingPlanner(league))
    keeper.start(2, [])
    for i in range(6):
        win(store, "a", "b", f"old{i}")
    keeper.catch_up([])
    assert keeper.planner.tally.count == 6 and keeper.planner.refit().ratings[0].bot == "a"
    take_season(store, results, "L", new=True)
    for i in range(3):
        win(store, "b", "a", f"new{i}")
    keeper.catch_up([])  # the running scheduler's next look: the new season, from its first result
    planner = keeper.planner
    assert keeper.season == 6 and planner.tally.count == 3 and planner.fit is None
    games = planner.tally.games()
    assert {bot: int(games[planner.tally.index[bot]]) for bot in ("a", "b")} == {"a": 3, "b": 3}
    assert planner.refit().ratings[0].bot == "b"
    keeper.published_at = float("-inf")
    assert keeper.publish(league)
    cached = results.cached("L")
    assert cached is not None and (cached["from"], cached["results"]) == (6, 3)
    assert fitted(results, league) is cached  # readers serve the scheduler's fit of this season

    again = StandingKeeper(store, "L", StandingPlanner(league))  # a restarted scheduler
    again.start(2, [])
    assert again.season == 6 and again.read == 9 and again.planner.tally.count == 3


def test_the_feeder_takes_a_new_season_in_while_it_runs(arena: tuple[LeagueStore, LeagueResults]) -> None:
    """The real feeder, its matches played at once by the test (as by workers that take no time)."""
    store, results = arena
    for bot in ("a", "b", "c"):  # connected: the registry holds a session for each
        store.r.set(Keys(store.prefix).session(bot), "{}")
    polls, cut = count(1), {}

    def step() -> bool:
        for mid, seats in store.seats("L").items():
            if store.match("L", mid).get("status") == "queued":
                win(store, seats[0], seats[1], mid)
        n = next(polls)
        if n == 8:
            cut["at"] = take_season(store, results, "L", new=True)["to"]
        return n % 20 == 0

    feeder = Feeder(store, "L", lambda league, match: None, 2, poll=0, should_stop=step)
    feeder.run()
    keeper = feeder._keeper
    assert keeper is not None and keeper.season == cut["at"] > 0
    season = keeper.planner.tally.count  # every result read since the cut, and none before it
    assert season == keeper.read - cut["at"] > 0 and store.note("L")["results"] == season

    again = Feeder(store, "L", lambda league, match: None, 2, poll=0, should_stop=step)  # a restart
    again.run()
    assert again._keeper is not None and again._keeper.season == cut["at"]
    assert again._keeper.read - cut["at"] == again._keeper.planner.tally.count > season  # and plays on


def test_refusals(arena: tuple[LeagueStore, LeagueResults]) -> None:
    store, results = arena
    with pytest.raises(LeagueError, match="no league named 'ghost'"):
        take_season(store, results, "ghost")
    with pytest.raises(SeasonError, match="'event' is a round-robin league, not a standing ladder"):
        take_season(store, results, "event", new=True)
    with pytest.raises(SeasonError, match="league 'L' has no season 1 \\(it has none yet\\)"):
        Seasons(store.r, store.prefix).table("L", 1)
    take_season(store, results, "L")
    with pytest.raises(SeasonError, match="no season 0 \\(it has season 1\\)"):
        Seasons(store.r, store.prefix).table("L", 0)
    assert Seasons(store.r, store.prefix).start("event") == 0 and not store.r.exists(store.keys("event").seasons)


def test_the_command_says_what_it_did_and_the_audit_log_keeps_it(arena: tuple[LeagueStore, LeagueResults]) -> None:
    store, _ = arena
    win(store, "a", "b")
    env = {"TABLANETTE_REDIS_URL": REDIS_URL, "TABLANETTE_PREFIX": store.prefix}
    runner = CliRunner()
    done = runner.invoke(cli, ["league", "season", "L", "--label", "first", "--new"], env=env)
    assert done.exit_code == 0, done.output
    said = done.output.splitlines()
    assert said[0].startswith("league L: season 1 (first) kept: the ladder of 3 bots fitted on 1 results, a first")
    assert any("a new season starts after result 1" in line for line in said)
    assert any("newcomers are placed again" in line for line in said)
    listed = runner.invoke(cli, ["league", "seasons", "L"], env=env)
    assert listed.exit_code == 0 and "first" in listed.output and "a new season" in listed.output, listed.output
    shown = runner.invoke(cli, ["league", "seasons", "L", "1"], env=env)
    assert shown.exit_code == 0 and "1-0-0" in shown.output, shown.output
    for args, error in (
        (["season", "ghost"], "no league named 'ghost'"),
        (["season", "event"], "not a standing ladder"),
        (["seasons", "event"], "not a standing ladder"),
        (["seasons", "L", "7"], "league 'L' has no season 7 (it has season 1)"),
    ):
        refused = runner.invoke(cli, ["league", *args], env=env)
        assert refused.exit_code == 2 and error in refused.output, refused.output
    (entry,) = AuditLog(store.r, store.prefix).recent(kind="season_taken")
    assert entry["league"] == "L" and entry["season"] == 1 and entry["new"] is True and entry["label"] == "first"


def test_the_api_serves_the_seasons_and_404s_what_is_not_there(arena: tuple[LeagueStore, LeagueResults]) -> None:
    store, results = arena
    win(store, "a", "b")
    take_season(store, results, "L", "<b>bold</b>")
    client: redis.Redis = store.r
    with TestClient(create_app(client, store.prefix)) as web:
        listed = web.get("/api/leagues/L/seasons").json()
        assert [s["season"] for s in listed["seasons"]] == [1] and listed["seasons"][0]["label"] == "<b>bold</b>"
        one = web.get("/api/leagues/L/seasons/1").json()
        assert one["season"] == 1 and one["rows"][0]["bot"] == "a" and one["rows"][0]["wins"] == 1
        for path, detail in (
            ("/api/leagues/L/seasons/2", "league 'L' has no season 2 (it has season 1)"),
            ("/api/leagues/ghost/seasons", "no league named 'ghost'"),
            ("/api/leagues/event/seasons", "not a standing ladder"),
        ):
            answer = web.get(path)
            assert answer.status_code == 404 and detail in answer.json()["detail"], answer.text
        page = web.get("/leagues/L/seasons/1")
        assert page.status_code == 200 and "season.js" in page.text
