"""Replay frames: a record re-played by the engine, one frame per step, for the viewer.

Frames are computed by the rules engine (the same replay as ``records verify``),
so what the viewer shows is what the engine says happened. :func:`luck_curve`
adds the match's luck and skill per team and its luck curve, computed on demand
and kept in-process.

>>> from bots import make_bot, play_match
>>> from engine_service.rules import Rules, match_record
>>> m = play_match(Rules.preset("tablic", target=21), "doc", [make_bot("greedy"), make_bot("random", 1)])
>>> frames = replay_frames(match_record(m, ["a", "b"], "doc"))
>>> frames[0]["kind"], frames[-1]["kind"], frames[-1]["totals"] == m.totals
('deal', 'result', True)
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

from engine_service.rules import (
    DealEntry,
    DealState,
    GameRecord,
    LuckError,
    Match,
    Play,
    PlayEntry,
    Rules,
    card_names,
    luck_of_record,
    verify_record,
)

LUCK_CACHE = 256
"""Matches whose luck curve this process keeps (about 80 ms of CPU each to compute again)."""
_luck: OrderedDict[str, dict[str, Any]] = OrderedDict()
_luck_lock = threading.Lock()


def _position(deal: DealState) -> dict[str, Any]:
    return {
        "table": card_names(deal.table),
        "hands": [card_names(h) for h in deal.hands],
        "pile_counts": [p.bit_count() for p in deal.piles],
        "deal_bonus": list(deal.bonus),
    }


def replay_frames(record: GameRecord) -> list[dict[str, Any]]:
    """Every step of a match: deal starts, plays, new rounds, deal ends, the result."""
    verify_record(record)  # refuse to draw a record the engine does not accept
    rules = Rules.from_record(record["rules"], players=len(record["players"]))
    match = Match(rules, record["seed"])
    frames: list[dict[str, Any]] = []
    for k, raw in enumerate(record["deals"]):
        frames.extend(_deal_frames(match, raw, k))
    result = record["result"]
    if match.result is None:  # the deal cut short by a forfeit or an abort
        (match.forfeit(result["forfeit_seat"]) if result["reason"] == "forfeit" else match.abort())
    frames.append({"kind": "result", "result": result, "totals": list(match.totals), "score": record["score"]})
    return frames


def _deal_frames(match: Match, raw: DealEntry, k: int) -> list[dict[str, Any]]:
    """Deal ``k``: its start, each play (and each new round), and its end if it finished."""
    deal = match.deal
    totals = list(match.totals)
    frames = [{"kind": "deal", "deal": k, "dealer": raw["dealer"], "totals": totals, **_position(deal)}]
    for i, p in enumerate(raw["plays"]):
        frames.append(_play_frame(match, deal, p, k, i, totals))
        if not deal.over and frames[-1]["round"] != deal.round:
            frames.append({"kind": "round", "deal": k, "round": deal.round, "totals": totals, **_position(deal)})
    if len(match.deals) > k:
        finished = match.deals[k]
        frames.append(
            {
                "kind": "end",
                "deal": k,
                "score": list(finished.score),
                "totals": list(match.totals),
                "leftover": {"team": finished.leftover_team, "cards": card_names(finished.leftover)},
                "complete": finished.complete,
                "table": [],
                "hands": [[] for _ in deal.hands],
                "pile_counts": [p.bit_count() for p in deal.piles],
                "deal_bonus": list(deal.bonus),
            }
        )
    return frames


def _play_frame(match: Match, deal: DealState, p: PlayEntry, k: int, i: int, totals: list[int]) -> dict[str, Any]:
    """Apply one recorded play and describe it (a tabla is a sweep that scores as one)."""
    round_before = deal.round
    table = deal.table
    sweeps = sum(deal.tablas)  # the engine counts the sweeps that score as such
    done = match.play(Play.of(p["card"], p["captured"]), auto=bool(p.get("auto")))
    lone_same_rank = table.bit_count() == 1 and (table.bit_length() - 1) >> 2 == done.card >> 2
    frame = {
        "kind": "play",
        "deal": k,
        "play": i,
        "round": round_before,
        "seat": done.seat,
        "card": p["card"],
        "captured": p["captured"],
        "bonus": done.bonus,
        "tabla": sum(deal.tablas) > sweeps,
        "pisti": bool(match.rules.pisti_bonus) and lone_same_rank and done.bonus > 0,
        "auto": bool(p.get("auto")),
        "table_before": card_names(table),
        "totals": totals,
        **_position(deal),
    }
    if deal.over:
        frame["table"] = card_names(deal.leftover)
    return frame


def luck_curve(record: GameRecord) -> dict[str, Any]:
    """The match's luck and skill per team and its luck curve (:func:`luck_of_record`'s JSON), or
    ``{"skipped": why}`` for a match that has none (a forfeit, an abort). Kept for the last
    :data:`LUCK_CACHE` records asked about, by their content (a finished record never changes).

    >>> from bots import make_bot, play_match
    >>> from engine_service.rules import Rules, match_record
    >>> m = play_match(Rules.preset("tablic", target=21), "doc", [make_bot("greedy"), make_bot("random", 1)])
    >>> curve = luck_curve(match_record(m, ["a", "b"], "doc"))
    >>> curve["events"][0]["round"], len(curve["luck"]), luck_curve(match_record(m, ["a", "b"], "doc")) is curve
    (0, 2, True)
    """
    key = hashlib.blake2b(json.dumps(record, sort_keys=True).encode(), digest_size=16).hexdigest()
    with _luck_lock:
        if key in _luck:
            _luck.move_to_end(key)
            return _luck[key]
    try:
        data = luck_of_record(record).to_json()
    except LuckError as exc:
        data = {"skipped": str(exc)}
    with _luck_lock:
        _luck[key] = data
        while len(_luck) > LUCK_CACHE:
            _luck.popitem(last=False)
    return data
