"""Game records (``tablanette-record/1``): write, read and re-verify.

A record alone replays and re-verifies a whole match (docs/records.md describes
every field; :class:`~engine_service.rules.record_schema.GameRecord` is its
type). Writing is deterministic: the same match gives the same bytes
(:func:`dumps`). :func:`verify_record` checks the record's shape, re-plays every
play with the engine and raises :class:`RecordError` at the first discrepancy,
naming its location.

>>> from engine_service.rules.rules import Rules
>>> m = Match(Rules.preset("pisti", target=30), seed="doc")
>>> while not m.is_over:
...     _ = m.play(m.legal_plays()[-1])
>>> rec = match_record(m, ["a", "b"], "doc/1")
>>> verify_record(loads(dumps(rec))).totals == m.totals
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from . import bounded_json
from .cards import CARDS, card_names, mask_of, parse_cards
from .errors import RecordError, TablanetteError
from .match import FinishedDeal, Match, MatchResult
from .play import Play
from .record_schema import FORMAT, DealEntry, GameRecord, PlayEntry, ResultEntry, parse_record
from .rules import Rules
from .shuffle import DealLayout, deal_layout


def match_record(match: Match, players: Sequence[str], record_id: str) -> GameRecord:
    """The record of a match (finished, forfeited or aborted)."""
    if match.result is None:
        raise RecordError(f"record {record_id}: the match is not over")
    rules = match.rules
    if len(players) != rules.players:
        raise RecordError(f"record {record_id}: {len(players)} player names for {rules.players} seats")
    deals: list[DealEntry] = []
    for d in match.deals:
        plays: list[PlayEntry] = []
        for p in d.plays:
            entry: PlayEntry = {
                "seat": p.seat,
                "card": str(CARDS[p.card]),
                "captured": card_names(p.mask),
                "bonus": p.bonus,
            }
            if p.auto:
                entry["auto"] = True
            plays.append(entry)
        deals.append(
            {
                "dealer": d.layout.dealer,
                "table": card_names(d.layout.table),
                "hands": [[card_names(h) for h in r] for r in d.layout.rounds],
                "plays": plays,
                "leftover": {"team": d.leftover_team, "cards": card_names(d.leftover)},
                "score": list(d.score),
            }
        )
    result: ResultEntry = {"winner": match.result.winner, "reason": match.result.reason}
    if match.result.forfeit_seat is not None:
        result["forfeit_seat"] = match.result.forfeit_seat
    return {
        "format": FORMAT,
        "id": record_id,
        "rules": rules.to_record(),
        "players": list(players),
        "teams": [list(t) for t in rules.teams],
        "seed": match.seed,
        "deals": deals,
        "score": list(match.totals),
        "result": result,
    }


def dumps(record: GameRecord | Mapping[str, Any]) -> str:
    """One record as one compact JSON line (deterministic bytes, no newline)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


MAX_RECORD_CHARS = 16 << 20
"""The longest record text read (a 4-player match to 301 is about 100 KB); and no record nests deeper than
:data:`~engine_service.rules.bounded_json.MAX_DEPTH` levels (it nests 5)."""


def loads(line: str) -> dict[str, Any]:
    """One record from its JSON text (:class:`RecordError` if it is not one, is too long or nests too deep)."""
    try:
        data = bounded_json.loads(line, MAX_RECORD_CHARS)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not JSON: {exc}") from None
    except bounded_json.JSONLimitError as exc:
        raise RecordError(str(exc)) from None
    if not isinstance(data, dict):
        raise RecordError("a record must be a JSON object")
    return data


def write_records(records: Iterable[GameRecord | Mapping[str, Any]], out: IO[str]) -> int:
    """Write records as JSON Lines; returns how many."""
    n = 0
    for rec in records:
        out.write(dumps(rec) + "\n")
        n += 1
    return n


def read_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each non-blank line of a JSON Lines file."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield lineno, loads(line)
                except RecordError as exc:
                    raise RecordError(f"line {lineno}: {exc}") from None


# ------------------------------------------------------------------ verify


def verify_record(record: Mapping[str, Any] | GameRecord) -> Match:
    """Re-play a record; return the replayed match or raise :class:`RecordError`.

    Checks the shape (:func:`parse_record`), the rules, every deal against the seed, every play's
    seat, legality and bonus (automatic plays must be the engine's timeout
    play), leftovers, deal scores, totals and the result.
    """
    rid = record.get("id", "?") if isinstance(record, Mapping) else "?"
    try:
        return _verify(record)
    except RecordError as exc:
        raise RecordError(f"record {rid}: {exc}") from None
    except (TablanetteError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise RecordError(f"record {rid}: {_problem(exc)}") from None


def _problem(exc: Exception) -> str:
    """What a malformed record's error means, in words."""
    return f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)


