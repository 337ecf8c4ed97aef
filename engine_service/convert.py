"""Translation between protobuf messages and rules-engine values (no logic)."""

from __future__ import annotations

from typing import Any

from engine_service.rules import (
    Observation,
    Play,
    PlayRecord,
    Rules,
    card_names,
    mask_of,
    parameter_names,
    parse_cards,
)
from engine_service.rules.match import MatchResult
from tablanette.v1 import game_pb2 as pb

# Parameters whose JSON form is also their protobuf form; the rest are converted by hand below.
_SCALARS = tuple(n for n in parameter_names() if n not in ("players", "ace_values", "jack", "card_points", "most_suit"))


def rules_to_pb(rules: Rules) -> pb.Rules:
    d = rules.to_dict()
    msg = pb.Rules(
        preset=d["preset"],
        players=d["players"],
        ace_values=d["ace_values"],
        jack=str(d["jack"]),
        **{name: d[name] for name in _SCALARS},
    )
    msg.card_points.update(d["card_points"])
    msg.most_suit.update(d["most_suit"])
    return msg


def rules_from_pb(msg: pb.Rules) -> Rules:
    """Resolve a full ``Rules`` message (preset, then every parameter as an override)."""
    params: dict[str, Any] = {name: getattr(msg, name) for name in _SCALARS}
    params["ace_values"] = list(msg.ace_values)
    params["jack"] = msg.jack
    params["card_points"] = dict(msg.card_points)
    params["most_suit"] = dict(msg.most_suit)
    return Rules.preset(msg.preset or "tablic", players=msg.players or 2).with_overrides(params)


def rules_from_spec(spec: pb.RulesSpec) -> Rules:
    """Rules from a preset, player count and string overrides (raises on bad input)."""
    base = Rules.preset(spec.preset or "tablic", players=spec.players or 2)
    return base.with_overrides(dict(spec.overrides)) if spec.overrides else base


def play_to_pb(play: Play) -> pb.Play:
    return pb.Play(card=str(play.card), captured=card_names(play.mask))


def play_from_pb(msg: pb.Play) -> Play:
    return Play.of(msg.card, list(msg.captured))


def record_to_pb(p: PlayRecord) -> pb.PlayRecord:
    return pb.PlayRecord(
        seat=p.seat, card=card_names(1 << p.card)[0], captured=card_names(p.mask), bonus=p.bonus, auto=p.auto
    )


def observation_to_pb(obs: Observation) -> pb.Observation:
    return pb.Observation(
        seat=obs.seat,
        team=obs.team,
        turn=obs.turn,
        deal_index=obs.deal_index,
        dealer=obs.dealer,
        round=obs.round,
        rounds_left=obs.rounds_left,
        hand=card_names(obs.hand),
        table=card_names(obs.table),
        piles=[pb.CardList(cards=card_names(p)) for p in obs.piles],
        hand_counts=list(obs.hand_counts),
        plays=[record_to_pb(p) for p in obs.plays],
        deal_bonus=list(obs.deal_bonus),
        scores=list(obs.scores),
        unseen=card_names(obs.unseen),
        stock_count=obs.stock_count,
    )


def observation_from_pb(msg: pb.Observation, rules: Rules, legal: list[pb.Play]) -> Observation:
    def mask(cards: Any) -> int:
        return mask_of(parse_cards(list(cards)))

    plays = tuple(PlayRecord(p.seat, parse_cards([p.card])[0], mask(p.captured), p.bonus, p.auto) for p in msg.plays)
    return Observation(
        rules=rules,
        seat=msg.seat,
        turn=msg.turn,
        deal_index=msg.deal_index,
        dealer=msg.dealer,
        round=msg.round,
        rounds_left=msg.rounds_left,
        hand=mask(msg.hand),
        table=mask(msg.table),
        piles=tuple(mask(p.cards) for p in msg.piles),
        hand_counts=tuple(msg.hand_counts),
        plays=plays,
        deal_bonus=tuple(msg.deal_bonus),
        scores=tuple(msg.scores),
        legal_plays=tuple(play_from_pb(p) for p in legal),
    )


def result_to_pb(result: MatchResult, totals: list[int]) -> pb.MatchResult:
    return pb.MatchResult(
        winner=-1 if result.winner is None else result.winner,
        reason=result.reason,
        forfeit_seat=-1 if result.forfeit_seat is None else result.forfeit_seat,
        score=totals,
    )
