"""Store benchmark: what a finished match costs in Redis, and the compact record beside the JSON one.

Run from the repository root (needs the Redis of ``TABLANETTE_REDIS_URL``, default
``redis://127.0.0.1:6379/0``; everything is written under a fresh prefix and deleted after)::

    python3 bench/store.py              # the demo's league shape, a few seconds
    python3 bench/store.py --quick      # CI smoke
    python3 -m bench.store --json       # the figures as one JSON object
    python3 bench/store.py --league demo --prefix tablanette   # measure a real league instead

Sections (each a function ``section(args) -> dict``; add a section by adding to ``SECTIONS``):

1. ``records``: matches of the demo's kind (``tablic`` to 101, two players, the built-in
   ``greedy`` and ``random`` bots, move times like the demo's: a few ms), each record as JSON
   (:func:`engine_service.rules.dumps`) and compact (:func:`engine_service.rules.compact.encode`):
   bytes, and encode and decode time (``json.dumps``/``json.loads`` beside them).
2. ``redis``: the demo's league shape (four bots, double round robin, two games a pairing: 24
   matches) played in-process and written as a worker does (queued, running, then
   :meth:`store.ledger.Ledger.commit`), twice: with the record as today's ledger stored it
   (JSON, written over the compact value) and compact. ``MEMORY USAGE`` of every key of the
   league, summed and divided by the finished matches, by kind of key.

3. ``archive``: the same league (JSON records, then compact), archived with
   :class:`store.archiver.Archiver` into a temporary folder: Redis bytes per finished match
   before and after, archive bytes per match on disk, the time to archive, and the time to read
   one record back (:meth:`store.results.LeagueResults.record`) from Redis and from the archive.

4. ``scale``: a league of ``--scale`` (100,000) simulated matches among 16 bots (real records
   reused under new match ids), committed through the ledger: Redis bytes per match and in all,
   the JSON record's figure beside it (estimated from its measured size: a JSON league that large
   is not written), commits per second, and the time to fit the ladder from every outcome.

With ``--league``, section 2 measures that league as it is in Redis (e.g. after
``bash scripts/demo.sh``, prefix ``tablanette`` unless ``TABLANETTE_PREFIX`` says otherwise).
Nothing here is a timing assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis

import store.ledger as store_ledger
from bots import make_bot, play_match
from cli.local import clear_prefix
from engine_service.rules import GameRecord, Rules, dumps, match_record
from engine_service.rules.compact import decode, encode
from scheduler.league import prepare
from scheduler.ratings import Outcome, fit_ratings
from store.archiver import Archiver
from store.keys import Keys, LeagueKeys
from store.leagues import League, LeagueStore
from store.ledger import Ledger, match_luck, record_value
from store.results import LeagueResults
from store.units import mirror_unit

REDIS_URL = os.environ.get("TABLANETTE_REDIS_URL", "redis://127.0.0.1:6379/0")
DEMO_BOTS = ["greedy", "random", "cautious", "greedy2"]
"""Four bots, as the demo (three built-in Python bots and the Node.js bot)."""


def demo_match(seed: str, seats: list[str], rng: random.Random) -> tuple[GameRecord, list[int]]:
    """One match of the demo's kind and demo-like move times (ms)."""
    kinds = ["greedy" if s.startswith("greedy") else "random" for s in seats]
    match = play_match(Rules.preset("tablic"), seed, [make_bot(k, f"{seed}{i}") for i, k in enumerate(kinds)])
    record = match_record(match, [f"{s}@1.0" for s in seats], seed)
    plays = sum(len(d["plays"]) for d in record["deals"])
    return record, [rng.choice((0, 0, 1, 1, 1, 2, 3)) for _ in range(plays)]