def _verify(data: Mapping[str, Any] | GameRecord) -> Match:
    record = parse_record(data)
    rules = Rules.from_record(record["rules"], players=len(record["players"]))
    if record["teams"] != [list(t) for t in rules.teams]:
        raise RecordError(f"teams {record['teams']} do not match the rules {[list(t) for t in rules.teams]}")
    seed = record["seed"]
    raw_deals = record["deals"]
    for k, raw in enumerate(raw_deals):
        if _layout(rules, raw, k) != deal_layout(rules, seed, k):
            raise RecordError(f"deal {k}: the cards dealt are not those of seed {seed!r}")
    # Every recorded deal is the seed's own, so the match deals from the seed (which
    # also covers a match forfeited or aborted before its first play: no deals at all).
    match = Match(rules, seed)
    result = record["result"]
    for k, raw in enumerate(raw_deals):
        _replay_deal(match, raw, k, last=k == len(raw_deals) - 1, result=result)
    if match.result is None:
        if result.get("reason") == "forfeit":
            if "forfeit_seat" not in result:
                raise RecordError("result: a forfeit must name its forfeit_seat")
            match.forfeit(result["forfeit_seat"])
        elif result.get("reason") == "aborted":
            match.abort()
        else:
            raise RecordError(f"the match is not over after {len(raw_deals)} deals")
        if len(match.deals) != len(raw_deals):
            raise RecordError(f"deal {len(raw_deals) - 1}: a deal without plays is never recorded")
        if raw_deals:  # the deal cut short by the forfeit or abort
            _check_deal_end(raw_deals[-1], match.deals[-1], len(raw_deals) - 1)
    if list(record["score"]) != match.totals:
        raise RecordError(f"score {record['score']} but the plays give {match.totals}")
    want = MatchResult(result.get("winner"), result.get("reason"), result.get("forfeit_seat"))
    if want != match.result:
        raise RecordError(f"result {dict(result)} but the plays give {match.result}")
    return match


def _layout(rules: Rules, raw: DealEntry, k: int) -> DealLayout:
    try:
        layout = DealLayout(
            int(raw["dealer"]),
            mask_of(parse_cards(raw["table"])),
            tuple(tuple(mask_of(parse_cards(h)) for h in rnd) for rnd in raw["hands"]),
        )
        layout.check(rules)
    except (TablanetteError, KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"deal {k}: {_problem(exc)}") from None
    if layout.dealer != k % rules.players:
        raise RecordError(f"deal {k}: dealer is {layout.dealer}, the rotation gives {k % rules.players}")
    return layout


def _replay_deal(match: Match, raw: DealEntry, k: int, last: bool, result: ResultEntry) -> None:
    if match.result is not None:
        raise RecordError(f"deal {k}: the match was already over ({match.result.reason})")
    try:
        _replay_plays(match, raw["plays"], k)
        finished = match.deals[k] if len(match.deals) > k else None
        if finished is None:
            if not (last and result.get("reason") in ("forfeit", "aborted")):
                raise RecordError(f"deal {k}: the plays end before the deal does")
            return
        _check_deal_end(raw, finished, k)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise RecordError(f"deal {k}: {_problem(exc)}") from None


def _replay_plays(match: Match, raw_plays: Sequence[PlayEntry], k: int) -> None:
    deal = match.deal
    for i, p in enumerate(raw_plays):
        where = f"deal {k}, play {i}"
        try:
            if match.result is not None or deal.over:
                raise RecordError(f"{where}: the deal is already over")
            if p["seat"] != deal.turn:
                raise RecordError(f"{where}: seat {p['seat']!r} played but seat {deal.turn} was to play")
            try:
                play = Play.of(p["card"], p["captured"])
                if p.get("auto") and play != deal.timeout_play():
                    raise RecordError(f"automatic play {play} is not the engine's {deal.timeout_play()}")
                done = match.play(play, auto=bool(p.get("auto")))
            except TablanetteError as exc:
                raise RecordError(f"{where}: {exc}") from None
            if done.bonus != p["bonus"]:
                raise RecordError(f"{where}: bonus {p['bonus']} but {play} scores {done.bonus}")
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise RecordError(f"{where}: {_problem(exc)}") from None


def _check_deal_end(raw: DealEntry, finished: FinishedDeal, k: int) -> None:
    """The recorded leftover and score of deal ``k`` against the replayed deal."""
    try:
        want_left = raw["leftover"] or {"team": None, "cards": []}
        got_left = {"team": finished.leftover_team, "cards": card_names(finished.leftover)}
        if want_left != got_left:
            raise RecordError(f"deal {k}: leftover {want_left} but the plays give {got_left}")
        if list(raw["score"]) != list(finished.score):
            raise RecordError(f"deal {k}: score {raw['score']} but the plays give {list(finished.score)}")
    except (KeyError, TypeError) as exc:
        raise RecordError(f"deal {k}: {_problem(exc)}") from None
