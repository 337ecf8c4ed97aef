"""Records (docs/records.md): the format, byte-identical round trips, and re-verification of tampered records."""

from __future__ import annotations

import copy
import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rules_testkit import play_match, random_policy

from engine_service.rules import (
    FORMAT,
    Match,
    MatchResult,
    Play,
    RecordError,
    Rules,
    card_names,
    deal_layout,
    dumps,
    loads,
    match_record,
    read_records,
    verify_record,
    write_records,
)

Record = dict[str, Any]


def played_match(preset: str = "tablic", players: int = 2, seed: str = "rec", **overrides: Any) -> Match:
    rules = Rules.preset(preset, players=players, **{"target": 40, **overrides})
    return play_match(Match(rules, seed=seed), random_policy(random.Random(seed)))


def record_of(match: Match, record_id: str = "league/1") -> Record:
    return match_record(match, [f"bot{s}" for s in range(match.rules.players)], record_id)


@pytest.fixture(scope="module")
def record() -> Record:
    """A finished two-player tablic match of several deals."""
    rec = record_of(played_match())
    assert len(rec["deals"]) >= 3
    return rec


# ------------------------------------------------------------------ the format


def test_record_has_every_field_of_records_md(record: Record) -> None:
    assert list(record) == ["format", "id", "rules", "players", "teams", "seed", "deals", "score", "result"]
    assert record["format"] == FORMAT == "tablanette-record/1"
    assert record["id"] == "league/1"
    assert record["rules"] == {"preset": "tablic", "target": 40}
    assert record["players"] == ["bot0", "bot1"]
    assert record["teams"] == [[0], [1]]
    assert record["seed"] == "rec"
    for k, deal in enumerate(record["deals"]):
        assert list(deal) == ["dealer", "table", "hands", "plays", "leftover", "score"]
        assert deal["dealer"] == k % 2
        assert len(deal["table"]) == 4
        dealt = deal["table"] + [c for rnd in deal["hands"] for hand in rnd for c in hand]
        assert sorted(dealt) == sorted({*dealt}) and len(dealt) == 52  # together the whole deck
        for play in deal["plays"]:
            assert set(play) <= {"seat", "card", "captured", "bonus", "auto"}
            assert play["captured"] == sorted(play["captured"], key=lambda c: Play.parse(c).card)
        assert set(deal["leftover"]) == {"team", "cards"}
        assert len(deal["score"]) == 2
    assert record["score"] == [sum(d["score"][t] for d in record["deals"]) for t in range(2)]
    assert record["result"]["reason"] == "target"


def test_partnership_record_teams() -> None:
    rec = record_of(played_match("tablic", 4))
    assert rec["teams"] == [[0, 2], [1, 3]]
    assert all(len(d["score"]) == 2 for d in rec["deals"])
    assert len(rec["score"]) == 2


def test_dumps_loads_round_trip_is_byte_identical(record: Record) -> None:
    line = dumps(record)
    assert "\n" not in line
    assert loads(line) == record
    assert dumps(loads(line)) == line
    assert json.loads(line) == record


def test_same_rules_seed_and_plays_give_the_same_bytes(record: Record) -> None:
    original = played_match()
    replay = Match(original.rules, seed=original.seed)
    for deal in original.deals:
        for p in deal.plays:
            replay.play(p.play, p.auto)
    assert dumps(record_of(replay)) == dumps(record_of(original)) == dumps(record)


def test_verify_replays_to_the_identical_record(record: Record) -> None:
    match = verify_record(loads(dumps(record)))
    assert match.result == MatchResult(record["result"]["winner"], "target")
    assert match.totals == record["score"]
    assert dumps(record_of(match)) == dumps(record)