def _time(fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds of ``fn`` over ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def section_records(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(26)
    rows = []
    for g in range(4 if args.quick else 24):
        record, times = demo_match(f"demo/r{g}/p1/g1", ["greedy", "random"], rng)
        line = dumps(record)
        blob, timed = encode(record), encode(record, times)
        rows.append(
            {
                "plays": len(times),
                "json_bytes": len(line.encode()),
                "compact_bytes": len(blob),
                "compact_with_times_bytes": len(timed),
                "json_encode_ms": _time(lambda r=record: dumps(r), 5) * 1e3,
                "json_decode_ms": _time(lambda s=line: json.loads(s), 5) * 1e3,
                "compact_encode_ms": _time(lambda r=record, t=times: encode(r, t), 3) * 1e3,
                "compact_decode_ms": _time(lambda b=timed: decode(b), 3) * 1e3,
            }
        )
    return {k: statistics.mean(r[k] for r in rows) for k in rows[0]} | {"matches": len(rows)}


def league_memory(r: redis.Redis, keys: LeagueKeys) -> dict[str, Any]:
    """``MEMORY USAGE`` of every key of a league, by kind, per finished match."""
    finished = int(r.llen(keys.finished_order))
    by_kind: dict[str, int] = defaultdict(int)
    base = keys.base
    for key in r.scan_iter(match=base.replace("{", "\\{").replace("}", "\\}") + "*", count=1000):
        name = key.decode()
        rest = name[len(base) :].lstrip(":")
        kind = rest.split(":", 1)[0] or "meta"
        by_kind[kind] += int(r.memory_usage(key, samples=0) or 0)
    record_bytes = [len(v) for v in r.hvals(keys.records)]
    total = sum(by_kind.values())
    return {
        "finished": finished,
        "bytes_per_match": total / max(finished, 1),
        "record_value_bytes_per_match": statistics.mean(record_bytes) if record_bytes else 0,
        "by_kind_per_match": {k: v / max(finished, 1) for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])},
    }


def play_league(r: redis.Redis, prefix: str, name: str, json_records: bool, games: int) -> LeagueKeys:
    """The demo's league shape, played in-process and committed as a worker does."""
    store = LeagueStore(r, prefix)
    store.create(League(name, Rules.preset("tablic"), "double-round-robin", games, seed=name))
    store.add_bots(name, DEMO_BOTS)
    keys = store.keys(name)
    rng = random.Random(name)
    for planned in prepare(store, name):
        mid, seats = planned.match_id, list(planned.seats)
        store.mark_queued(name, mid)
        r.hincrby(keys.match(mid), "starts", 1)
        store.ledger.set_state(keys, mid, "running", worker="w1", started_at=f"{time.time():.3f}", waiting="")
        seed = planned.seed
        record, times = demo_match(seed, seats, rng)
        record["id"] = f"{name}/{mid}"
        conduct = [{"moves": 0, "timeouts": 0, "illegal": 0, "forfeit": False} for _ in seats]
        unit, luck = mirror_unit(seed, seats), match_luck(record)  # as a worker commits it
        store.ledger.commit(keys, mid, record, seats, conduct, 24, 1500, unit=unit, times_ms=times, luck=luck)
        if json_records:  # what the ledger stored before compact records
            r.hset(keys.records, mid, json.dumps(record, separators=(",", ":")))
    return keys


def section_redis(args: argparse.Namespace) -> dict[str, Any]:
    r = redis.Redis.from_url(REDIS_URL)
    if args.league:
        return {"league": args.league, **league_memory(r, Keys(args.prefix).league(args.league))}
    prefix = f"bench-store-{secrets.token_hex(4)}"
    games = 1 if args.quick else 2
    try:
        before = league_memory(r, play_league(r, prefix, "json", True, games))
        after = league_memory(r, play_league(r, prefix, "compact", False, games))
    finally:
        clear_prefix(r, prefix)
    return {"json_records": before, "compact_records": after}


