"""The stateless Rules service: rules questions over gRPC, answered by the engine.

Each method translates protobuf to engine values, asks the engine, translates
back; any bad input answers INVALID_ARGUMENT with the engine's own message.
"""

from __future__ import annotations

import json

import grpc

from engine_service import convert
from engine_service.rules import (
    PRESETS,
    Card,
    Rules,
    TablanetteError,
    card_names,
    iter_mask,
    mask_of,
    parse_cards,
    plays_for_card,
    score_piles,
    sweep_bonus,
    verify_record,
)
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb
from tablanette.v1 import rules_pb2_grpc


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    async def ListPresets(
        self, request: rpb.ListPresetsRequest, context: grpc.aio.ServicerContext
    ) -> rpb.ListPresetsResponse:
        return rpb.ListPresetsResponse(
            presets=[
                rpb.Preset(
                    name=name,
                    allowed_players=list(spec.players),
                    source=spec.source,
                    rules=convert.rules_to_pb(Rules.preset(name, players=spec.players[0])),
                )
                for name, spec in PRESETS.items()
            ]
        )

    async def LegalPlays(
        self, request: rpb.LegalPlaysRequest, context: grpc.aio.ServicerContext
    ) -> rpb.LegalPlaysResponse:
        try:
            rules = convert.rules_from_spec(request.rules)
            table, hand = _position(request.position)
            cards = [Card.parse(request.card)] if request.card else list(iter_mask(hand))
            plays = [p for c in cards for p in plays_for_card(rules, table, c)]
        except TablanetteError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return rpb.LegalPlaysResponse(plays=[convert.play_to_pb(p) for p in plays], rules=convert.rules_to_pb(rules))

    async def ApplyPlay(
        self, request: rpb.ApplyPlayRequest, context: grpc.aio.ServicerContext
    ) -> rpb.ApplyPlayResponse:
        try:
            rules = convert.rules_from_spec(request.rules)
            table, hand = _position(request.position)
            play = convert.play_from_pb(request.play)
            if not hand >> play.card & 1:
                raise TablanetteError(f"{play.card} is not in the hand [{' '.join(card_names(hand))}]")
            if play not in plays_for_card(rules, table, play.card):
                raise TablanetteError(f"illegal play {play} on table [{' '.join(card_names(table))}]")
        except TablanetteError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        after = table & ~play.mask if play.mask else table | 1 << play.card
        sweep = bool(play.mask) and after == 0 and (rules.last_play_tabla or not request.position.last_play_of_deal)
        return rpb.ApplyPlayResponse(
            table=card_names(after),
            hand=card_names(hand & ~(1 << play.card)),
            taken=card_names(play.mask | 1 << play.card) if play.mask else [],
            bonus=sweep_bonus(rules, play.card, table) if sweep else 0,
            tabla=sweep,
        )

    async def ScoreDeal(
        self, request: rpb.ScoreDealRequest, context: grpc.aio.ServicerContext
    ) -> rpb.ScoreDealResponse:
        try:
            rules = convert.rules_from_spec(request.rules)
            piles = [mask_of(parse_cards(list(p.cards))) for p in request.piles]
            bonus = list(request.bonus) or [0] * len(piles)
            if len(piles) != rules.team_count or len(bonus) != rules.team_count:
                raise TablanetteError(f"give one pile and one bonus per team ({rules.team_count} teams)")
            seen = 0
            for p in piles:
                if seen & p:
                    raise TablanetteError(f"{' '.join(card_names(seen & p))} in two piles")
                seen |= p
        except TablanetteError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return rpb.ScoreDealResponse(score=score_piles(rules, piles, bonus))

    async def VerifyRecord(
        self, request: rpb.VerifyRecordRequest, context: grpc.aio.ServicerContext
    ) -> rpb.VerifyRecordResponse:
        try:
            record = json.loads(request.record_json)
            if not isinstance(record, dict):
                raise TablanetteError("a record must be a JSON object")
            match = verify_record(record)
        except json.JSONDecodeError as exc:
            return rpb.VerifyRecordResponse(ok=False, error=f"not JSON: {exc}")
        except TablanetteError as exc:
            return rpb.VerifyRecordResponse(ok=False, error=str(exc))
        return rpb.VerifyRecordResponse(ok=True, score=match.totals)


def _position(pos: rpb.Position) -> tuple[int, int]:
    table = mask_of(parse_cards(list(pos.table)))
    hand = mask_of(parse_cards(list(pos.hand)))
    if table & hand:
        raise TablanetteError(f"{' '.join(card_names(table & hand))} both on the table and in the hand")
    return table, hand


__all__ = ["RulesServicer", "gpb"]
