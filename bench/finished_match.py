"""What a worker spends on a match once it is over: each part re-derived from the record, beside the finished
match made once from the live match (:func:`engine_service.rules.finish`), both measured in the same run.

Real games of built-in bots (tablic, two and four seats, ``greedy`` against ``random``), played in-process.
For each, the CPU of the work between the last answer and the ledger's commit script, two ways:

- **re-derived** (the arena before the finished value): the record built, the replica's record checked by
  parsing both sides' JSON, the luck estimate re-verifying the record before sampling
  (:func:`engine_service.rules.luck_of_record`), and the compact blob replaying the record and decoding it
  again to check itself (:func:`engine_service.rules.compact.encode`);
- **made once**: :func:`~engine_service.rules.finish` (the record, its JSON text, and the blob from the
  plays' indexes the match kept), the replica's record compared with that text, the luck sampled from the
  live match.

The two must agree byte for byte (checked for every match). The luck's sampling is the same work both
ways (its share is printed): what is saved is the replays.

Run: ``python bench/finished_match.py [--matches N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bots import make_bot, play_match
from engine_service.rules import Match, Rules, dumps, finish, luck_of_match, match_record
from store.ledger import match_luck, record_value


def re_derived(match: Match, names: list[str], rid: str, times: list[int], sent: str) -> tuple[bytes, Any]:
    record = match_record(match, names, rid)
    if json.loads(sent) != json.loads(json.dumps(record)):
        raise AssertionError("records differ")
    luck = match_luck(record, "sampling")
    return record_value(record, times), luck


def made_once(match: Match, names: list[str], rid: str, times: list[int], sent: str) -> tuple[bytes, Any]:
    game = finish(match, names, rid, times)
    if sent != game.text:
        raise AssertionError("records differ")
    return game.blob, match_luck(game, "sampling")


def section(players: int, n: int) -> dict[str, Any]:
    rules = Rules.preset("tablic", players=players)
    names = [f"b{i}@1" for i in range(players)]
    old, new, sampling = [], [], []
    for i in range(n):
        bots = [make_bot("greedy" if s == 0 else "random", f"{i}/{s}") for s in range(players)]
        match = play_match(rules, f"s{i}", bots)
        rid = f"L/m{i}"
        times = [(7 * k) % 900 for k in range(sum(len(d.plays) for d in match.deals))]
        sent = dumps(match_record(match, names, rid))  # what the replica sends, made there
        runs = [(re_derived, old), (made_once, new)] if i % 2 else [(made_once, new), (re_derived, old)]
        answers = []
        for fn, out in runs:
            t = time.process_time()
            answers.append(fn(match, names, rid, times, sent))
            out.append(time.process_time() - t)
        if answers[0] != answers[1]:
            raise AssertionError(f"match {i}: the two ways disagree")
        t = time.process_time()
        luck_of_match(match, rid, sampling_seed="sampling")
        sampling.append(time.process_time() - t)
    med = {k: statistics.median(v) * 1000 for k, v in (("re_derived", old), ("made_once", new), ("luck", sampling))}
    return {
        "players": players,
        "matches": n,
        "re_derived_ms": round(med["re_derived"], 2),
        "made_once_ms": round(med["made_once"], 2),
        "luck_sampling_ms": round(med["luck"], 2),
        "made_once_over_re_derived": round(med["made_once"] / med["re_derived"], 3),
        "outside_sampling_ratio": round((med["made_once"] - med["luck"]) / (med["re_derived"] - med["luck"]), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=30, help="matches per table size")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    rows = [section(p, args.matches) for p in (2, 4)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'seats':>5} {'matches':>7} {'re-derived':>11} {'made once':>10} {'ratio':>6} {'sampling':>9} {'rest':>6}")
    for r in rows:
        print(
            f"{r['players']:>5} {r['matches']:>7} {r['re_derived_ms']:>9.2f}ms {r['made_once_ms']:>8.2f}ms "
            f"{r['made_once_over_re_derived']:>6.3f} {r['luck_sampling_ms']:>7.2f}ms "
            f"{r['outside_sampling_ratio']:>6.3f}"
        )
    print("ms: median CPU a match; ratio: made once / re-derived; rest: the same ratio less the luck's sampling")


if __name__ == "__main__":
    main()
