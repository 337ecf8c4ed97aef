"""The Rules service's answers, as plain functions of a request (no gRPC, no event loop).

:func:`answer` takes a serialized request and returns a serialized response or
the reason it was refused; it runs in the service's worker processes (see
:mod:`engine_service.rules_api`), so a hard question never holds up bot traffic.
Every enumeration is capped (``max_plays``): a position with more capture sets
than that is refused, not ground through.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from engine_service.rules import (
    FULL_DECK,
    Card,
    Rules,
    TablanetteError,
    TooManyPlaysError,
    bounded_json,
    card_names,
    iter_mask,
    mask_of,
    parse_cards,
    plays_for_card,
    score_piles,
    sweep_bonus,
    verify_record,
)
from engine_service.rules.captures import CaptureFinder
from engine_service.rules.record import MAX_RECORD_CHARS
from engine_service.rules.worlds import World, WorldSampler
from engine_service.wire import convert
from tablanette.v1 import rules_pb2 as rpb


def legal_plays(request: rpb.LegalPlaysRequest, max_plays: int) -> rpb.LegalPlaysResponse:
    rules = convert.rules_from_spec(request.rules)
    table, hand = _position(request.position)
    cards = [Card.parse(request.card)] if request.card else list(iter_mask(hand))
    finder = CaptureFinder(rules, limit=max_plays)
    plays = []
    for c in cards:
        plays += plays_for_card(rules, table, c, finder)
        if len(plays) > max_plays:
            raise TooManyPlaysError(f"more than {max_plays} legal plays in this position")
    return rpb.LegalPlaysResponse(plays=[convert.play_to_pb(p) for p in plays], rules=convert.rules_to_pb(rules))


def apply_play(request: rpb.ApplyPlayRequest, max_plays: int) -> rpb.ApplyPlayResponse:
    rules = convert.rules_from_spec(request.rules)
    table, hand = _position(request.position)
    play = convert.play_from_pb(request.play)
    if not hand >> play.card & 1:
        raise TablanetteError(f"{play.card} is not in the hand [{' '.join(card_names(hand))}]")
    if play not in plays_for_card(rules, table, play.card, CaptureFinder(rules, limit=max_plays)):
        raise TablanetteError(f"illegal play {play} on table [{' '.join(card_names(table))}]")
    after = table & ~play.mask if play.mask else table | 1 << play.card
    sweep = bool(play.mask) and after == 0 and (rules.last_play_tabla or not request.position.last_play_of_deal)
    return rpb.ApplyPlayResponse(
        table=card_names(after),
        hand=card_names(hand & ~(1 << play.card)),
        taken=card_names(play.mask | 1 << play.card) if play.mask else [],
        bonus=sweep_bonus(rules, play.card, table) if sweep else 0,
        tabla=sweep,
    )


def score_deal(request: rpb.ScoreDealRequest, max_plays: int) -> rpb.ScoreDealResponse:
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
    return rpb.ScoreDealResponse(score=score_piles(rules, piles, bonus))


def verify(request: rpb.VerifyRecordRequest, max_plays: int) -> rpb.VerifyRecordResponse:
    """A record that does not verify is an answer (``ok`` false, and why); text too long or nested too deep
    to be one is refused (:class:`~engine_service.rules.bounded_json.JSONLimitError`: INVALID_ARGUMENT)."""
    try:
        record = bounded_json.loads(request.record_json, MAX_RECORD_CHARS)
        if not isinstance(record, dict):
            raise TablanetteError("a record must be a JSON object")
        match = verify_record(record)
    except json.JSONDecodeError as exc:
        return rpb.VerifyRecordResponse(ok=False, error=f"not JSON: {exc}")
    except bounded_json.JSONLimitError:
        raise
    except TablanetteError as exc:
        return rpb.VerifyRecordResponse(ok=False, error=str(exc))
    return rpb.VerifyRecordResponse(ok=True, score=match.totals)


MAX_WORLDS = 256
"""The most worlds one PossibleWorlds call may ask for."""
INLINE_WORLDS = 64
"""A PossibleWorlds call asking for at most this many worlds of a real deal's position is answered inline."""


def possible_worlds(request: rpb.PossibleWorldsRequest, max_plays: int) -> rpb.PossibleWorldsResponse:
    if not 1 <= request.k <= MAX_WORLDS:
        raise TablanetteError(f"k = {request.k}: ask for 1 to {MAX_WORLDS} worlds")
    rules = _worlds_rules(request)
    if request.HasField("packed"):
        if len(request.packed.play_cards) > 52:
            raise TablanetteError(f"{len(request.packed.play_cards)} plays: a deal has at most 52")
        try:
            obs = convert.observation_from_packed(request.packed, rules, (), ())
        except ValueError as exc:
            raise TablanetteError(f"packed observation: {exc}") from exc
    elif request.HasField("observation"):
        if len(request.observation.plays) > 52:
            raise TablanetteError(f"{len(request.observation.plays)} plays: a deal has at most 52")
        obs = convert.observation_from_pb(request.observation, rules, [])
    else:
        raise TablanetteError("give the seat's observation (observation or packed)")
    sampler = WorldSampler(obs)
    rng = random.Random(request.seed)
    response = rpb.PossibleWorldsResponse(first_table=card_names(sampler.first_table))
    add = _add_packed if request.packed_worlds else _add_named
    for _ in range(request.k):
        add(response.worlds.add(), sampler.sample(rng))
    return response