def section_archive(args: argparse.Namespace) -> dict[str, Any]:
    r = redis.Redis.from_url(REDIS_URL)
    prefix = f"bench-store-{secrets.token_hex(4)}"
    games = 1 if args.quick else 2
    out: dict[str, Any] = {}
    root = Path(tempfile.mkdtemp(prefix="bench-archive-"))
    try:
        for label, as_json in (("json_records", True), ("compact_records", False)):
            keys = play_league(r, prefix, label, as_json, games)
            LeagueStore(r, prefix).finish_if_complete(label)
            results = LeagueResults(r, prefix)
            mid = results.finished_ids(label, 1)[0][0]
            read_redis = _time(lambda res=results, lg=label, m=mid: res.record(lg, m), 20)
            before = league_memory(r, keys)
            start = time.perf_counter()
            report = Archiver(r, prefix, root).archive(label)
            archive_s = time.perf_counter() - start
            after = league_memory(r, keys)
            results.record(label, mid)  # opens the archive once, as a serving process does
            out[label] = {
                "finished": report.matches,
                "redis_bytes_per_match_before": before["bytes_per_match"],
                "redis_bytes_per_match_after": after["bytes_per_match"],
                "archive_bytes_per_match": report.bytes_on_disk / max(report.matches, 1),
                "archive_seconds": archive_s,
                "read_record_ms_redis": read_redis * 1e3,
                "read_record_ms_archive": _time(lambda res=results, lg=label, m=mid: res.record(lg, m), 20) * 1e3,
            }
    finally:
        clear_prefix(r, prefix)
        shutil.rmtree(root, ignore_errors=True)
    return out


def section_scale(args: argparse.Namespace) -> dict[str, Any]:
    """A league of ``--scale`` simulated matches (16 bots, records of real demo-like games reused under
    new match ids), committed through the ledger: Redis bytes per match, the JSON record's figure
    beside it (its measured bytes per match times the matches: a JSON league that size is not
    written), and the time to fit the ladder from every outcome."""
    r = redis.Redis.from_url(REDIS_URL)
    count = 2_000 if args.quick else args.scale
    bots = [f"bot{i:02d}" for i in range(16)]
    rng = random.Random(100)
    pool = [demo_match(f"scale{i}", ["greedy", "random"], rng) for i in range(8)]
    blobs = {id(rec): record_value(rec, times) for rec, times in pool}
    lucks = {id(rec): match_luck(rec) for rec, _ in pool}
    prefix = f"bench-store-{secrets.token_hex(4)}"
    ledger = Ledger(r, replicas=0, wait_ms=0)
    keys = Keys(prefix).league("scale")
    clean = {"moves": 0, "timeouts": 0, "illegal": 0, "forfeit": False}
    original = store_ledger.record_value  # encoding is measured in "records"; here each blob is made once
    store_ledger.record_value = lambda record, times_ms=None: blobs[id(record)]  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        for i in range(count):
            record, times = pool[i % len(pool)]
            a, b = rng.sample(bots, 2)
            mid = f"r{i // 240 + 1}/p{i % 240 // 2 + 1}/g{i % 2 + 1}"  # as a planner names them
            pipe = r.pipeline(transaction=False)  # as planning, queueing and a worker's start write it
            pipe.hset(keys.match(mid), mapping={"seats": f'["{a}","{b}"]', "seed": secrets.token_hex(8), "round": 1})
            pipe.rpush(keys.plan, mid)
            pipe.execute()
            ledger.set_state(keys, mid, "queued", queued_at=f"{time.time():.3f}")
            ledger.set_state(keys, mid, "running", worker="w1", started_at=f"{time.time():.3f}", waiting="")
            ledger.commit(
                keys,
                mid,
                record,
                [a, b],
                [clean, clean],
                24,
                1500,
                unit=f"u{i // 2}",
                times_ms=times,
                luck=lucks[id(record)],
            )
        commit_s = time.perf_counter() - start
        memory = league_memory(r, keys)
        outcomes = [Outcome.from_json(json.loads(o)) for o in r.lrange(keys.outcomes, 0, -1)]
        start = time.perf_counter()
        fit_ratings(outcomes, bots=bots)
        fit_s = time.perf_counter() - start
    finally:
        store_ledger.record_value = original
        clear_prefix(r, prefix)
    json_value = statistics.mean(len(dumps(rec)) for rec, _ in pool)
    json_per_match = memory["bytes_per_match"] + json_value - memory["record_value_bytes_per_match"]
    return {
        "matches": count,
        "commits_per_s": count / commit_s,
        "redis_bytes": memory["bytes_per_match"] * count,
        "bytes_per_match": memory["bytes_per_match"],
        "by_kind_per_match": memory["by_kind_per_match"],
        "json_record_redis_bytes_estimate": json_per_match * count,
        "fit_seconds": fit_s,
    }


