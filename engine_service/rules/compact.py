"""Compact game records: a finished match in about a hundred bytes, the JSON record derived from it.

A :class:`~engine_service.rules.record_schema.GameRecord` spells out every card dealt and every
play; all of it follows from the rules, the seed and, per play, which of the legal plays was
made. :func:`encode` keeps only that (plus the record's id and players, how it ended, which plays
were the engine's timeout plays, and optionally the time each move took); :func:`decode` replays
the match with the engine and rebuilds the record, equal to the one encoded (the same
:func:`~engine_service.rules.record.dumps` bytes). :func:`encode` checks that before it returns, so
a record it cannot rebuild exactly is refused, never stored wrong.

The format (version 2, which writes; version 1 is still read; docs/records.md, "Compact records",
has the byte layout):

- byte 0: ``0xC0 | version``; a stored record that starts with ``{`` is the JSON itself;
- varints (LEB128) and strings (varint length, UTF-8): the preset (a one-byte code, or 255 and
  its name), the rules' overrides as compact JSON (empty: none), the id, the seed (as the length
  it shares with the id's start, then the rest, packed two digits a byte when it is hex), the
  players, how the match ended, the number of plays, the positions of the timeout plays;
- the play indexes as one mixed-radix number: play *i*, made among *n_i* legal plays in the
  engine's canonical order (:meth:`Match.legal_plays`), is digit *i* of base *n_i*, so a match
  costs ``ceil(sum(log2 n_i))`` bits, and a forced play (one legal play) nothing;
- the move times, if kept: range-coded with a model per seat that learns as it goes
  (:mod:`.timecode`; version 1 kept Exp-Golomb codes);
- 4 bytes: the CRC32 of the record it encodes (its :func:`~engine_service.rules.record.dumps` bytes):
  the game itself, checked after the replay, so a blob replayed by an engine that deals or orders
  legal plays otherwise than the one that wrote it is refused, never read as another game;
- 4 bytes: the CRC32 of everything before.

Every way a blob can be wrong (truncated, corrupt, a newer version, plays that do not fit the
match, a replay that gives another game than was encoded) raises :class:`CompactRecordError`
naming what and where; a checksum mismatch is caught before anything is replayed.

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.record import dumps, match_record
>>> m = Match(Rules.preset("tablic", target=21), seed="doc")
>>> while not m.is_over:
...     _ = m.play(m.legal_plays()[-1])
>>> rec = match_record(m, ["a", "b"], "doc/1")
>>> blob = encode(rec)
>>> len(blob) < len(dumps(rec)) // 20, dumps(decode(blob)) == dumps(rec)
(True, True)
>>> decode(blob[:-1])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
engine_service.rules.errors.CompactRecordError: compact record: checksum mismatch (...): the blob is corrupt...
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import timecode
from .errors import CompactRecordError as CompactRecordError  # raised by encode and decode: caught here
from .errors import TablanetteError
from .match import MAX_DEALS, Match
from .play import Play
from .record import dumps, match_record
from .record_schema import GameRecord
from .rules import Rules
from .varbytes import Reader, put_bytes, put_str, put_varint

VERSION = 2
"""The compact format this module writes (and the newest it reads; it reads version 1 too)."""
READS = (1, 2)
MAGIC = 0xC0
"""Byte 0 is ``MAGIC | VERSION``: never ``{`` (0x7B), so a reader tells a blob from a JSON record."""
PRESET_CODES = ("tablic", "tablanette-1939", "tablic-pagat", "tablanette-ro", "pisti")
"""Version 1's one-byte preset codes (fixed for good: a new preset is written by name, code 255)."""
_BY_NAME = {name: code for code, name in enumerate(PRESET_CODES)}
_NAMED = 255
_SEED_TEXT, _SEED_HEX = 0, 1
"""Version 2's forms of the seed after what it shares with the id: UTF-8 text, or packed hex."""
_TIMES_CODED = 1
"""Version 2's move-times form: :mod:`.timecode` (0: no times)."""
_END_NATURAL, _END_ABORTED, _END_FORFEIT = 0, 1, 2
"""How a match ended (a byte): by its rules (target, deals, the 1000-deal abort), aborted, or 2 + the
seat that forfeited."""


@dataclass(frozen=True)
class CompactRecord:
    """A decoded blob: the record, and each play's move time in ms (None when the blob keeps none)."""

    record: GameRecord
    times_ms: tuple[int, ...] | None


def is_compact(raw: bytes) -> bool:
    """Whether a stored record is a compact blob (else JSON, which starts with ``{``)."""
    return bool(raw) and raw[0] & 0xF0 == MAGIC


# ------------------------------------------------------------------ encode


def encode(record: Mapping[str, Any] | GameRecord, times_ms: Sequence[int] | None = None) -> bytes:
    """The compact blob of a record (and its plays' move times, one per play, in ms).

    Raises :class:`CompactRecordError` if the record does not replay with the engine or would not
    decode to exactly itself (e.g. its ``rules`` object is not in the engine's own form).
    """
    rid = record.get("id", "?") if isinstance(record, Mapping) else "?"
    try:
        blob = _encode(record, times_ms)
    except CompactRecordError as exc:
        raise CompactRecordError(f"record {rid}: {exc}") from None
    except (TablanetteError, KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:
        raise CompactRecordError(f"record {rid}: cannot encode: {exc}") from None
    try:
        same = dumps(decode(blob)) == dumps(record)
    except CompactRecordError:  # its replay is another game: the game's checksum says so
        same = False
    if not same:
        raise CompactRecordError(f"record {rid}: cannot encode: it would not decode to the same record")
    return blob


def encode_match(
    match: Match, record: GameRecord, times_ms: Sequence[int] | None = None, text: str | None = None
) -> bytes:
    """The compact blob of a finished match the engine played, ``record`` its :func:`match_record` (``text``:
    its :func:`dumps`, when made already): what :func:`encode` makes of that record, made without replaying
    it (each chosen play's index is the one the match kept, :attr:`Match.choices`). Falls back to
    :func:`encode` when the match did not keep them.
    """
    if match.result is None:
        raise CompactRecordError(f"record {record['id']}: the match is not over")
    choices = match.choices
    if choices is None:
        return encode(record, times_ms)
    autos: list[int] = []
    i = 0
    for deal in match.deals:
        for p in deal.plays:
            if p.auto:
                autos.append(i)
            i += 1
    reason = match.result.reason
    natural = reason in ("target", "deals") or (reason == "aborted" and len(match.deals) >= MAX_DEALS)
    code = _END_NATURAL if natural else _end_code(record["result"])
    plays = [p for d in record["deals"] for p in d["plays"]]
    try:
        return _sealed(_header(record), code, plays, autos, choices, times_ms, dumps(record) if text is None else text)
    except CompactRecordError as exc:
        raise CompactRecordError(f"record {record['id']}: {exc}") from None


def _encode(record: Mapping[str, Any], times_ms: Sequence[int] | None) -> bytes:
    out = _header(record)
    rules = Rules.from_record(record["rules"], players=len(record["players"]))
    result = record["result"]
    plays = [p for d in record["deals"] for p in d["plays"]]
    match = Match(rules, str(record["seed"]))
    digits, autos = _replay_indexes(match, plays)
    code = _END_NATURAL if match.is_over else _end_code(result)
    if code < 0 or code >= _END_FORFEIT + rules.players:
        raise CompactRecordError(f"result {dict(result)} does not follow from the plays")
    return _sealed(out, code, plays, autos, digits, times_ms, dumps(record))


def _sealed(
    out: bytearray,
    code: int,
    plays: Sequence[Mapping[str, Any]],
    autos: list[int],
    digits: list[tuple[int, int]],
    times_ms: Sequence[int] | None,
    text: str,
) -> bytes:
    """The whole blob from its header ``out``: the end code, the plays, the move times, then the digest of the
    record's ``text`` and the blob's checksum."""
    out.append(code)
    _put_plays(out, len(plays), autos, digits)
    _put_times(out, times_ms, plays)
    out += _game_digest(text)
    out += zlib.crc32(out).to_bytes(4, "big")
    return bytes(out)


def _header(record: Mapping[str, Any]) -> bytearray:
    """The blob's bytes before its end code: version, rules, id, seed and players."""
    players = list(record["players"])
    rules_obj = dict(record["rules"])
    if next(iter(rules_obj), None) != "preset":
        raise CompactRecordError(f"rules {rules_obj} do not start with their preset")
    name = rules_obj.pop("preset")
    out = bytearray([MAGIC | VERSION])
    code = _BY_NAME.get(name, _NAMED)
    out.append(code)
    if code == _NAMED:
        put_str(out, name)
    put_str(out, json.dumps(rules_obj, separators=(",", ":"), ensure_ascii=False) if rules_obj else "")
    rid, seed = str(record["id"]), str(record["seed"])
    put_str(out, rid)
    _put_seed(out, rid, seed)
    put_varint(out, len(players))
    for p in players:
        put_str(out, p)
    return out


def _put_seed(out: bytearray, rid: str, seed: str) -> None:
    """The seed: how many characters it shares with the id's start, then the rest (packed when lowercase hex)."""
    shared = _shared_prefix(rid, seed)
    put_varint(out, shared)
    rest = seed[shared:]
    hexed = len(rest) % 2 == 0 and rest == rest.lower() and all(c in "0123456789abcdef" for c in rest)
    out.append(_SEED_HEX if hexed else _SEED_TEXT)
    put_bytes(out, bytes.fromhex(rest) if hexed else rest.encode("utf-8"))


def _replay_indexes(match: Match, plays: Sequence[Mapping[str, Any]]) -> tuple[list[tuple[int, int]], list[int]]:
    """Replays ``plays`` on ``match``: each chosen play's (index, number of legal plays), the timeout plays' places."""
    digits: list[tuple[int, int]] = []
    autos: list[int] = []
    for i, p in enumerate(plays):
        if match.is_over:
            raise CompactRecordError(f"play {i}: the match is already over")
        if p["seat"] != match.turn:
            raise CompactRecordError(f"play {i}: seat {p['seat']} played but seat {match.turn} was to play")
        play = Play.of(p["card"], p["captured"])
        if p.get("auto"):
            if play != match.timeout_play():
                raise CompactRecordError(f"play {i}: automatic play {play} is not the engine's timeout play")
            autos.append(i)
            match.push(play, auto=True)
            continue
        legal = match.legal_plays()
        try:
            index = legal.index(play)
        except ValueError:
            raise CompactRecordError(f"play {i}: {play} is not a legal play") from None
        digits.append((index, len(legal)))
        match.push(play)
    return digits, autos


def _put_plays(out: bytearray, n_plays: int, autos: list[int], digits: list[tuple[int, int]]) -> None:
    """The plays: how many, the timeout plays' places (as gaps), the chosen plays' indexes as one mixed-radix number."""
    put_varint(out, n_plays)
    put_varint(out, len(autos))
    last = 0
    for i in autos:
        put_varint(out, i - last)
        last = i
    number = 0
    for index, n in reversed(digits):
        number = number * n + index
    put_bytes(out, number.to_bytes((number.bit_length() + 7) // 8, "big"))


def _put_times(out: bytearray, times_ms: Sequence[int] | None, plays: Sequence[Mapping[str, Any]]) -> None:
    """The move times: 0 when none are kept, else :mod:`.timecode`'s code of one time per play."""
    if times_ms is None:
        out.append(0)
    else:
        if len(times_ms) != len(plays) or any(not isinstance(t, int) or t < 0 for t in times_ms):
            raise CompactRecordError(f"times_ms must be {len(plays)} non-negative integers (one per play)")
        out.append(_TIMES_CODED)
        put_bytes(out, timecode.pack(times_ms, [p["seat"] for p in plays]))


def _game_digest(dumped: str) -> bytes:
    """The 4 bytes that tie a blob to the game it encodes: the CRC32 of the record's JSON."""
    return zlib.crc32(dumped.encode()).to_bytes(4, "big")


# ------------------------------------------------------------------ decode


def decode(blob: bytes) -> GameRecord:
    """The record a blob holds (:class:`CompactRecordError` if it cannot be decoded)."""
    return decode_full(blob).record


def decode_full(blob: bytes) -> CompactRecord:
    """The record and the move times a blob holds (:class:`CompactRecordError` if it cannot be decoded)."""
    reader = Reader(_checked_body(bytes(blob)))
    try:
        return _decode(reader)
    except CompactRecordError:
        raise
    except (TablanetteError, ValueError, UnicodeDecodeError) as exc:
        raise CompactRecordError(f"compact record: {reader.where()}: {exc}") from None


def _checked_body(blob: bytes) -> bytes:
    if len(blob) < 6:
        raise CompactRecordError(f"compact record: truncated: {len(blob)} bytes, fewer than any record takes")
    head = blob[0]
    if head & 0xF0 != MAGIC:
        raise CompactRecordError(
            f"compact record: byte 0 is 0x{head:02x}, not a compact record (0x{MAGIC:02x}-0x{MAGIC | 0xF:02x})"
        )
    stored, computed = int.from_bytes(blob[-4:], "big"), zlib.crc32(blob[:-4])
    if head & 0x0F > VERSION:
        raise CompactRecordError(f"compact record: version {head & 0x0F} is newer than this reader's ({VERSION})")
    if stored != computed:
        raise CompactRecordError(
            f"compact record: checksum mismatch (stored 0x{stored:08x}, computed 0x{computed:08x}): "
            "the blob is corrupt or truncated"
        )
    if head & 0x0F not in READS:
        raise CompactRecordError(f"compact record: version {head & 0x0F} is not one this reader knows {READS}")
    return blob[:-4]


def _decode(r: Reader) -> CompactRecord:
    version = r.data[0] & 0x0F
    r.pos = 1
    code = r.byte("the preset")
    name = r.str("the preset name") if code == _NAMED else _preset_name(code)
    raw_rules = r.str("the rules overrides")
    overrides = json.loads(raw_rules) if raw_rules else {}
    if not isinstance(overrides, dict):
        raise CompactRecordError(f"compact record: {r.where()}: the rules overrides are not a JSON object")
    rules_obj = {"preset": name, **overrides}
    rid = r.str("the id")
    seed = _read_seed(r, rid, version)
    n_players = r.varint("the number of players")
    if not 2 <= n_players <= 4:
        raise CompactRecordError(f"compact record: {r.where()}: {n_players} players (2 to 4)")
    players = [r.str(f"player {s}") for s in range(n_players)]
    rules = Rules.from_record(rules_obj, players=n_players)
    end = r.byte("how the match ended")
    if end >= _END_FORFEIT + n_players:
        raise CompactRecordError(f"compact record: {r.where()}: unknown end code {end}")
    n_plays = r.varint("the number of plays")
    autos = _read_autos(r, n_plays)
    number = int.from_bytes(r.bytes("the plays"), "big")
    match = Match(rules, seed)
    seats = _replay_number(match, n_plays, autos, number)
    _end_as_coded(match, end, n_plays)
    times = _read_times(r, version, seats)
    digest = r.fixed(4, "the game's checksum")
    if r.pos != len(r.data):
        raise CompactRecordError(f"compact record: {len(r.data) - r.pos} bytes left over after the game's checksum")
    record = match_record(match, players, rid)
    record["rules"] = rules_obj  # the stored form, key order included (encode checked it is the engine's)
    if _game_digest(dumps(record)) != digest:
        raise CompactRecordError(
            f"compact record {rid}: its replay is not the game that was encoded (the game's checksum differs): "
            "the engine that replays it deals or orders legal plays otherwise than the one that wrote it"
        )
    return CompactRecord(record, times)


def _read_seed(r: Reader, rid: str, version: int) -> str:
    """The seed: the characters it shares with the id's start, then the rest (version 1: a plain string)."""
    shared = r.varint("the seed")
    if shared > len(rid):
        raise CompactRecordError(f"compact record: {r.where()}: the seed shares {shared} characters with a shorter id")
    return rid[:shared] + (r.str("the seed") if version == 1 else _seed_rest(r))


def _read_autos(r: Reader, n_plays: int) -> set[int]:
    """The places of the timeout plays among the ``n_plays`` plays (stored as gaps, each after the one before)."""
    autos: set[int] = set()
    at = 0
    for k in range(r.varint("the number of timeout plays")):
        gap = r.varint(f"timeout play {k}")
        at += gap
        if at >= n_plays or (k and not gap):
            raise CompactRecordError(f"compact record: {r.where()}: timeout play {k} (play {at}) out of order or range")
        autos.add(at)
    return autos


def _replay_number(match: Match, n_plays: int, autos: set[int], number: int) -> list[int]:
    """Replays the plays on ``match``, the chosen ones read off the mixed-radix ``number``; each play's seat."""
    seats: list[int] = []
    for i in range(n_plays):
        if match.is_over:
            raise CompactRecordError(f"compact record: play {i} of {n_plays}: the match is already over")
        seats.append(match.turn)
        if i in autos:
            match.push(match.timeout_play(), auto=True)
            continue
        legal = match.deal.legal_tuple()
        number, index = divmod(number, len(legal))
        match.push(legal[index])
    if number:
        raise CompactRecordError(f"compact record: the plays hold more than the {n_plays} plays recorded")
    return seats


def _end_as_coded(match: Match, end: int, n_plays: int) -> None:
    """Ends the replayed match as its end byte says (by its rules: the plays must have ended it already)."""
    if end == _END_NATURAL:
        if not match.is_over:
            raise CompactRecordError(f"compact record: the match is not over after its {n_plays} plays")
    elif match.is_over:
        raise CompactRecordError(f"compact record: the match ended by its rules, yet end code {end} says otherwise")
    elif end == _END_ABORTED:
        match.abort()
    else:
        match.forfeit(end - _END_FORFEIT)


def _seed_rest(r: Reader) -> str:
    """The seed after what it shares with the id (version 2: lowercase hex packed two digits a byte)."""
    kind = r.byte("the seed's form")
    if kind not in (_SEED_TEXT, _SEED_HEX):
        raise CompactRecordError(f"compact record: {r.where()}: unknown seed form {kind}")
    raw = r.bytes("the seed")
    return raw.hex() if kind == _SEED_HEX else raw.decode("utf-8")


def _read_times(r: Reader, version: int, seats: list[int]) -> tuple[int, ...] | None:
    """The move times, if the blob keeps them (version 1: Exp-Golomb; 2: :mod:`.timecode`)."""
    form = r.byte("the move times")
    if not form:
        return None
    data = r.bytes("the move times")
    if version == 1:
        times = _golomb_unpack(data, form - 1, len(seats))
    elif form == _TIMES_CODED:
        try:
            times = tuple(timecode.unpack(data, seats))
        except ValueError:
            times = None
    else:
        raise CompactRecordError(f"compact record: {r.where()}: unknown move-times form {form}")
    if times is None:
        raise CompactRecordError(f"compact record: {r.where()}: the move times do not hold {len(seats)} times")
    return times


def _end_code(result: Mapping[str, Any]) -> int:
    """The end byte of a match the plays did not end (-1: no such ending)."""
    seat = result.get("forfeit_seat")
    if result.get("reason") == "forfeit" and isinstance(seat, int) and seat >= 0:
        return _END_FORFEIT + seat
    return _END_ABORTED if result.get("reason") == "aborted" else -1


def _preset_name(code: int) -> str:
    if code >= len(PRESET_CODES):
        raise CompactRecordError(f"compact record: byte 1: unknown preset code {code}")
    return PRESET_CODES[code]


# ------------------------------------------------------------------ bytes


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _golomb_unpack(data: bytes, k: int, count: int) -> tuple[int, ...] | None:
    """``count`` order-``k`` Exp-Golomb codes (version 1's move times: most significant bit first,
    padded with 1s to a whole byte), or None if the bits do not hold exactly that many."""
    bits = "".join(format(b, "08b") for b in data)
    out: list[int] = []
    pos = 0
    for _ in range(count):
        zeros = 0
        while pos < len(bits) and bits[pos] == "0":
            zeros += 1
            pos += 1
        width = zeros + k + 1
        if pos + width > len(bits):
            return None
        out.append(int(bits[pos : pos + width], 2) - (1 << k))
        pos += width
    rest = bits[pos:]
    return tuple(out) if len(rest) < 8 and "0" not in rest else None
