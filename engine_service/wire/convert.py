"""Translation between protobuf messages and rules-engine values (no logic).

The hot path (a Turn for every move, read again by the bot) builds the same
small pieces again and again: the names of a card mask, a play of the deal so
far, and back. Those are memoized (:func:`_names`, :func:`record_to_pb`,
:func:`play_to_pb`, :func:`_mask`, :func:`_record_from`, :func:`_play_from`, :func:`_record`);
protobuf copies a message into the field it is put in, so a shared one is
never changed, and the rules-engine values are immutable. A bad card name
raises as before (a failed call is not cached).

Turns are built in the packed form (:func:`observation_to_packed`: the engine's
own masks and card numbers, nothing to name or parse), and named
(:func:`named_turn`) only for a bot that did not ask for it.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Sequence
from typing import Any

from engine_service.rules import (
    CARDS,
    FULL_DECK,
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
from tablanette.v1 import arena_pb2 as apb
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


@functools.lru_cache(maxsize=1 << 16)
def _names(mask: int) -> tuple[str, ...]:
    return tuple(card_names(mask))


@functools.lru_cache(maxsize=1 << 16)
@functools.lru_cache(maxsize=1 << 16)
def play_to_pb(play: Play) -> pb.Play:
    """Shared and never changed: put it in a field (which copies it), do not edit it."""
    return pb.Play(card=str(play.card), captured=_names(play.mask))


def play_from_pb(msg: pb.Play) -> Play:
    return _play_from(msg.card, tuple(msg.captured))


@functools.lru_cache(maxsize=1 << 16)
def _play_from(card: str, captured: tuple[str, ...]) -> Play:
    return Play.of(card, list(captured))


@functools.lru_cache(maxsize=1 << 14)
def record_to_pb(p: PlayRecord) -> pb.PlayRecord:
    """Shared and never changed: put it in a field (which copies it), do not edit it."""
    return pb.PlayRecord(seat=p.seat, card=_names(1 << p.card)[0], captured=_names(p.mask), bonus=p.bonus, auto=p.auto)


def observation_to_pb(obs: Observation) -> pb.Observation:
    return _named(obs, obs.plays)


_POSITION = ("seat", "team", "turn", "deal_index", "dealer", "round", "rounds_left")
"""Where the seat is: the scalar fields every form of an observation has, under the same names."""
_OBSERVED = tuple(name for name in _POSITION if name != "team")
"""The same, as an :class:`Observation` takes them (it derives the team from the rules)."""


def _named(src: Observation | pb.PackedObservation, plays: Iterable[PlayRecord]) -> pb.Observation:
    """The named Observation of ``src`` (its card sets are masks under the same field names in both)."""
    return pb.Observation(
        **{name: getattr(src, name) for name in _POSITION},
        hand=_names(src.hand),
        table=_names(src.table),
        piles=[pb.CardList(cards=_names(p)) for p in src.piles],
        hand_counts=src.hand_counts,
        plays=[record_to_pb(p) for p in plays],
        deal_bonus=src.deal_bonus,
        scores=src.scores,
        unseen=_names(src.unseen),
        stock_count=src.stock_count,
    )


@functools.lru_cache(maxsize=1 << 16)
def _mask(names: tuple[str, ...]) -> int:
    return mask_of(parse_cards(names))


@functools.lru_cache(maxsize=1 << 14)
def _record_from(seat: int, card: str, captured: tuple[str, ...], bonus: int, auto: bool) -> PlayRecord:
    return PlayRecord(seat, parse_cards([card])[0], _mask(captured), bonus, auto)


def observation_from_pb(msg: pb.Observation, rules: Rules, legal: list[pb.Play]) -> Observation:
    plays = tuple(_record_from(p.seat, p.card, tuple(p.captured), p.bonus, p.auto) for p in msg.plays)
    return Observation(
        rules=rules,
        **{name: getattr(msg, name) for name in _OBSERVED},
        hand=_mask(tuple(msg.hand)),
        table=_mask(tuple(msg.table)),
        piles=tuple(_mask(tuple(p.cards)) for p in msg.piles),
        hand_counts=tuple(msg.hand_counts),
        plays=plays,
        deal_bonus=tuple(msg.deal_bonus),
        scores=tuple(msg.scores),
        legal_plays=tuple(play_from_pb(p) for p in legal),
    )


def observation_to_packed(obs: Observation) -> pb.PackedObservation:
    """The packed form (docs/protocol.md): the engine's own masks and card numbers, nothing to name."""
    msg = pb.PackedObservation()
    fill_packed(msg, obs)
    extend_packed_plays(msg, obs.plays)
    return msg


