"""A league an older arena wrote, its form under the old key ``...:ladder``: whichever process touches it
first (a reader, the scheduler's plan, the ledger's commit) renames the key to ``...:form``, once, and no
rating is lost or reset to the initial one. Real Redis, real matches of built-in bots."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix

from bots import make_bot, play_match
from engine_service.rules import Rules, match_record
from scheduler.league import plan_league
from store.keys import LeagueKeys
from store.leagues import League, LeagueStore
from store.results import LeagueResults

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}
RULES = Rules.preset("tablic", target=31)
OLD = {"a": 1700.25, "b": 1299.75}
"""The form the older arena left."""


@pytest.fixture
def old_league() -> Iterator[tuple[redis.Redis, str, LeagueKeys]]:
    """League ``L`` as an older arena left it: its form in ``...:ladder``, no ``...:form``."""
    client = redis.Redis.from_url(REDIS_URL)
    prefix = unique_prefix("upgrade")
    store = LeagueStore(client, prefix)
    store.create(League("L", RULES, bots=["a", "b"]))
    keys = store.keys("L")
    client.zadd(keys.legacy_form, OLD)
    yield client, prefix, keys
    clear_prefix(client, prefix)
    client.close()


def form(client: redis.Redis, key: str) -> dict[str, float]:
    return {k.decode(): v for k, v in client.zrange(key, 0, -1, withscores=True)}


def test_a_reader_renames_the_old_key_and_reads_the_old_form(old_league: tuple[redis.Redis, str, LeagueKeys]) -> None:
    client, prefix, keys = old_league
    rows = LeagueResults(client, prefix).standings("L")
    assert {r.bot: r.rating for r in rows} == OLD
    assert not client.exists(keys.legacy_form) and form(client, keys.form) == OLD
    assert LeagueResults(client, prefix).form_rank("L", "a") == 1  # a second process: nothing left to do


def test_planning_an_old_league_keeps_its_form(old_league: tuple[redis.Redis, str, LeagueKeys]) -> None:
    """The scheduler restarted on new code writes the initial form for every bot that has none: the
    old form must be in place first, or every bot would start again from 1500."""
    client, prefix, keys = old_league
    store = LeagueStore(client, prefix)
    league = store.load("L")
    store.write_plan(league, plan_league(league))
    assert form(client, keys.form) == OLD and not client.exists(keys.legacy_form)


def test_a_commit_continues_from_the_old_form(old_league: tuple[redis.Redis, str, LeagueKeys]) -> None:
    """A worker on new code commits a match of a league nothing else has touched since the upgrade."""
    client, prefix, keys = old_league
    bots = [make_bot("greedy", "s0"), make_bot("random", "s1")]
    record = match_record(play_match(RULES, "s", bots), ["a", "b"], "s")
    assert LeagueStore(client, prefix).ledger.commit(keys, "m", record, ["a", "b"], [CLEAN, CLEAN], 24, 1500)
    after = form(client, keys.form)
    assert not client.exists(keys.legacy_form)
    assert after["a"] + after["b"] == pytest.approx(sum(OLD.values()))
    assert after["a"] == pytest.approx(OLD["a"], abs=24)  # a K of 24 moves it less than 24 from where it was


def test_a_league_already_on_the_new_key_is_never_overwritten(old_league: tuple[redis.Redis, str, LeagueKeys]) -> None:
    """Both keys there (an old process wrote its old key again after the upgrade): the new one wins,
    the old one is left for a person to look at, and nothing is renamed over the form."""
    client, prefix, keys = old_league
    client.zadd(keys.form, {"a": 1600.0, "b": 1400.0})
    assert {r.bot: r.rating for r in LeagueResults(client, prefix).standings("L")} == {"a": 1600.0, "b": 1400.0}
    assert form(client, keys.legacy_form) == OLD


def test_a_league_is_upgraded_once_per_client_however_many_readers_it_makes(
    old_league: tuple[redis.Redis, str, LeagueKeys], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scheduler makes a reader each time it reads: only the first may ask Redis to upgrade."""
    client, prefix, _ = old_league
    asked: list[object] = []
    evalsha = client.evalsha
    monkeypatch.setattr(client, "evalsha", lambda *a, **kw: asked.append(a) or evalsha(*a, **kw))
    for _ in range(3):
        assert {r.bot: r.rating for r in LeagueResults(client, prefix).standings("L")} == OLD
    assert len(asked) == 1
