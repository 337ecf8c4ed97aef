"""Which PossibleWorlds calls are answered on the event loop: a real deal's position and a modest K."""

from __future__ import annotations

from bots.greedy import GreedyBot
from engine_service.rules import Match, Rules
from engine_service.rules_answers import INLINE_WORLDS, respond, small
from engine_service.wire import convert
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb


def request(k: int, plays: int = 12, **overrides: str) -> rpb.PossibleWorldsRequest:
    match = Match(Rules.preset("tablic"), seed="inline")
    for _ in range(plays):
        match.play(GreedyBot().choose(match.observation(match.turn)))
    obs = convert.observation_to_pb(match.observation(match.turn))
    return rpb.PossibleWorldsRequest(rules=gpb.RulesSpec(preset="tablic", overrides=overrides), observation=obs, k=k)


def test_a_real_position_with_a_modest_k_is_small() -> None:
    assert small("PossibleWorlds", request(32))
    assert small("PossibleWorlds", request(INLINE_WORLDS))
    assert not small("PossibleWorlds", request(INLINE_WORLDS + 1))
    assert not small("PossibleWorlds", request(8, table_size="6"))  # a bigger table: the pool's


def test_a_table_that_grew_past_the_inline_size_goes_to_the_pool() -> None:
    big = request(8, plays=0)
    for i in range(9):  # nine trails in a row: the table reaches 13 cards
        big.observation.plays.add(seat=i % 2, card="AC")
    assert not small("PossibleWorlds", big)


def test_the_inline_answer_reads_like_the_pools() -> None:
    status, answer = respond("PossibleWorlds", request(5), 5000)
    assert status == "ok" and len(answer.worlds) == 5
    status, why = respond("PossibleWorlds", request(0), 5000)
    assert status == "invalid" and "1 to 256" in why
