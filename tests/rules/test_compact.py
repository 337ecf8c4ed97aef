"""Compact records: every record round-trips to the same JSON bytes; a bad blob is refused, never misread.

Matches of every preset and player count (with timeout plays, forfeits, aborts, overrides and
move times) are encoded and decoded; the decoded record must be the engine's record byte for byte
(:func:`dumps`) and re-verify. Then blobs are damaged every way a store or a wire can damage them.
"""

from __future__ import annotations

import hashlib
import random
import zlib
from typing import Any

import pytest

from engine_service.rules import PRESETS, Match, RecordError, Rules, dumps, match_record, verify_record
from engine_service.rules.compact import (
    MAGIC,
    PRESET_CODES,
    VERSION,
    CompactRecordError,
    decode,
    decode_full,
    encode,
    encode_match,
    is_compact,
)

CASES = [(preset, n) for preset, spec in PRESETS.items() for n in spec.players]


def random_match(rules: Rules, seed: str, rng: random.Random, end: str = "natural") -> tuple[Match, int]:
    """A match of random plays with some timeout plays; ended by its rules, or cut by a forfeit/abort."""
    match = Match(rules, seed)
    cut = rng.randrange(0, 120) if end != "natural" else -1
    n = 0
    while not match.is_over:
        if n == cut:
            if end == "forfeit":
                match.forfeit(rng.randrange(rules.players))
            else:
                match.abort()
            break
        if rng.random() < 0.05:
            match.play(match.timeout_play(), auto=True)
        else:
            match.play(rng.choice(match.legal_plays()))
        n += 1
    return match, n


def round_trip(record: Any, times: list[int] | None = None, match: Match | None = None) -> bytes:
    """``record``'s blob, checked to decode to it; with the live ``match`` it was made from, checked to be
    the blob the match makes without a replay (what the arena stores of a match it played)."""
    blob = encode(record, times)
    if match is not None:
        assert encode_match(match, record, times) == blob
    assert is_compact(blob) and blob[0] == MAGIC | VERSION
    back = decode_full(blob)
    assert dumps(back.record) == dumps(record)
    assert back.times_ms == (None if times is None else tuple(times))
    verify_record(back.record)
    return blob


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_every_preset_and_player_count_round_trips(preset: str, players: int) -> None:
    rng = random.Random(f"{preset}/{players}")
    names = [f"bot{s}@1.{s}" for s in range(players)]
    for g, end in enumerate(["natural", "natural", "forfeit", "aborted", "forfeit"]):
        rules = Rules.preset(preset, players=players, target=rng.choice([11, 31, 61]))
        match, plays = random_match(rules, f"seed/{preset}/{g}", rng, end)
        record = match_record(match, names, f"league/r{g}/p1/g1")
        times = [rng.choice([0, 1, 2, 5, 40, 900, 30_000]) for _ in range(plays)]
        round_trip(record, times if g % 2 else None, match)


def test_overrides_fixed_deals_and_unusual_strings_round_trip() -> None:
    rng = random.Random(7)
    rules = Rules.preset("pisti", players=3).with_overrides({"deals": 2, "ace_values": [1, 11], "pisti_bonus": 20})
    match, _ = random_match(rules, "ünïcode seed ♠", rng)
    record = match_record(match, ["ä@1", "", "名前"], "")
    blob = round_trip(record, match=match)
    assert decode(blob)["rules"] == rules.to_record()
    match, _ = random_match(Rules.preset("tablic", players=4, partnerships=False), "x", rng)
    round_trip(match_record(match, list("abcd"), "x/1"), match=match)


def test_forfeit_before_the_first_play_and_a_demo_sized_match() -> None:
    early = Match(Rules.preset("tablic", players=4), seed="s")
    early.forfeit(3)
    blob = round_trip(match_record(early, list("abcd"), "early"), match=early)
    assert decode(blob)["deals"] == []
    rng = random.Random(1)
    match, plays = random_match(Rules.preset("tablic", target=101), "demo/r1/p1", rng)
    record = match_record(match, ["greedy@1.0", "random@1.0"], "demo/r1/p1/g1")
    blob = round_trip(record)
    # the Done-when bound: the record part stays under 300 bytes for a match of the demo's kind
    assert len(blob) <= 300 < len(dumps(record)) // 50, (len(blob), plays)


