"""A league's settings are spelled once (store.league_settings): the store, its check and the
``league create`` options all come from the fields of ``League``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields, replace
from typing import Any

import pytest
import typer
from arena_harness import scratch_redis

from cli.league_cmd import app
from engine_service.rules import Rules
from store.league_settings import League, LeagueError, check, options, settings
from store.leagues import LeagueStore

RULES = Rules.preset("tablic")


@pytest.fixture
def store() -> Iterator[LeagueStore]:
    with scratch_redis("settings") as (r, prefix):
        yield LeagueStore(r, prefix)


def test_every_field_but_the_name_and_rules_is_a_setting_with_help() -> None:
    named = {f.name for f, _ in settings()}
    assert named == {f.name for f in fields(League)} - {"league_id", "rules"}
    assert all(s.help.strip() for _, s in settings())


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"format": "swiss"}, "unknown format 'swiss'; one of: round-robin, double-round-robin"),
        ({"clock": "sundial"}, "unknown clock 'sundial'; one of: wall, cpu"),
        ({"fit": "luck"}, "unknown fit 'luck'; one of: auto, win-loss, skill"),
        ({"absent_action": "sulk"}, "unknown absent action 'sulk'; one of: pause, forfeit"),
        ({"games": 0}, "games must be at least 1, not 0"),
        ({"confidence": 0.3}, "confidence must be at least 0.5, not 0.3"),
        ({"confidence": 1.0}, "confidence must be at most 0.9999, not 1.0"),
        ({"quarantine_timeouts": -1}, "quarantine_timeouts must be at least 0, not -1"),
        ({"latency_credit_ms": 10_001}, "latency_credit_ms must be at most 10000, not 10001"),
        ({"time_bank_ms": -5}, "time_bank_ms must be at least 0, not -5"),
    ],
)
def test_a_setting_out_of_bounds_is_refused_by_name_and_nothing_is_stored(
    store: LeagueStore, change: dict[str, Any], error: str
) -> None:
    league = replace(League("bad", RULES), **change)
    with pytest.raises(LeagueError, match=error):
        check(league)
    with pytest.raises(LeagueError, match=error):
        store.create(league)
    assert not store.exists("bad") and store.league_ids() == []


def test_the_defaults_and_the_edges_pass() -> None:
    check(League("ok", RULES))
    check(League("edge", RULES, games=1, confidence=0.9999, latency_credit_ms=10_000, time_bank_ms=3_600_000))


def test_every_setting_reads_back_as_it_was_stored(store: LeagueStore) -> None:
    league = League(
        "full",
        Rules.preset("tablic", players=3),
        format="adaptive",
        games=4,
        deals="independent",
        champion="greedy",
        k=16.0,
        initial=1200.0,
        seed="s",
        absent_timeout=30.0,
        absent_action="forfeit",
        confidence=0.9,
        fit="skill",
        budget=99,
        quarantine_illegal=0,
        quarantine_timeouts=1,
        quarantine_forfeits=2,
        clock="cpu",
        wall_cap_ms=700,
        latency_credit_ms=50,
        time_bank_ms=2_000,
    )
    store.create(league)
    assert store.load("full") == league


def test_league_create_has_one_option_per_setting_with_its_default_and_help() -> None:
    create = typer.main.get_command(app).commands["create"]  # type: ignore[attr-defined]
    params = {p.name: p for p in create.params}
    for name, _, default, setting in options():
        assert name in params, f"league create has no option for the setting {name}"
        assert params[name].param_type_name == "option" and params[name].default == default
        assert setting.help in params[name].help
    # set by add-bot and remove-bot (bots, retired), the scheduler (status, and how it deals: dealt), --elo0..,
    # the host
    fixed = {"bots", "retired", "status", "dealt", "sprt", "reference", "preflight"}
    assert {f.name for f, s in settings() if not s.option} == fixed
    assert {"name", "preset", "players", "rule", "reference", "elo0", "elo1", "alpha", "beta"} <= set(params)