def test_json_lines_write_and_read(tmp_path: Path, record: Record) -> None:
    other = record_of(played_match(seed="second"), "league/2")
    out = io.StringIO()
    assert write_records([record, other], out) == 2
    path = tmp_path / "records.jsonl"
    path.write_text(out.getvalue() + "\n", encoding="utf-8")  # a blank line is skipped
    assert out.getvalue().count("\n") == 2
    assert list(read_records(path)) == [(1, record), (2, other)]
    path.write_text(dumps(record) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(RecordError, match="line 2: not JSON"):
        list(read_records(path))
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(RecordError, match="line 1: a record must be a JSON object"):
        list(read_records(path))


def test_only_finished_matches_have_records() -> None:
    match = Match(Rules.preset("tablic"), seed="x")
    with pytest.raises(RecordError, match="record r: the match is not over"):
        match_record(match, ["a", "b"], "r")
    match.abort()
    with pytest.raises(RecordError, match="3 player names for 2 seats"):
        match_record(match, ["a", "b", "c"], "r")


@pytest.mark.parametrize("ending", ["forfeit", "aborted"])
@pytest.mark.parametrize("plays", [0, 7, 60])
def test_forfeit_and_abort_records_verify(ending: str, plays: int) -> None:
    match = Match(Rules.preset("tablic", players=3), seed="end")
    rng = random.Random(plays)
    for _ in range(plays):
        match.play(rng.choice(match.legal_plays()))
    if ending == "forfeit":
        match.forfeit(1)
    else:
        match.abort()
    rec = record_of(match)
    assert rec["result"]["reason"] == ending
    assert ("forfeit_seat" in rec["result"]) == (ending == "forfeit")
    again = verify_record(loads(dumps(rec)))
    assert again.result == match.result
    assert dumps(record_of(again)) == dumps(rec)


def test_automatic_plays_are_recorded_and_checked() -> None:
    match = Match(Rules.preset("tablanette-ro", target=20), seed="auto")
    rng = random.Random(5)
    autos = 0
    while not match.is_over:
        if rng.random() < 0.3:
            match.play(match.timeout_play(), auto=True)
            autos += 1
        else:
            match.play(rng.choice(match.legal_plays()))
    rec = record_of(match)
    flagged = [p for d in rec["deals"] for p in d["plays"] if p.get("auto")]
    assert len(flagged) == autos > 0
    assert all(p["auto"] is True for p in flagged)
    verify_record(rec)


# ------------------------------------------------------------------ tampering


def _find_play(rec: Record, want: Callable[[dict[str, Any]], bool], deal: int = 1) -> int:
    return next(i for i, p in enumerate(rec["deals"][deal]["plays"]) if want(p))


def _tamper(record: Record, change: Callable[[Record], str]) -> tuple[str, str]:
    rec = copy.deepcopy(record)
    where = change(rec)
    with pytest.raises(RecordError) as info:
        verify_record(rec)
    return str(info.value), where


def _change_card(rec: Record) -> str:
    i = _find_play(rec, lambda p: not p["captured"])  # a trail
    play = rec["deals"][1]["plays"][i]
    hand = [c for rnd in rec["deals"][1]["hands"] for c in rnd[play["seat"]]]
    play["card"] = next(c for c in ("AC", "AD", "AH", "AS", "KC", "KD") if c not in hand)
    return f"deal 1, play {i}: illegal play"


def _change_captured(rec: Record) -> str:
    i = _find_play(rec, lambda p: len(p["captured"]) >= 1 and p["card"][0] != "J")
    rec["deals"][1]["plays"][i]["captured"].pop()
    return f"deal 1, play {i}: illegal play"


def _change_bonus(rec: Record) -> str:
    rec["deals"][1]["plays"][2]["bonus"] += 1
    return "deal 1, play 2: bonus"


def _change_deal_score(rec: Record) -> str:
    rec["deals"][1]["score"][0] += 1
    return "deal 1: score"


def _change_total_score(rec: Record) -> str:
    rec["score"][1] += 1
    return "score ["


def _change_leftover(rec: Record) -> str:
    rec["deals"][0]["leftover"]["team"] = 1 - (rec["deals"][0]["leftover"]["team"] or 0)
    return "deal 0: leftover"


def _wrong_seat(rec: Record) -> str:
    rec["deals"][1]["plays"][3]["seat"] = 1 - rec["deals"][1]["plays"][3]["seat"]
    return "deal 1, play 3: seat"


def _wrong_seed(rec: Record) -> str:
    rec["seed"] = "another seed"
    return "deal 0: the cards dealt are not those of seed 'another seed'"


def _duplicated_card(rec: Record) -> str:
    hands = rec["deals"][2]["hands"][0]
    hands[1][0] = hands[0][0]
    return f"deal 2: round 0: seat 1 got {hands[0][0]} twice"


def _duplicated_capture(rec: Record) -> str:
    i = _find_play(rec, lambda p: len(p["captured"]) >= 1)
    captured = rec["deals"][1]["plays"][i]["captured"]
    captured.append(captured[0])
    return f"deal 1, play {i}: card {captured[0]} appears twice"


def _swapped_deal_cards(rec: Record) -> str:
    deal = rec["deals"][1]
    deal["table"][0], deal["hands"][0][0][0] = deal["hands"][0][0][0], deal["table"][0]
    return "deal 1: the cards dealt are not those of seed"


def _wrong_dealer(rec: Record) -> str:
    rec["deals"][1]["dealer"] = 0
    return "deal 1: dealer is 0, the rotation gives 1"


def _extra_play(rec: Record) -> str:
    plays = rec["deals"][0]["plays"]
    plays.append(dict(plays[-1]))
    return f"deal 0, play {len(plays) - 1}: the deal is already over"


def _missing_play(rec: Record) -> str:
    rec["deals"][1]["plays"].pop()
    return "deal 1: the plays end before the deal does"


def _false_auto(rec: Record) -> str:
    match = Match(Rules.from_record(rec["rules"], players=2), seed=rec["seed"])
    for i, p in enumerate(rec["deals"][0]["plays"]):
        play = Play.of(p["card"], p["captured"])
        if play != match.timeout_play():
            p["auto"] = True
            return f"deal 0, play {i}: automatic play {play} is not the engine's {match.timeout_play()}"
        match.play(play)
    raise AssertionError("every play of deal 0 was the timeout play")


def _wrong_winner(rec: Record) -> str:
    rec["result"]["winner"] = 1 - rec["result"]["winner"]
    return "result {"


def _wrong_reason(rec: Record) -> str:
    rec["result"]["reason"] = "deals"
    return "result {"


def _wrong_teams(rec: Record) -> str:
    rec["teams"] = [[0, 1]]
    return "teams [[0, 1]] do not match the rules"


def _wrong_format(rec: Record) -> str:
    rec["format"] = "tablanette-record/0"
    return "format is 'tablanette-record/0'"


def _wrong_rules(rec: Record) -> str:
    rec["rules"]["target"] = 1000
    return "the match is not over after"


def _dropped_deal(rec: Record) -> str:
    rec["deals"].pop()
    return "the match is not over after"


def _one_player_more(rec: Record) -> str:
    rec["players"].append("intruder")
    return "teams [[0], [1]] do not match the rules"


def _missing(*path: Any) -> Callable[[Record], str]:
    def change(rec: Record) -> str:
        target: Any = rec
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        if path[0] == "deals" and len(path) == 5:
            return f"deal {path[1]}, play {path[3]}: missing field '{path[-1]}'"
        if path[0] == "deals" and len(path) == 3:
            return f"deal {path[1]}: missing field '{path[-1]}'"
        return f"missing field '{path[-1]}'"

    return change


TAMPERS: dict[str, Callable[[Record], str]] = {
    "changed card": _change_card,
    "changed capture": _change_captured,
    "changed bonus": _change_bonus,
    "changed deal score": _change_deal_score,
    "changed total score": _change_total_score,
    "changed leftover": _change_leftover,
    "wrong seat": _wrong_seat,
    "wrong seed": _wrong_seed,
    "duplicated card in a hand": _duplicated_card,
    "duplicated captured card": _duplicated_capture,
    "table and hand swapped": _swapped_deal_cards,
    "wrong dealer": _wrong_dealer,
    "extra play": _extra_play,
    "missing play": _missing_play,
    "false auto flag": _false_auto,
    "wrong winner": _wrong_winner,
    "wrong reason": _wrong_reason,
    "wrong teams": _wrong_teams,
    "wrong format": _wrong_format,
    "changed rules": _wrong_rules,
    "dropped deal": _dropped_deal,
    "extra player": _one_player_more,
    "missing seed": _missing("seed"),
    "missing result": _missing("result"),
    "missing rules": _missing("rules"),
    "missing score": _missing("score"),
    "missing deals": _missing("deals"),
    "missing deal score": _missing("deals", 1, "score"),
    "missing deal plays": _missing("deals", 1, "plays"),
    "missing deal leftover": _missing("deals", 1, "leftover"),
    "missing dealer": _missing("deals", 1, "dealer"),
    "missing hands": _missing("deals", 2, "hands"),
    "missing play bonus": _missing("deals", 1, "plays", 4, "bonus"),
    "missing play card": _missing("deals", 1, "plays", 4, "card"),
    "missing play captured": _missing("deals", 1, "plays", 4, "captured"),
    "missing play seat": _missing("deals", 1, "plays", 4, "seat"),
}


@pytest.mark.parametrize("change", list(TAMPERS.values()), ids=list(TAMPERS))
def test_tampered_records_are_rejected_naming_the_location(record: Record, change: Callable[[Record], str]) -> None:
    message, where = _tamper(record, change)
    assert message.startswith("record league/1: "), message
    assert where in message, message


def test_an_empty_seed_is_checked_like_any_other() -> None:
    rec = record_of(played_match(seed=""))
    verify_record(rec)
    rec["deals"][0]["table"][0], rec["deals"][0]["hands"][0][0][0] = (
        rec["deals"][0]["hands"][0][0][0],
        rec["deals"][0]["table"][0],
    )
    with pytest.raises(RecordError, match="deal 0: the cards dealt are not those of seed ''"):
        verify_record(rec)


@pytest.mark.parametrize(
    ("value", "needle"),
    [(None, "seed must be a string"), (7, "seed must be a string")],
)
def test_a_seed_that_is_not_a_string_is_rejected(record: Record, value: Any, needle: str) -> None:
    rec = copy.deepcopy(record)
    rec["seed"] = value
    with pytest.raises(RecordError, match=needle):
        verify_record(rec)


@pytest.mark.parametrize(
    ("field", "value"),
    [("captured", None), ("captured", 7), ("seat", "0"), ("card", None), ("bonus", None)],
)
def test_malformed_play_fields_are_rejected_naming_the_location(record: Record, field: str, value: Any) -> None:
    rec = copy.deepcopy(record)
    rec["deals"][1]["plays"][4][field] = value
    with pytest.raises(RecordError, match="deal 1, play 4: "):
        verify_record(rec)


def test_a_record_that_is_not_an_object() -> None:
    with pytest.raises(RecordError, match=r"record \?: "):
        verify_record([])  # type: ignore[arg-type]


def _forfeited_record() -> Record:
    match = Match(Rules.preset("tablic"), seed="cut")
    for _ in range(30):
        match.play(match.legal_plays()[-1])
    match.forfeit(0)
    rec = record_of(match)
    assert rec["deals"][-1]["score"] == [0, 0] and rec["result"]["forfeit_seat"] == 0
    return rec


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda rec: rec["deals"][-1]["score"].__setitem__(0, 5), "deal 0: score [5, 0]"),
        (lambda rec: rec["deals"][-1]["leftover"].__setitem__("team", 1), "deal 0: leftover"),
        (lambda rec: rec["deals"][-1].pop("score"), "deal 0: missing field 'score'"),
        (lambda rec: rec["result"].__setitem__("forfeit_seat", 1), "result {"),
        (lambda rec: rec["result"].pop("forfeit_seat"), "record league/1: "),
    ],
)
def test_the_deal_cut_short_by_a_forfeit_is_checked_too(change: Callable[[Record], Any], where: str) -> None:
    rec = _forfeited_record()
    verify_record(copy.deepcopy(rec))
    change(rec)
    with pytest.raises(RecordError) as info:
        verify_record(rec)
    assert where in str(info.value)


def test_a_forfeit_record_may_not_add_an_empty_deal() -> None:
    rules = Rules.preset("tablic")
    match = Match(rules, seed="cut")
    while match.deal_index == 0:
        match.play(match.legal_plays()[-1])
    match.forfeit(0)  # between deals: the record holds deal 0 only
    rec = record_of(match)
    assert len(rec["deals"]) == 1
    verify_record(copy.deepcopy(rec))
    layout = deal_layout(rules, "cut", 1)
    rec["deals"].append(
        {
            "dealer": 1,
            "table": card_names(layout.table),
            "hands": [[card_names(h) for h in rnd] for rnd in layout.rounds],
            "plays": [],
            "leftover": {"team": None, "cards": []},
            "score": [0, 0],
        }
    )
    with pytest.raises(RecordError, match="deal 1: a deal without plays is never recorded"):
        verify_record(rec)