def test_the_time_each_move_took_round_trips_at_any_scale() -> None:
    rng = random.Random(3)
    match, plays = random_match(Rules.preset("tablic", target=31), "t", rng)
    record = match_record(match, ["a", "b"], "t/1")
    for times in ([0] * plays, [10**9] * plays, [rng.randrange(0, 5000) for _ in range(plays)]):
        round_trip(record, times)
    with pytest.raises(CompactRecordError, match=f"times_ms must be {plays} non-negative"):
        encode(record, [1] * (plays + 1))
    with pytest.raises(CompactRecordError, match="non-negative"):
        encode(record, [-1] * plays)


def test_a_match_that_did_not_keep_its_choices_is_encoded_from_its_record() -> None:
    """An unchecked push does not look up its play's index: the match no longer knows its choices, and its
    blob is made by replaying the record, the same bytes."""
    rules = Rules.preset("tablic", target=21)
    match = Match(rules, "pushed")
    while not match.is_over:
        match.push(match.legal_plays()[-1])
    assert match.choices is None
    record = match_record(match, ["a", "b"], "pushed/1")
    assert encode_match(match, record) == encode(record)
    with pytest.raises(CompactRecordError, match="not over"):
        encode_match(Match(rules, "running"), record)


def test_a_record_that_does_not_replay_is_not_encoded() -> None:
    match, _ = random_match(Rules.preset("tablic", target=31), "bad", random.Random(5))
    record = match_record(match, ["a", "b"], "bad/1")
    bonus = next(p for d in record["deals"] for p in d["plays"] if p["bonus"])
    bonus["bonus"] += 1
    with pytest.raises(CompactRecordError, match="record bad/1: cannot encode: it would not decode to the same"):
        encode(record)
    record = match_record(match, ["a", "b"], "bad/1")
    record["deals"][0]["plays"][0]["seat"] = 1 - record["deals"][0]["plays"][0]["seat"]
    with pytest.raises(CompactRecordError, match="record bad/1: play 0: seat"):
        encode(record)
    record = match_record(match, ["a", "b"], "bad/1")
    record["rules"] = {"target": 31, "preset": "tablic"}  # not the engine's own form
    with pytest.raises(CompactRecordError, match="do not start with their preset"):
        encode(record)


@pytest.fixture(scope="module")
def blob() -> bytes:
    match, plays = random_match(Rules.preset("tablic", target=61), "c", random.Random(11))
    return encode(match_record(match, ["a", "b"], "c/1"), [i % 7 for i in range(plays)])


def reseal(body: bytes) -> bytes:
    """A body with a valid checksum (damage the checksum cannot see)."""
    return body + zlib.crc32(body).to_bytes(4, "big")


def test_every_truncation_and_every_flipped_byte_is_refused(blob: bytes) -> None:
    for n in range(len(blob)):
        with pytest.raises(CompactRecordError, match=r"compact record: (truncated|checksum mismatch|byte 0)"):
            decode(blob[:n])
    for i in range(len(blob)):
        for bit in (0x01, 0x80):
            bad = bytearray(blob)
            bad[i] ^= bit
            with pytest.raises(CompactRecordError, match="compact record: "):
                decode(bytes(bad))


def test_damage_behind_a_valid_checksum_is_refused_never_misread(blob: bytes) -> None:
    body, good = blob[:-4], decode_full(blob)
    refused = misread_times = 0
    for i in range(1, len(body)):
        for bit in (0x01, 0x04, 0x80):
            bad = bytearray(body)
            bad[i] ^= bit
            try:
                got = decode_full(reseal(bytes(bad)))
            except RecordError as exc:
                assert str(exc).startswith("compact record: ") or "record" in str(exc), exc
                refused += 1
                continue
            # past both checksums (the blob's and the game's) only the move times can differ, never the game
            assert dumps(got.record) == dumps(good.record), i
            misread_times += got.times_ms != good.times_ms
    assert refused > len(body) and misread_times > 0
    with pytest.raises(CompactRecordError, match="bytes left over"):
        decode(reseal(body + b"\x00"))
    with pytest.raises(CompactRecordError, match="truncated at byte"):
        decode(reseal(body[:-3]))


