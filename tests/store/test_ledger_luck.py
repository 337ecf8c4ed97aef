"""Luck stored per match by the ledger: in the outcome, in the match's row and in each bot's totals;
a forfeit has none (counted by the skill fit), and a league fitted on skill orders its ladder by it.

Real matches of built-in bots, committed to the test Redis; about 2 s (the luck of a dozen matches).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix

from bots import make_bot, play_match
from engine_service.rules import Match, Rules, luck_of_record, match_record
from scheduler.ladder import ladder
from scheduler.luck_coefficient import luck_coefficient
from scheduler.outcomes import Outcome
from store.leagues import League, LeagueError, LeagueStore
from store.ledger import match_luck
from store.results import LeagueResults
from store.units import mirror_unit

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}
RULES = Rules.preset("tablic", target=31)


@pytest.fixture
def league() -> Iterator[tuple[redis.Redis, str, LeagueStore]]:
    client = redis.Redis.from_url(REDIS_URL)
    prefix = unique_prefix("luck")
    yield client, prefix, LeagueStore(client, prefix)
    clear_prefix(client, prefix)
    client.close()


def record_of(seed: str, specs: list[str], names: list[str]) -> dict:  # type: ignore[type-arg]
    bots = [make_bot(s, f"{seed}{i}") for i, s in enumerate(specs)]
    return match_record(play_match(RULES, seed, bots), names, seed)


def test_outcomes_carry_luck_and_bots_their_totals(league: tuple[redis.Redis, str, LeagueStore]) -> None:
    client, prefix, store = league
    store.create(League("L", RULES, bots=["a", "b"]))
    keys = store.keys("L")
    recs = [record_of(f"s{i}", ["greedy", "random"], ["a", "b"]) for i in range(3)]
    for i, rec in enumerate(recs):
        luck = match_luck(rec)
        assert luck == [round(x, 2) for x in luck_of_record(rec).luck]
        store.ledger.commit(keys, f"m{i}", rec, ["a", "b"], [CLEAN, CLEAN], 24, 1500, luck=luck)
    results = LeagueResults(client, prefix)
    outcomes = [Outcome.from_json(o) for o in results.outcomes("L")]
    expected = [tuple(round(x, 2) for x in luck_of_record(r).luck) for r in recs]
    assert [o.luck for o in outcomes] == expected
    rows = results.match_rows("L", ["m0", "m1", "m2"])
    assert [tuple(r["luck"]) for r in rows] == expected
    cards = results.standing("L", "a").cards()  # type: ignore[union-attr]
    raw = sum(r["score"][0] - r["score"][1] for r in recs) / 3
    assert cards["games"] == 3 and cards["raw"] == pytest.approx(raw, abs=0.01)
    assert cards["luck"] == pytest.approx(sum(x[0] for x in expected) / 3, abs=0.01)
    assert cards["skill"] == pytest.approx(cards["raw"] - cards["luck"], abs=0.011)


def test_a_forfeit_has_no_luck_and_an_old_outcome_reads_without(league: tuple[redis.Redis, str, LeagueStore]) -> None:
    client, prefix, store = league
    store.create(League("L", RULES, bots=["a", "b"]))
    match = Match(RULES, "f")
    match.forfeit(1)
    rec = match_record(match, ["a", "b"], "f")
    assert match_luck(rec) is None
    store.ledger.commit(store.keys("L"), "f", rec, ["a", "b"], [CLEAN, {**CLEAN, "forfeit": True}], 24, 1500)
    results = LeagueResults(client, prefix)
    (raw,) = results.outcomes("L")
    assert len(raw) == 5 and Outcome.from_json(raw).luck is None
    assert results.match_rows("L", ["f"])[0]["luck"] is None and results.standing("L", "a").luck_games == 0  # type: ignore[union-attr]
    assert Outcome.from_json({"m": "x", "u": "x", "t": [["a"], ["b"]], "p": [1, 0], "s": [3, 1]}).luck is None
    with pytest.raises(ValueError, match="luck for 1 teams"):
        store.ledger.commit(store.keys("L"), "g", rec, ["a", "b"], [CLEAN, CLEAN], 24, 1500, luck=[1.0])


def test_a_league_fitted_on_skill_orders_its_ladder_by_skill(
    league: tuple[redis.Redis, str, LeagueStore], capsys: pytest.CaptureFixture[str]
) -> None:
    client, prefix, store = league
    with pytest.raises(LeagueError, match="unknown fit 'luck'"):
        store.create(League("bad", RULES, fit="luck"))
    store.create(League("L", RULES, bots=["g", "r"], fit="skill"))
    assert store.load("L").fit == "skill"
    keys = store.keys("L")
    for i in range(4):
        seats = ["g", "r"] if i % 2 == 0 else ["r", "g"]
        specs = ["greedy" if s == "g" else "random" for s in seats]
        rec = record_of(f"d{i // 2}", specs, seats)
        unit = mirror_unit(f"d{i // 2}", seats)
        store.ledger.commit(keys, f"m{i}", rec, seats, [CLEAN, CLEAN], 24, 1500, unit=unit, luck=match_luck(rec))
    data = ladder(LeagueResults(client, prefix), store.load("L"))
    assert data["fit"] == "skill" and data["without_luck"] == 0
    outcomes = [Outcome.from_json(o) for o in LeagueResults(client, prefix).outcomes("L")]
    assert data["luck_correction"] == luck_coefficient(outcomes).to_json() and data["luck_correction"]["units"] == 2
    assert [r["bot"] for r in data["rows"]] == ["g", "r"]
    top = data["rows"][0]
    assert top["skill"] > 0 and "rating" in top and "luck" in top and top["skill_interval"] is not None
    from cli.ladder_cmd import print_ladder

    print_ladder(data)  # the command line's table: a skill and a luck column, the order explained
    out = capsys.readouterr().out
    assert "skill" in out and "ordered by skill" in out and f"{top['skill']:+.1f}" in out
    flat = " ".join(out.split())  # the caption as a reader reads it, however the terminal wraps it
    assert "margin: points a game over its opponents'" in flat and "form: the incremental Elo" in flat, out