def _worlds_rules(request: rpb.PossibleWorldsRequest) -> Rules:
    return (
        convert.rules_from_pb(request.resolved)
        if request.HasField("resolved")
        else convert.rules_from_spec(request.rules)
    )


def _add_named(msg: rpb.World, world: World) -> None:
    """Fill ``msg`` with ``world`` in card names (filling in place: faster than building the messages)."""
    for hand in world.hands:
        msg.hands.add().cards.extend(_names(hand))
    for hands in world.rounds:
        dealt = msg.rounds.add()
        for hand in hands:
            dealt.hands.add().cards.extend(_names(hand))
    msg.stock.extend(_names(world.stock))


def _add_packed(msg: rpb.World, world: World) -> None:
    msg.hand_masks.extend(world.hands)
    msg.round_masks.extend([h for hands in world.rounds for h in hands])
    msg.stock_mask = world.stock


_BYTE_NAMES = [[card_names(b << 8 * i & FULL_DECK) for b in range(256)] for i in range(7)]
"""The names of the cards in each byte of a mask, byte ``i`` holding cards ``8i..8i+7``."""


def _names(mask: int) -> list[str]:
    """:func:`card_names` by whole bytes of the mask: several times faster for a hand."""
    out: list[str] = []
    for i, b in enumerate(mask.to_bytes(7, "little")):
        if b:
            out += _BYTE_NAMES[i][b]
    return out


def _peak_table(request: rpb.PossibleWorldsRequest) -> int:
    """The most cards the table held during the observation's plays (from their counts alone)."""
    table_size = request.resolved.table_size if request.HasField("resolved") else 4
    size = peak = table_size
    if request.HasField("packed"):
        taken = [m.bit_count() for m in request.packed.play_captured]
    else:
        taken = [len(p.captured) for p in request.observation.plays]
    for t in taken:
        size = size - t if t else size + 1
        peak = max(peak, size)
    return peak


INLINE_TABLE = 8
"""A position with at most this many table cards..."""
INLINE_CARDS = 6
"""...asking about at most this many cards is answered inline: under a millisecond or two
(measured: 10-card tables under 2 ms for any card of any preset; 12-card ones reach 30 ms)."""


def small(method: str, request: Any) -> bool:
    """Whether a question is cheap enough, by its size alone, to answer on the event loop."""
    if method == "ScoreDeal":  # a real deal's piles hold 52 cards at most (a bigger question is checked in the pool)
        return len(request.piles) <= 4 and sum(len(p.cards) for p in request.piles) <= 52
    if method == "LegalPlays":
        cards = 1 if request.card else len(request.position.hand)
    elif method == "ApplyPlay":
        cards = 1
    elif method == "PossibleWorlds":
        plays = len(request.packed.play_cards) if request.HasField("packed") else len(request.observation.plays)
        overridden = "table_size" in request.rules.overrides
        return request.k <= INLINE_WORLDS and plays <= 52 and not overridden and _peak_table(request) <= INLINE_TABLE
    else:
        return False
    return len(request.position.table) <= INLINE_TABLE and cards <= INLINE_CARDS


QUESTIONS: dict[str, tuple[type[Any], Callable[[Any, int], Any]]] = {
    "LegalPlays": (rpb.LegalPlaysRequest, legal_plays),
    "ApplyPlay": (rpb.ApplyPlayRequest, apply_play),
    "ScoreDeal": (rpb.ScoreDealRequest, score_deal),
    "VerifyRecord": (rpb.VerifyRecordRequest, verify),
    "PossibleWorlds": (rpb.PossibleWorldsRequest, possible_worlds),
}


def respond(method: str, request: Any, max_plays: int) -> tuple[str, Any]:
    """``("ok", response)``, ``("invalid", why)`` or ``("too-many", why)``."""
    try:
        return "ok", QUESTIONS[method][1](request, max_plays)
    except TooManyPlaysError as exc:
        return "too-many", str(exc)
    except TablanetteError as exc:
        return "invalid", str(exc)


def answer(method: str, request: bytes, max_plays: int) -> tuple[str, bytes | str]:
    """:func:`respond` to a serialized request, the response serialized; for a worker process."""
    status, payload = respond(method, QUESTIONS[method][0].FromString(request), max_plays)
    return status, payload.SerializeToString() if status == "ok" else payload


def _position(pos: rpb.Position) -> tuple[int, int]:
    if len(pos.table) > 52 or len(pos.hand) > 52:
        raise TablanetteError("a table or a hand holds at most 52 cards")
    table = mask_of(parse_cards(list(pos.table)))
    hand = mask_of(parse_cards(list(pos.hand)))
    if table & hand:
        raise TablanetteError(f"{' '.join(card_names(table & hand))} both on the table and in the hand")
    return table, hand
