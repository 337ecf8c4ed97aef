"""Cancelling a league: the queued matches are skipped, what was played stays, and a league that already
finished is never relabelled cancelled (``league cancel`` says there was nothing to cancel)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from arena_harness import REDIS_URL, scratch_redis
from typer.testing import CliRunner

from cli.league_cmd import app
from engine_service.rules import Rules
from store.league_settings import League, LeagueError
from store.leagues import LeagueStore


@pytest.fixture
def store() -> Iterator[LeagueStore]:
    with scratch_redis("cancel") as (r, prefix):
        yield LeagueStore(r, prefix)


def league_in(store: LeagueStore, name: str, status: str) -> None:
    store.create(League(name, Rules.preset("tablic")))
    store.set_status(name, status)


@pytest.mark.parametrize("status", ["created", "running", "waiting", "paused", "incomplete"])
def test_a_league_not_finished_is_cancelled_and_nothing_undoes_it(store: LeagueStore, status: str) -> None:
    league_in(store, "L", status)
    assert store.cancel("L") == "cancelled"
    store.set_status("L", "running")  # a scheduler still going says the league runs: the cancel holds
    assert store.finish_if_complete("L") is False
    assert store.is_cancelled("L") and store.status("L").status == "cancelled"
    assert store.cancel("L") == "cancelled"  # twice is the same as once


def test_a_finished_league_stays_finished(store: LeagueStore) -> None:
    league_in(store, "done", "finished")
    assert store.cancel("done") == "finished"
    assert not store.is_cancelled("done") and store.status("done").status == "finished"


def test_an_unknown_league_is_refused_and_nothing_is_written(store: LeagueStore) -> None:
    with pytest.raises(LeagueError, match="no league named 'ghost'"):
        store.cancel("ghost")
    assert store.r.keys(f"{store.prefix}:*") == []


def test_the_command_says_what_it_did(store: LeagueStore) -> None:
    league_in(store, "done", "finished")
    league_in(store, "going", "running")
    env = {"TABLANETTE_REDIS_URL": REDIS_URL, "TABLANETTE_PREFIX": store.prefix}
    runner = CliRunner()
    finished = runner.invoke(app, ["cancel", "done"], env=env)
    assert finished.exit_code == 0, finished.output
    assert "league done: already finished, every match played; nothing to cancel" in finished.output
    going = runner.invoke(app, ["cancel", "going"], env=env)
    assert going.exit_code == 0 and "league going: cancelled" in going.output, going.output
    unknown = runner.invoke(app, ["cancel", "ghost"], env=env)
    assert unknown.exit_code != 0 and "no league named 'ghost'" in unknown.output, unknown.output
