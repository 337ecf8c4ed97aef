"""The stateless RulesService, asked over gRPC on a real engine.

Answers come from the rules engine (docs/rules.md's worked examples); bad input ends
the call with INVALID_ARGUMENT and a message naming the bad input, while healthy
bots keep playing on the same engine.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from arena_harness import Arena
from service_kit import Engine

from bots.greedy import GreedyBot
from bots.random_bot import RandomBot
from engine_service.rules import Rules, match_record
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb
from tablanette.v1 import rules_pb2_grpc

PAGAT = gpb.RulesSpec(preset="tablic-pagat")
TABLIC = gpb.RulesSpec(preset="tablic")


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


@pytest.fixture(scope="module")
def rules(engine: Engine) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
        yield rules_pb2_grpc.RulesServiceStub(channel)


def plays(resp: rpb.LegalPlaysResponse) -> list[str]:
    return [p.card + (":" + ",".join(p.captured) if p.captured else "") for p in resp.plays]


def test_list_presets(rules: Any) -> None:
    resp = rules.ListPresets(rpb.ListPresetsRequest(), timeout=5)
    by_name = {p.name: p for p in resp.presets}
    assert list(by_name) == ["tablic", "tablanette-1939", "tablic-pagat", "tablanette-ro", "pisti"]
    assert list(by_name["tablic"].allowed_players) == [2, 3, 4]
    assert list(by_name["tablic-pagat"].allowed_players) == [2, 4]
    tablic = by_name["tablic"].rules
    assert (tablic.preset, tablic.players, tablic.target, tablic.jack) == ("tablic", 2, 101, "sweep")
    assert dict(tablic.card_points)["TD"] == 3 and dict(tablic.card_points)["2C"] == 2
    pagat = by_name["tablic-pagat"].rules
    assert (pagat.jack, pagat.queen, pagat.king, list(pagat.ace_values)) == ("12", 13, 14, [1, 11])
    assert by_name["pisti"].rules.pisti_bonus == 10
    assert all(p.source for p in resp.presets)


def test_legal_plays_worked_example(rules: Any) -> None:
    """docs/rules.md: preset tablic-pagat, table AH 3S 6D 7C 8H QS, play KC (14): exactly six capture sets."""
    table = ["AH", "3S", "6D", "7C", "8H", "QS"]
    resp = rules.LegalPlays(rpb.LegalPlaysRequest(rules=PAGAT, position=rpb.Position(table=table), card="KC"))
    assert plays(resp) == [
        "KC",
        "KC:AH,3S",
        "KC:AH,QS",
        "KC:6D,8H",
        "KC:AH,6D,7C",
        "KC:AH,3S,6D,8H",
        "KC:AH,6D,8H,QS",
    ]
    assert resp.rules.preset == "tablic-pagat" and resp.rules.king == 14
    # the other worked examples, by hand instead of by card
    resp = rules.LegalPlays(rpb.LegalPlaysRequest(rules=PAGAT, position=rpb.Position(table=table, hand=["9C", "6C"])))
    assert plays(resp) == ["6C", "6C:6D", "9C", "9C:AH,8H", "9C:3S,6D", "9C:AH,3S,6D,8H"]
    resp = rules.LegalPlays(
        rpb.LegalPlaysRequest(rules=PAGAT, position=rpb.Position(table=["AH", "AS"], hand=["JC"]), card="JC")
    )
    assert plays(resp) == ["JC", "JC:AH,AS"]


def test_legal_plays_accepts_overrides_and_lenient_card_names(rules: Any) -> None:
    spec = gpb.RulesSpec(preset="tablanette-ro", overrides={"ace_values": "[1,14]"})
    resp = rules.LegalPlays(rpb.LegalPlaysRequest(rules=spec, position=rpb.Position(table=["ah", "10d"]), card="ks"))
    assert list(resp.rules.ace_values) == [1, 14]
    assert "KS:AH" not in plays(resp) and resp.plays[0].card == "KS"
    resp = rules.LegalPlays(rpb.LegalPlaysRequest(rules=TABLIC, position=rpb.Position(table=["10d"]), card="tc"))
    assert plays(resp) == ["TC", "TC:TD"]


def test_apply_play_scores_a_tabla(rules: Any) -> None:
    pos = rpb.Position(table=["3S", "4D"], hand=["7C", "KH"])
    play = gpb.Play(card="7C", captured=["3S", "4D"])
    resp = rules.ApplyPlay(rpb.ApplyPlayRequest(rules=TABLIC, position=pos, play=play))
    assert (list(resp.table), list(resp.hand), list(resp.taken)) == ([], ["KH"], ["3S", "4D", "7C"])
    assert resp.tabla and resp.bonus == 1
    # the deal's very last play sweeps without a tabla (last_play_tabla is off)
    pos.last_play_of_deal = True
    resp = rules.ApplyPlay(rpb.ApplyPlayRequest(rules=TABLIC, position=pos, play=play))
    assert not resp.tabla and resp.bonus == 0 and list(resp.taken) == ["3S", "4D", "7C"]
    # a trail adds the card to the table and takes nothing
    resp = rules.ApplyPlay(rpb.ApplyPlayRequest(rules=TABLIC, position=pos, play=gpb.Play(card="KH")))
    assert (list(resp.table), list(resp.hand), list(resp.taken)) == (["3S", "4D", "KH"], ["7C"], [])


def test_score_deal(rules: Any) -> None:
    piles = [gpb.CardList(cards=["TD", "2C", "AH"]), gpb.CardList(cards=["AS", "AD", "KC", "QC"])]
    resp = rules.ScoreDeal(rpb.ScoreDealRequest(rules=TABLIC, piles=piles, bonus=[2, 0]))
    assert list(resp.score) == [3 + 2 + 1 + 2, 1 + 1 + 3]  # card points + tablas; most cards to team 1
    resp = rules.ScoreDeal(rpb.ScoreDealRequest(rules=TABLIC, piles=piles))
    assert list(resp.score) == [6, 5]


def a_record() -> dict[str, Any]:
    from bots.base import play_match

    match = play_match(Rules.preset("tablic", target=31), "svc", [GreedyBot(), RandomBot(3)])
    return match_record(match, ["greedy", "random"], "svc/1")


def test_verify_record_ok_and_tampered(rules: Any) -> None:
    record = a_record()
    resp = rules.VerifyRecord(rpb.VerifyRecordRequest(record_json=json.dumps(record)))
    assert resp.ok and not resp.error and list(resp.score) == record["score"]

    tampered = json.loads(json.dumps(record))
    tampered["deals"][0]["plays"][3]["bonus"] += 1
    resp = rules.VerifyRecord(rpb.VerifyRecordRequest(record_json=json.dumps(tampered)))
    assert not resp.ok and "deal 0, play 3" in resp.error and not resp.score

    tampered = json.loads(json.dumps(record))
    tampered["score"][0] += 5
    resp = rules.VerifyRecord(rpb.VerifyRecordRequest(record_json=json.dumps(tampered)))
    assert not resp.ok and "score" in resp.error

    for text, error in (("{not json", "not JSON"), ("[1, 2]", "JSON object")):
        resp = rules.VerifyRecord(rpb.VerifyRecordRequest(record_json=text))
        assert not resp.ok and error in resp.error


BAD_INPUTS: list[tuple[str, Callable[[Any], Any], str]] = [
    (
        "unknown preset",
        lambda s: s.LegalPlays(rpb.LegalPlaysRequest(rules=gpb.RulesSpec(preset="nope"), card="KC")),
        "'nope'",
    ),
    (
        "bad override value",
        lambda s: s.LegalPlays(rpb.LegalPlaysRequest(rules=gpb.RulesSpec(overrides={"target": "lots"}), card="KC")),
        "target='lots'",
    ),
    (
        "unknown parameter",
        lambda s: s.ScoreDeal(rpb.ScoreDealRequest(rules=gpb.RulesSpec(overrides={"colour": "red"}))),
        "'colour'",
    ),
    (
        "player count",
        lambda s: s.LegalPlays(rpb.LegalPlaysRequest(rules=gpb.RulesSpec(preset="tablic-pagat", players=3))),
        "not 3",
    ),
    (
        "bad card in the table",
        lambda s: s.LegalPlays(rpb.LegalPlaysRequest(position=rpb.Position(table=["AH", "ZZ"]), card="KC")),
        "'ZZ'",
    ),
    ("bad card asked", lambda s: s.LegalPlays(rpb.LegalPlaysRequest(card="1X")), "'1X'"),
    (
        "card on table and in hand",
        lambda s: s.LegalPlays(rpb.LegalPlaysRequest(position=rpb.Position(table=["AH"], hand=["AH"]))),
        "AH both on the table and in the hand",
    ),
    (
        "card not in the hand",
        lambda s: s.ApplyPlay(
            rpb.ApplyPlayRequest(position=rpb.Position(table=["3S"], hand=["KH"]), play=gpb.Play(card="3C"))
        ),
        "3C is not in the hand",
    ),
    (
        "illegal capture",
        lambda s: s.ApplyPlay(
            rpb.ApplyPlayRequest(
                position=rpb.Position(table=["3S", "4D"], hand=["8C"]), play=gpb.Play(card="8C", captured=["3S"])
            )
        ),
        "illegal play 8C:3S",
    ),
    (
        "one pile per team",
        lambda s: s.ScoreDeal(rpb.ScoreDealRequest(piles=[gpb.CardList(cards=["AH"])], bonus=[0])),
        "one pile and one bonus per team",
    ),
    (
        "a card in two piles",
        lambda s: s.ScoreDeal(
            rpb.ScoreDealRequest(piles=[gpb.CardList(cards=["AH", "TD"]), gpb.CardList(cards=["TD"])], bonus=[0, 0])
        ),
        "TD in two piles",
    ),
]


@pytest.mark.parametrize(("call", "named"), [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_invalid_argument_naming_it(rules: Any, call: Callable[[Any], Any], named: str) -> None:
    with pytest.raises(grpc.RpcError) as info:
        call(rules)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
    assert named in info.value.details()


def test_bad_requests_do_not_disturb_the_bots(engine: Engine, rules: Any) -> None:
    league = engine.league("rules-abuse")
    codes = set()
    for _ in range(20):
        for _, call, _ in BAD_INPUTS:
            with pytest.raises(grpc.RpcError) as info:
                call(rules)
            codes.add(info.value.code())
    assert grpc.StatusCode.RESOURCE_EXHAUSTED in codes  # the flood hit this address's rate limit
    time.sleep(3)  # the limit refills (20 calls/s, bursts of 50)
    resp = rules.LegalPlays(rpb.LegalPlaysRequest(rules=TABLIC, position=rpb.Position(table=["3S"]), card="3C"))
    assert plays(resp) == ["3C", "3C:3S"]
    league.finish()


def test_a_position_of_a_real_deal_is_answered_on_the_spot(module_arena: Arena) -> None:
    """Small questions never wait for the worker pool; big ones still go there.

    With a 10 ms deadline nothing that goes through the pool can be answered
    (its first worker process alone takes far longer to start), so every answer
    here came from the event loop itself.
    """
    proc, port = module_arena.start_engine("engine-inline", TABLANETTE_RULES_DEADLINE_MS="10")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = rules_pb2_grpc.RulesServiceStub(channel)
            deal = rpb.Position(table=["AH", "3S", "6D", "7C", "8H", "QS"], hand=["9C", "KC", "2D", "TD", "JH", "4S"])
            resp = stub.LegalPlays(rpb.LegalPlaysRequest(rules=PAGAT, position=deal), timeout=10)
            assert "9C:AH,8H" in plays(resp)
            applied = stub.ApplyPlay(
                rpb.ApplyPlayRequest(rules=PAGAT, position=deal, play=gpb.Play(card="9C", captured=["AH", "8H"])),
                timeout=10,
            )
            assert list(applied.table) == ["3S", "6D", "7C", "QS"]
            with pytest.raises(grpc.RpcError) as bad:  # refusals read the same inline
                stub.LegalPlays(rpb.LegalPlaysRequest(rules=PAGAT, position=rpb.Position(table=["XX"])), timeout=10)
            assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "XX" in (bad.value.details() or "")
            big = rpb.Position(table=[r + s for r in "A2345" for s in "CDH"], hand=["KC"])
            with pytest.raises(grpc.RpcError) as late:  # 15 table cards: the pool's, and too late for 10 ms
                stub.LegalPlays(rpb.LegalPlaysRequest(rules=PAGAT, position=big), timeout=10)
            assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    finally:
        proc.stop()
