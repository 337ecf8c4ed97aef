"""A bot that never answers: the runner applies the rules' ``timeout_action``.

``trail_lowest``: the engine plays the lowest card for the seat (records mark
those plays ``"auto": true``) and the match finishes; ``forfeit``: the seat
forfeits at its first missed deadline. Healthy bots play on next to it.
"""

from __future__ import annotations

import itertools
import time

import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread

from engine_service.rules import Rules, verify_record


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


def test_missed_deadlines_are_played_as_trail_lowest(engine: Engine) -> None:
    token = engine.arena.add_bot("silent-bot")
    raw = engine.raw()
    raw.welcome(token, "silent-bot")
    league = engine.league("trail")
    rules = Rules.preset("tablic", deals=1, move_time_ms=200, timeout_action="trail_lowest")
    match = MatchThread(engine.arena.prefix, rules, "t", ["silent-bot", engine.healthy[0]], "trail/1")

    turn = raw.next_turn()  # read, never answered
    assert turn.time_left_ms == 200
    assert abs(turn.deadline_unix_ms - (time.time() * 1000 + 200)) < 1000
    outcome = match.result()

    record = outcome.record
    assert record["result"]["reason"] == "deals"
    assert verify_record(record).totals == record["score"]
    silent, healthy = outcome.conduct
    mine = [p for d in record["deals"] for p in d["plays"] if p["seat"] == 0]
    assert len(mine) == 24  # 52 cards - 4 on the table, half each
    assert all(p.get("auto") is True for p in mine)
    assert (silent.timeouts, silent.auto, silent.moves, silent.forfeit) == (24, 24, 0, False)
    # (the healthy seat's 200 ms are not asserted: a loaded machine may make it miss one, which is not the point)
    assert (healthy.illegal, healthy.forfeit) == (0, False)
    # every turn reached the silent bot, each with its own deadline, then the game's end
    over = raw.recv("game_over").game_over
    turns = [m.turn for m in raw.received if m.WhichOneof("kind") == "turn"]
    assert len({t.turn_id for t in turns}) == len(turns) == 24
    assert all(a.deadline_unix_ms < b.deadline_unix_ms for a, b in itertools.pairwise(turns))
    assert over.result.reason == "deals" and over.seat == 0
    raw.close()
    league.finish()


def test_a_missed_deadline_forfeits_under_timeout_action_forfeit(engine: Engine) -> None:
    token = engine.arena.add_bot("forfeit-bot")
    raw = engine.raw()
    raw.welcome(token, "forfeit-bot")
    league = engine.league("forfeit")
    rules = Rules.preset("tablic", target=21, move_time_ms=1000, timeout_action="forfeit")
    match = MatchThread(engine.arena.prefix, rules, "f", [engine.healthy[1], "forfeit-bot"], "forfeit/1")
    raw.next_turn()
    outcome = match.result()

    record = outcome.record
    assert record["result"] == {"winner": 0, "reason": "forfeit", "forfeit_seat": 1}
    assert verify_record(record).totals == record["score"]
    assert outcome.conduct[1].forfeit and outcome.conduct[1].timeouts == 1
    assert not any(p.get("auto") for d in record["deals"] for p in d["plays"])
    over = raw.recv("game_over").game_over
    assert (over.result.reason, over.result.forfeit_seat, over.result.winner) == ("forfeit", 1, 0)
    raw.close()
    league.finish()
