"""Replay frames are the engine's account of a record: every play once, marks decided by the rules."""

from __future__ import annotations

import pytest

from bots import make_bot, play_match
from engine_service.rules import Rules, match_record
from web.replay import replay_frames


def frames_of(preset: str, seed: str, players: int = 2) -> tuple[dict, list[dict]]:  # type: ignore[type-arg]
    rules = Rules.preset(preset, players=players, target=41)
    bots = [make_bot("greedy") if s == 0 else make_bot("random", f"{seed}{s}") for s in range(players)]
    record = match_record(play_match(rules, seed, bots), [f"p{s}" for s in range(players)], seed)
    return record, replay_frames(record)


@pytest.mark.parametrize(("preset", "players"), [("tablic", 2), ("tablic", 4), ("pisti", 3), ("tablanette-1939", 2)])
def test_every_recorded_play_is_one_frame_and_the_totals_end_as_recorded(preset: str, players: int) -> None:
    record, frames = frames_of(preset, "f", players)
    plays = [(f["deal"], f["card"], f["captured"]) for f in frames if f["kind"] == "play"]
    assert plays == [(k, p["card"], p["captured"]) for k, d in enumerate(record["deals"]) for p in d["plays"]]
    ends = [f for f in frames if f["kind"] == "end"]
    assert [e["score"] for e in ends] == [d["score"] for d in record["deals"]]
    assert frames[-1]["kind"] == "result" and frames[-1]["totals"] == record["score"]


def test_pisti_is_marked_only_for_a_lone_same_rank_capture_that_scored() -> None:
    marked = 0
    for g in range(8):
        _, frames = frames_of("pisti", f"p{g}")
        for f in (f for f in frames if f["kind"] == "play"):
            lone_same_rank = len(f["table_before"]) == 1 and f["table_before"][0][0] == f["card"][0]
            assert f["pisti"] == (lone_same_rank and f["bonus"] > 0)
            marked += f["pisti"]
    assert marked > 0
    _, tablic = frames_of("tablic", "t")
    assert not any(f.get("pisti") for f in tablic)  # no pişti bonus in tablic


def test_a_tabla_is_a_cleared_table_that_scores_and_never_the_deals_last_play() -> None:
    _, frames = frames_of("tablic", "tabla")
    plays = [f for f in frames if f["kind"] == "play"]
    assert any(f["tabla"] for f in plays)
    for f in plays:
        if f["tabla"]:
            assert f["captured"] and f["bonus"] >= 1 and not f["table"]
    last_plays = {f["deal"]: f for f in plays}
    assert not any(f["tabla"] for f in last_plays.values())
