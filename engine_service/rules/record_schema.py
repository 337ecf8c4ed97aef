"""The game record's type (``tablanette-record/1``) and its shape check.

:class:`GameRecord` is what the engine writes (:func:`~engine_service.rules.record.match_record`),
the ledger stores, the web replays and ``records verify`` checks; docs/records.md
describes it field by field. :func:`parse_record` checks that a JSON object has
that shape (every field present, of the right type) and names the first field
that does not, with its location (``deal 1, play 4: ...``). Whether the plays
are *legal* and the scores *right* is :func:`~engine_service.rules.record.verify_record`'s job.

>>> parse_record({"format": "tablanette-record/1"})
Traceback (most recent call last):
...
engine_service.rules.errors.RecordError: missing field 'id'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NotRequired, TypedDict, cast

from .errors import RecordError

FORMAT = "tablanette-record/1"


class PlayEntry(TypedDict):
    """One play: who played which card and what it captured (empty: a trail)."""

    seat: int
    card: str
    captured: list[str]
    bonus: int
    auto: NotRequired[bool]


class Leftover(TypedDict):
    """Table cards left when a deal ended, and the team that took them (None: nobody captured)."""

    team: int | None
    cards: list[str]


class DealEntry(TypedDict):
    """One deal: its dealer, the cards dealt, the plays, the leftover and the deal's score per team."""

    dealer: int
    table: list[str]
    hands: list[list[list[str]]]
    plays: list[PlayEntry]
    leftover: Leftover
    score: list[int]


class ResultEntry(TypedDict):
    """How the match ended: the winning team (None: a draw) and why."""

    winner: int | None
    reason: str
    forfeit_seat: NotRequired[int]


class GameRecord(TypedDict):
    """A whole match, enough to replay and re-verify it."""

    format: str
    id: str
    rules: dict[str, Any]
    players: list[str]
    teams: list[list[int]]
    seed: str
    deals: list[DealEntry]
    score: list[int]
    result: ResultEntry


def parse_record(data: object) -> GameRecord:
    """``data`` as a :class:`GameRecord`, or :class:`RecordError` naming the first misshapen field."""
    if not isinstance(data, Mapping):
        raise RecordError("a record must be a JSON object")
    if data.get("format") != FORMAT:
        raise RecordError(f"format is {data.get('format')!r}, expected {FORMAT!r}")
    _field(data, "id", "", _is_str, "a string")
    _field(data, "rules", "", _is_map, "an object of rule parameters")
    _field(data, "players", "", _list_of(_is_str), "a list of names")
    _field(data, "teams", "", _list_of(_list_of(_is_int)), "a list of seat lists")
    _field(data, "seed", "", _is_str, "a string")
    _field(data, "deals", "", _list_of(_is_map), "a list of deals")
    _field(data, "score", "", _list_of(_is_int), "a list of points per team")
    result = _field(data, "result", "", _is_map, "an object")
    _field(result, "winner", "result: ", _is_team, "a team index or null")
    _field(result, "reason", "result: ", _is_str, "a string")
    if "forfeit_seat" in result:
        _field(result, "forfeit_seat", "result: ", _is_int, "a seat index")
    for k, deal in enumerate(data["deals"]):
        _check_deal(deal, k)
    return cast(GameRecord, data)


def _check_deal(deal: Mapping[str, Any], k: int) -> None:
    where = f"deal {k}: "
    _field(deal, "dealer", where, _is_int, "a seat index")
    _field(deal, "table", where, _list_of(_is_str), "a list of card names")
    _field(deal, "hands", where, _list_of(_list_of(_list_of(_is_str))), "rounds of hands of card names")
    plays = _field(deal, "plays", where, _list_of(_is_map), "a list of plays")
    left = _field(deal, "leftover", where, lambda v: v is None or _is_map(v), "an object or null")
    if left is not None:
        _field(left, "team", f"{where}leftover: ", _is_team, "a team index or null")
        _field(left, "cards", f"{where}leftover: ", _list_of(_is_str), "a list of card names")
    _field(deal, "score", where, _list_of(_is_int), "a list of points per team")
    for i, play in enumerate(plays):
        at = f"deal {k}, play {i}: "
        _field(play, "seat", at, _is_int, "a seat index")
        _field(play, "card", at, _is_str, "a card name")
        _field(play, "captured", at, _list_of(_is_str), "a list of card names")
        _field(play, "bonus", at, _is_int, "a number of points")
        if "auto" in play:
            _field(play, "auto", at, lambda v: isinstance(v, bool), "true or false")


def _field(obj: Mapping[str, Any], name: str, where: str, ok: Callable[[Any], bool], what: str) -> Any:
    if name not in obj:
        raise RecordError(f"{where}missing field {name!r}")
    value = obj[name]
    if not ok(value):
        raise RecordError(f"{where}{name} must be {what}, got {_short(value)}")
    return value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_str(v: object) -> bool:
    return isinstance(v, str)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_team(v: object) -> bool:
    return v is None or _is_int(v)


def _is_map(v: object) -> bool:
    return isinstance(v, Mapping)


def _list_of(ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, list) and all(ok(x) for x in v)