SECTIONS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "records": section_records,
    "redis": section_redis,
    "archive": section_archive,
    "scale": section_scale,
}


def report(figures: dict[str, Any]) -> None:
    rec = figures.get("records")
    if rec:
        print(f"records ({rec['matches']} matches of the demo's kind, {rec['plays']:.0f} plays on average)")
        print(f"  {'':24}{'JSON':>12}{'compact':>12}{'+ times':>12}")
        sizes = rec["json_bytes"], rec["compact_bytes"], rec["compact_with_times_bytes"]
        print(f"  {'bytes':24}" + "".join(f"{v:>12.0f}" for v in sizes))
        print(f"  {'encode (ms)':24}{rec['json_encode_ms']:>12.3f}{rec['compact_encode_ms']:>12.3f}")
        print(f"  {'decode (ms)':24}{rec['json_decode_ms']:>12.3f}{rec['compact_decode_ms']:>12.3f}")
    red = figures.get("redis")
    if red:
        pairs = [(red.get("league", "league"), red)] if "league" in red else list(red.items())
        for label, m in pairs:
            print(
                f"redis, {label}: {m['bytes_per_match']:.0f} bytes per finished match ({m['finished']} finished), "
                f"the record value {m['record_value_bytes_per_match']:.0f} bytes"
            )
            print("  " + ", ".join(f"{k} {v:.0f}" for k, v in m["by_kind_per_match"].items()))


def report_archive(figures: dict[str, Any]) -> None:
    for label, a in figures.get("archive", {}).items():
        print(
            f"archive, {label} ({a['finished']} matches): Redis {a['redis_bytes_per_match_before']:.0f} -> "
            f"{a['redis_bytes_per_match_after']:.0f} bytes per match, archive {a['archive_bytes_per_match']:.0f} "
            f"bytes per match on disk, archived in {a['archive_seconds']:.2f} s; one record read in "
            f"{a['read_record_ms_redis']:.2f} ms from Redis, {a['read_record_ms_archive']:.2f} ms from the archive"
        )


def report_scale(figures: dict[str, Any]) -> None:
    sc = figures.get("scale")
    if sc:
        print(
            f"scale: {sc['matches']} simulated matches of 16 bots: Redis {sc['redis_bytes'] / 2**20:.1f} MiB "
            f"({sc['bytes_per_match']:.0f} bytes per match; with JSON records it would be "
            f"{sc['json_record_redis_bytes_estimate'] / 2**20:.0f} MiB, from the JSON record's measured size), "
            f"committed at {sc['commits_per_s']:.0f} matches/s; the ladder fitted from every outcome in "
            f"{sc['fit_seconds']:.2f} s"
        )
        print("  " + ", ".join(f"{k} {v:.0f}" for k, v in sc["by_kind_per_match"].items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer matches (CI smoke)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--league", help="measure this league in Redis instead of a simulated one")
    parser.add_argument("--prefix", default=os.environ.get("TABLANETTE_PREFIX", "tablanette"))
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append", help="run only these sections")
    parser.add_argument("--scale", type=int, default=100_000, help="matches in the scale section's league")
    args = parser.parse_args(argv)
    figures = {name: fn(args) for name, fn in SECTIONS.items() if not args.only or name in args.only}
    if args.json:
        print(json.dumps(figures))
    else:
        report(figures)
        report_archive(figures)
        report_scale(figures)


if __name__ == "__main__":
    main()
