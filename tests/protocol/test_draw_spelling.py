"""A draw is spelled as records spell it (``None``/``null``) wherever a bot is told the result: in process,
over JSON lines, through the Python SDK; only the protobuf message says -1."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bots import Bot, make_bot, play_match
from bots.base import result_of
from bots.sdk import GameInfo, _end_match
from engine_service.rules import Match, Observation, Play, Rules, match_record
from tablanette.v1 import game_pb2 as gpb

DRAWN = ("d76", Rules.preset("tablic").with_overrides({"deals": 1}))
"""A seed whose one deal two greedy bots share 9-9."""


class Told(Bot):
    name = "told"

    def __init__(self) -> None:
        self.results: list[Mapping[str, Any]] = []

    def choose(self, observation: Observation) -> Play:
        return observation.legal_plays[0]

    def end_match(self, result: Mapping[str, Any]) -> None:
        self.results.append(dict(result))


def drawn() -> Match:
    seed, rules = DRAWN
    match = play_match(rules, seed, [make_bot("greedy", "a"), make_bot("greedy", "b")])
    assert match.result is not None and match.result.winner is None, "the seed no longer draws"
    return match


def test_a_draw_is_none_for_a_bot_in_process_as_in_its_record() -> None:
    match = drawn()
    assert result_of(match)["winner"] is None
    assert match_record(match, ["a", "b"], "draw/1")["result"]["winner"] is None


def test_the_python_sdk_turns_the_wires_minus_one_into_none() -> None:
    bot = Told()
    info = GameInfo(DRAWN[1], 0, ["told", "other"], bot)
    _end_match("told", info, gpb.MatchResult(winner=-1, reason="deals", score=[9, 9]))
    _end_match("told", info, gpb.MatchResult(winner=1, reason="target", score=[60, 101]))
    assert [r["winner"] for r in bot.results] == [None, 1]
