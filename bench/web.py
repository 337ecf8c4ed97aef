"""How long each page of the web ladder takes to serve with a big league.

Generates a league of 2,000 bots and 50,000 finished matches straight into Redis
through the real ledger commit (real records of one-deal matches played by the
engine, relabelled), starts ``tablanette web`` and times every API endpoint
behind the pages, beside the baseline of a trivial request (``/api/health``)
through the same server in the same run.

Run: ``python bench/web.py [--quick] [--json] [--bots N] [--matches N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.kit import temp_arena  # noqa: E402
from bots import make_bot, play_match  # noqa: E402
from engine_service.rules import GameRecord, Rules, match_record  # noqa: E402
from store.leagues import League, LeagueStore  # noqa: E402

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}


def generate(client: redis.Redis, prefix: str, bots: int, matches: int) -> tuple[str, list[str], str]:
    """A finished league with ``bots`` bots and ``matches`` matches; returns (league, bots, a match id)."""
    rng = random.Random(7)
    rules = Rules.preset("tablic", deals=1)
    names = [f"bot{i:03d}" for i in range(bots)]
    pool = []
    for i in range(200):
        m = play_match(rules, f"pool{i}", [make_bot("greedy"), make_bot("random", i)])
        pool.append(match_record(m, ["x", "y"], "x"))
    store = LeagueStore(client, prefix)
    store.create(League("big", rules, games=2, seed="big"))
    client.hset(
        store.keys("big").meta,
        mapping={"bots": json.dumps(names), "status": "running", "started_at": time.time() - 3600},
    )
    keys = store.keys("big")
    for name in names:
        client.zadd(keys.form, {name: 1500}, nx=True)
    ids = []
    batch = client.pipeline(transaction=False)
    for i in range(matches):
        a, b = rng.sample(names, 2)
        mid = f"r{i // 250 + 1}/p{i % 250 + 1}/g1"
        ids.append(mid)
        batch.hset(keys.match(mid), mapping={"seats": json.dumps([a, b]), "seed": "s", "round": i // 250 + 1})
        if len(batch) >= 2000:
            batch.execute()
    batch.execute()
    client.rpush(keys.plan, *ids)
    for i, mid in enumerate(ids):
        seats = json.loads(client.hget(keys.match(mid), "seats"))
        record: GameRecord = {**pool[i % len(pool)], "id": f"big/{mid}", "players": seats}
        store.ledger.set_state(keys, mid, "running", worker="bench")
        store.ledger.commit(keys, mid, record, seats, [CLEAN, CLEAN], 24, 1500)
    client.hset(keys.meta, mapping={"status": "finished", "finished_at": time.time()})
    return "big", names, ids[-1]


def timed(client: httpx.Client, url: str, repeat: int) -> list[float]:
    client.get(url).raise_for_status()  # warm-up, and a failing page fails the benchmark
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        client.get(url).raise_for_status()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="50 bots, 2,000 matches")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bots", type=int, default=2000)
    parser.add_argument("--matches", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    bots, matches = (50, 2000) if args.quick else (args.bots, args.matches)

    arena = temp_arena("web")
    try:
        t0 = time.perf_counter()
        league, names, last_match = generate(arena.redis, arena.prefix, bots, matches)
        gen_s = time.perf_counter() - t0
        _, port = arena.start_web()
        base = f"http://127.0.0.1:{port}"
        top = names[0]
        endpoints = {
            "baseline /api/health": "/api/health",
            "leagues list": "/api/leagues",
            "league + live progress": f"/api/leagues/{league}",
            "ladder (a page of 100)": f"/api/leagues/{league}/ladder",
            "ladder (last page)": f"/api/leagues/{league}/ladder?offset={max(bots - 100, 0)}",
            "how sure: LOS (top 30)": f"/api/leagues/{league}/los",
            "crosstable (top 30)": f"/api/leagues/{league}/crosstable",
            "recent matches (20)": f"/api/leagues/{league}/matches",
            "bot page": f"/api/leagues/{league}/bots/{top}",
            "bot across leagues": f"/api/bots/{top}",
            "match + record": f"/api/leagues/{league}/matches/{last_match}",
            "replay frames": f"/api/leagues/{league}/replays/{last_match}",
            "HTML page (static)": f"/leagues/{league}",
        }
        results = {}
        with httpx.Client(base_url=base, timeout=60) as http:
            for label, path in endpoints.items():
                samples = timed(http, path, args.repeat)
                results[label] = (statistics.median(samples), sorted(samples)[int(0.95 * (len(samples) - 1))])
    finally:
        arena.close()

    base_ms = results["baseline /api/health"][0]
    if args.json:
        print(
            json.dumps(
                {
                    "bots": bots,
                    "matches": matches,
                    "generate_seconds": round(gen_s, 1),
                    "pages": {
                        k: {"median_ms": round(m, 2), "p95_ms": round(p, 2), "ratio_to_baseline": round(m / base_ms, 1)}
                        for k, (m, p) in results.items()
                    },
                }
            )
        )
        return
    print(
        f"web ladder with {bots} bots and {matches:,} finished matches (generated in {gen_s:.0f} s), "
        f"{args.repeat} requests each"
    )
    print(f"  {'page / endpoint':28} {'median ms':>10} {'p95 ms':>8} {'x baseline':>11}")
    for label, (med, p95) in results.items():
        print(f"  {label:28} {med:10.2f} {p95:8.2f} {med / base_ms:11.1f}")


if __name__ == "__main__":
    main()
