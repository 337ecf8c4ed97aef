"""Compact records in the store: what every reader gets is the JSON the engine wrote, byte for byte.

Real Redis throughout. The ledger commits records of every preset and player count (compact, with
move times), and a league played by real workers and bots is exported with the CLI and verified;
a record stored as JSON by the ledger of before is still read the same, and a damaged blob names
its league and match.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena_harness import REDIS_URL, Arena, unique_prefix

from engine_service.rules import PRESETS, Match, RecordError, Rules, dumps, match_record
from engine_service.rules.compact import decode_full, encode, is_compact
from scheduler.league import prepare
from store.leagues import League, LeagueStore
from store.results import LeagueResults

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "forfeit": False}


@pytest.fixture
def store() -> Iterator[LeagueStore]:
    client = redis.Redis.from_url(REDIS_URL)
    prefix = unique_prefix("compact")
    yield LeagueStore(client, prefix)
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)


def random_record(rules: Rules, seed: str, names: list[str], rng: random.Random) -> tuple[dict, list[int]]:  # type: ignore[type-arg]
    match = Match(rules, seed)
    while not match.is_over:
        if rng.random() < 0.03:
            match.play(match.timeout_play(), auto=True)
        else:
            match.play(rng.choice(match.legal_plays()))
    record = match_record(match, names, seed)
    return dict(record), [rng.randrange(0, 3000) for _ in range(sum(len(d["plays"]) for d in record["deals"]))]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_ledger_stores_compact_and_every_reader_gets_the_engines_json(store: LeagueStore, players: int) -> None:
    rng = random.Random(players)
    names = [f"b{s}" for s in range(players)]
    presets = [p for p, spec in PRESETS.items() if players in spec.players]
    store.create(League("c", Rules.preset(presets[0], players=players), "round-robin", len(presets), seed="c"))
    store.add_bots("c", names)
    keys, results = store.keys("c"), LeagueResults(store.r, store.prefix)
    plan = prepare(store, "c")
    wrote = {}
    for planned, preset in zip(plan, presets * len(plan), strict=False):
        record, times = random_record(Rules.preset(preset, players=players, target=31), planned.seed, names, rng)
        assert store.ledger.commit(keys, planned.match_id, record, names, [CLEAN] * players, 24, 1500, times_ms=times)
        raw = store.r.hget(keys.records, planned.match_id)
        assert is_compact(raw) and len(raw) < len(dumps(record)) // 10
        assert dumps(results.record("c", planned.match_id)) == dumps(record)  # type: ignore[arg-type]
        assert results.move_times("c", planned.match_id) == tuple(times)
        wrote[planned.match_id] = dumps(record)
    assert [dumps(r) for r in results.records("c")] == [wrote[m.match_id] for m in plan if m.match_id in wrote]


def test_a_record_stored_as_json_still_reads_and_a_damaged_blob_names_its_match(store: LeagueStore) -> None:
    store.create(League("old", Rules.preset("pisti"), "round-robin", 2, seed="old"))
    store.add_bots("old", ["a", "b"])
    keys, results = store.keys("old"), LeagueResults(store.r, store.prefix)
    first, second = prepare(store, "old")[:2]
    record, times = random_record(Rules.preset("pisti", target=21), first.seed, ["a", "b"], random.Random(1))
    store.ledger.commit(keys, first.match_id, record, ["a", "b"], [CLEAN] * 2, 24, 1500, times_ms=times)
    blob = store.r.hget(keys.records, first.match_id)
    store.r.hset(keys.records, first.match_id, json.dumps(record, separators=(",", ":")))  # the ledger of before
    assert dumps(results.record("old", first.match_id)) == dumps(record)  # type: ignore[arg-type]
    assert results.move_times("old", first.match_id) is None
    store.r.hset(keys.records, second.match_id, blob[:-1])
    with pytest.raises(RecordError, match=f"league old, match {second.match_id}: compact record: checksum mismatch"):
        list(results.records("old"))


def test_a_league_played_by_workers_exports_the_engines_json(arena: Arena, tmp_path: Path) -> None:
    arena.extra_env.update({"TABLANETTE_GRACE_MS": "3000"})
    _, port = arena.start_engine()
    for name, kind in {"gus": "greedy", "rex": "random"}.items():
        arena.start_python_bot(kind, name, arena.add_bot(name), port)
    arena.start_worker("w1")
    arena.wait_connected("gus", "rex")
    for cmd in (
        ["league", "create", "cl", "--games", "2", "--rule", "target=41"],
        ["league", "add-bot", "cl", "gus", "rex"],
    ):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stderr + done.stdout
    run = arena.tablanette("league", "start", "cl", "--window", "0", timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    out = tmp_path / "cl.jsonl"
    assert arena.tablanette("records", "export", "--league", "cl", "--out", str(out)).returncode == 0
    verify = arena.tablanette("records", "verify", str(out))
    keys = LeagueStore(arena.redis, arena.prefix).keys("cl")
    planned = arena.redis.llen(keys.plan)
    assert verify.returncode == 0 and f"{planned} record(s) verified" in verify.stdout, verify.stdout + verify.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    stored = [arena.redis.hget(keys.records, m) for m in arena.redis.lrange(keys.plan, 0, -1)]
    for line, blob in zip(lines, stored, strict=True):
        assert is_compact(blob)
        full = decode_full(blob)
        assert dumps(full.record) == line
        assert full.times_ms is not None and len(full.times_ms) == sum(len(d["plays"]) for d in full.record["deals"])
        assert encode(json.loads(line), full.times_ms) == blob  # the exported JSON is the stored match, and back
        assert len(blob) <= 400 < len(line) // 20