def fill_packed(msg: pb.PackedObservation, obs: Observation) -> None:
    """Every field of the packed form but the deal's plays (see :func:`extend_packed_plays`)."""
    for name in _POSITION:
        setattr(msg, name, getattr(obs, name))
    msg.hand, msg.table, msg.unseen, msg.stock_count = obs.hand, obs.table, obs.unseen, obs.stock_count
    msg.piles.extend(obs.piles)
    msg.hand_counts.extend(obs.hand_counts)
    msg.deal_bonus.extend(obs.deal_bonus)
    msg.scores.extend(obs.scores)


def extend_packed_plays(msg: pb.PackedObservation, plays: Sequence[PlayRecord]) -> None:
    """Append ``plays`` to the packed form's play columns."""
    if plays:
        seats, cards, captured, bonus, auto = zip(*map(_RECORD_FIELDS, plays), strict=True)
        msg.play_seats.extend(seats)
        msg.play_cards.extend(cards)
        msg.play_captured.extend(captured)
        msg.play_bonus.extend(bonus)
        msg.play_auto.extend(auto)


_RECORD_FIELDS = operator.attrgetter("seat", "card", "mask", "bonus", "auto")


def observation_from_packed(
    msg: pb.PackedObservation, rules: Rules, legal_cards: Sequence[int], legal_captured: Sequence[int]
) -> Observation:
    """Raises :class:`ValueError` on numbers no server sends (a card outside 0..51, a mask over 52 bits)."""
    cards = [*msg.play_cards, *legal_cards]
    if cards and not 0 <= min(cards) <= max(cards) < len(CARDS):
        raise ValueError(f"a card number is outside 0..{len(CARDS) - 1}: {sorted(set(cards))}")
    if max(msg.hand, msg.table, *msg.piles, *msg.play_captured, *legal_captured) & ~FULL_DECK:
        raise ValueError("a card mask has bits above the 52 cards")
    columns = (msg.play_seats, msg.play_cards, msg.play_captured, msg.play_bonus, msg.play_auto)
    if len({len(c) for c in columns}) > 1 or len(legal_cards) != len(legal_captured):
        raise ValueError("the packed lists of one kind (plays, legal plays) differ in length")
    plays = tuple(map(_record, *columns))
    return Observation(
        rules=rules,
        **{name: getattr(msg, name) for name in _OBSERVED},
        hand=msg.hand,
        table=msg.table,
        piles=tuple(msg.piles),
        hand_counts=tuple(msg.hand_counts),
        plays=plays,
        deal_bonus=tuple(msg.deal_bonus),
        scores=tuple(msg.scores),
        legal_plays=tuple(map(packed_play, legal_cards, legal_captured)),
    )


@functools.lru_cache(maxsize=1 << 14)
def _record(seat: int, card: int, mask: int, bonus: int, auto: bool) -> PlayRecord:
    return PlayRecord(seat, card, mask, bonus, auto)


def packed_play(card: int, mask: int) -> Play:
    """A play in the packed form (a card number, a capture mask) as the rules engine's value."""
    return Play(CARDS[card], mask)


def packed_to_named(msg: pb.PackedObservation) -> pb.Observation:
    """The named Observation a bot that did not ask for the packed form gets (same content)."""
    return _named(msg, map(_record, msg.play_seats, msg.play_cards, msg.play_captured, msg.play_bonus, msg.play_auto))


def named_turn(turn: apb.Turn) -> apb.Turn:
    """A copy of ``turn`` in the named form (observation and legal_plays), for a bot that did not ask
    for the packed form; a turn already named is copied as it is."""
    out = apb.Turn()
    out.CopyFrom(turn)  # every other field (and any added later) as it is
    if turn.HasField("packed"):
        out.ClearField("packed")
        out.ClearField("legal_cards")
        out.ClearField("legal_captured")
        out.observation.CopyFrom(packed_to_named(turn.packed))
        out.legal_plays.extend(legal_to_pb(turn.legal_cards, turn.legal_captured))
    return out


def legal_to_pb(cards: Sequence[int], captured: Sequence[int]) -> list[pb.Play]:
    """Named legal plays from the packed lists (each play memoized, see the module doc)."""
    return [play_to_pb(packed_play(c, m)) for c, m in zip(cards, captured, strict=True)]


def result_to_pb(result: MatchResult, totals: list[int]) -> pb.MatchResult:
    return pb.MatchResult(
        winner=-1 if result.winner is None else result.winner,
        reason=result.reason,
        forfeit_seat=-1 if result.forfeit_seat is None else result.forfeit_seat,
        score=totals,
    )
