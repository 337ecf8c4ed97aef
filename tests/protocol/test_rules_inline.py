"""Which Rules questions are answered on the event loop: only those whose size bounds their cost."""

from __future__ import annotations

from engine_service.rules_answers import INLINE_CARDS, INLINE_TABLE, respond, small
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb

DECK = [r + s for r in "A23456789TJQK" for s in "CDHS"]


def legal(table: int, hand: int, card: str = "") -> rpb.LegalPlaysRequest:
    cards = DECK[::-1]
    position = rpb.Position(table=cards[:table], hand=cards[table : table + hand])
    return rpb.LegalPlaysRequest(rules=gpb.RulesSpec(preset="tablic"), position=position, card=card)


def test_a_real_deals_position_is_small_and_a_big_one_is_not() -> None:
    assert small("LegalPlays", legal(INLINE_TABLE, INLINE_CARDS))
    assert not small("LegalPlays", legal(INLINE_TABLE + 1, 1))
    assert not small("LegalPlays", legal(4, INLINE_CARDS + 1))
    assert small("LegalPlays", legal(4, 20, card="AS"))  # one card asked about: the hand's size does not count
    assert small("ApplyPlay", rpb.ApplyPlayRequest(position=rpb.Position(table=DECK[:INLINE_TABLE])))
    assert not small("ApplyPlay", rpb.ApplyPlayRequest(position=rpb.Position(table=DECK[: INLINE_TABLE + 1])))
    assert not small("VerifyRecord", rpb.VerifyRecordRequest(record_json="{}"))


def test_a_deal_score_is_small_only_within_one_deck() -> None:
    piles = [gpb.CardList(cards=DECK[:26]), gpb.CardList(cards=DECK[26:])]
    assert small("ScoreDeal", rpb.ScoreDealRequest(piles=piles))
    assert not small("ScoreDeal", rpb.ScoreDealRequest(piles=[gpb.CardList(cards=DECK * 200)]))
    assert not small("ScoreDeal", rpb.ScoreDealRequest(piles=[gpb.CardList()] * 5))


def test_an_inline_answer_and_refusal_read_like_the_pools() -> None:
    status, answer = respond("LegalPlays", legal(3, 2), 5000)
    assert status == "ok" and len(answer.plays) >= 2
    bad = rpb.LegalPlaysRequest(rules=gpb.RulesSpec(preset="tablic"), position=rpb.Position(table=["XX"]))
    status, why = respond("LegalPlays", bad, 5000)
    assert status == "invalid" and "XX" in why