def test_a_newer_version_or_another_format_is_named(blob: bytes) -> None:
    with pytest.raises(CompactRecordError, match=f"version {VERSION + 1} is newer than this reader's \\({VERSION}\\)"):
        decode(reseal(bytes([MAGIC | (VERSION + 1)]) + blob[1:-4]))
    with pytest.raises(CompactRecordError, match="version 0 is not one this reader knows"):
        decode(reseal(bytes([MAGIC]) + blob[1:-4]))
    with pytest.raises(CompactRecordError, match="byte 0 is 0x7b, not a compact record"):
        decode(b'{"format":"tablanette-record/1"}')
    with pytest.raises(CompactRecordError, match="fewer than any record takes"):
        decode(b"")
    with pytest.raises(CompactRecordError, match=f"byte 1: unknown preset code {len(PRESET_CODES)}"):
        decode(reseal(blob[:1] + bytes([len(PRESET_CODES)]) + blob[2:-4]))


def test_plays_past_the_end_or_short_of_it_are_refused() -> None:
    match, plays = random_match(Rules.preset("tablic", target=11), "p", random.Random(2))
    record = match_record(match, ["a", "b"], "p")
    body = bytearray(encode(record)[:-4])
    # the play count sits after the end byte; find it by re-encoding with a known neighbour
    at = body.index(bytes([0]) + _varint(plays))
    longer, shorter = bytearray(body), bytearray(body)
    longer[at + 1 : at + 1 + len(_varint(plays))] = _varint(plays + 1)
    shorter[at + 1 : at + 1 + len(_varint(plays))] = _varint(plays - 1)
    with pytest.raises(CompactRecordError, match=f"play {plays} of {plays + 1}: the match is already over"):
        decode(reseal(bytes(longer)))
    with pytest.raises(CompactRecordError, match="compact record: "):
        decode(reseal(bytes(shorter)))


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


GOLDEN = bytes.fromhex(
    "c1000d7b22746172676574223a32317d08676f6c64656e2f3106000205616c7068610462657461006000185fa3c6ef4a67"
    "4661ec07c3aab12f95360790ae4b393bff92022db456722d159c8b456722d159c8b456722d159c8b456722d159c8b4567"
    "22d159c8b456722d159c8b456722d15bfed922147c2ae9096"
)
"""A tablic game to 21 written by the format's first encoder: 96 plays, move times ``k % 7`` ms."""
GOLDEN_V2 = bytes.fromhex(
    "c2000d7b22746172676574223a32317d08676f6c64656e2f310601000205616c7068610462657461006000185fa3c6ef4a67"
    "4661ec07c3aab12f95360790ae4b393bff9201294bb0b2534a4e0bab1b46a554be98b3a1ec59a38ab23691b666bb441fedec"
    "f325e4298f6109f427d8a8ed92214789f840a7"
)
"""The same game as version 2 writes it (the seed's form byte; the move times range-coded per seat)."""


def test_a_blob_written_once_decodes_to_the_same_game_for_good() -> None:
    """Stored blobs outlive the engine that wrote them: if the deal or the legal plays' order ever changes,
    this blob no longer decodes (the game's checksum refuses it), and this test says so before any store does."""
    got = decode_full(GOLDEN)
    assert hashlib.sha256(dumps(got.record).encode()).hexdigest() == (
        "499d3bcf46ef73098848a17d32cf4e136dd8c2f7abf60b2b41c80ac652fd2ffc"
    )
    assert got.times_ms == tuple(k % 7 for k in range(96))
    verify_record(got.record)


def test_version_2_holds_the_same_game_and_times_and_is_what_the_encoder_writes_now() -> None:
    old, new = decode_full(GOLDEN), decode_full(GOLDEN_V2)
    assert dumps(new.record) == dumps(old.record) and new.times_ms == old.times_ms
    assert encode(new.record, list(new.times_ms)) == GOLDEN_V2  # a change to the writer shows here first
    assert GOLDEN[0] == 0xC1 and GOLDEN_V2[0] == 0xC2
