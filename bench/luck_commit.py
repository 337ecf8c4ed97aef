"""What the luck estimate costs a worker, and what the skill fit costs the ladder, beside their baselines.

**Per match** (real games of built-in bots, tablic at two and three seats): the CPU
the worker spends on :func:`store.ledger.match_luck` (re-verifying the record and
sampling every deal of cards) beside the match's own play in-process (the engine
and the bots, no network: a lower bound on a real match, whose turns also wait
for remote bots) and beside the ledger's commit to Redis (wall clock, this host's
Redis). The luck is computed once, before the commit, outside the commit script.

**Per fit**: :func:`scheduler.skill.fit_skill` beside the win/loss fit
(:func:`scheduler.ratings.fit_ratings`) on the same synthetic outcomes, for a
league of a few bots and one of forty.

Run: ``python bench/luck_commit.py [--matches N] [--json]`` (Redis at ``TABLANETTE_REDIS_URL``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bots import make_bot, play_match
from cli.local import clear_prefix
from engine_service.rules import Rules, match_record
from scheduler.ratings import Outcome, fit_ratings
from scheduler.skill import fit_skill
from store.leagues import League, LeagueStore
from store.ledger import match_luck
from store.units import mirror_unit

REDIS_URL = os.environ.get("TABLANETTE_REDIS_URL", "redis://127.0.0.1:6379/0")
CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}


def section_matches(r: redis.Redis, players: int, n: int) -> dict[str, Any]:
    """Median per match: play (CPU), luck (CPU), commit (wall); and the ratios."""
    rules = Rules.preset("tablic", players=players)
    prefix = f"bench-luck-{secrets.token_hex(4)}"
    store = LeagueStore(r, prefix)
    names = [f"b{i}" for i in range(players)]
    store.create(League("L", rules, bots=names))
    play, luck, commit = [], [], []
    try:
        for i in range(n):
            seats = names[i % players :] + names[: i % players]
            bots = [make_bot("greedy" if s == "b0" else "random", f"{i}{s}") for s in seats]
            t = time.process_time()
            rec = match_record(play_match(rules, f"s{i}", bots), seats, f"L/m{i}")
            play.append(time.process_time() - t)
            t = time.process_time()
            margins = match_luck(rec)
            luck.append(time.process_time() - t)
            assert margins is not None
            t = time.perf_counter()
            unit = mirror_unit(f"s{i}", seats)
            store.ledger.commit(
                store.keys("L"), f"m{i}", rec, seats, [CLEAN] * players, 24, 1500, unit=unit, luck=margins
            )
            commit.append(time.perf_counter() - t)
    finally:
        clear_prefix(r, prefix)
    med = {k: statistics.median(v) * 1000 for k, v in (("play_ms", play), ("luck_ms", luck), ("commit_ms", commit))}
    return {
        "players": players,
        "matches": n,
        **{k: round(v, 2) for k, v in med.items()},
        "luck_over_play": round(med["luck_ms"] / med["play_ms"], 2),
        "luck_over_commit": round(med["luck_ms"] / med["commit_ms"], 1),
    }


def synthetic(bots: int, units: int, seed: int = 1) -> list[Outcome]:
    """Mirrored pairs between random pairings, each game with a margin, a luck and a winner."""
    rng = random.Random(seed)
    skill = [rng.gauss(0, 8) for _ in range(bots)]
    out = []
    for u in range(units):
        a, b = rng.sample(range(bots), 2)
        for g, (x, y) in enumerate(((a, b), (b, a))):
            lk = rng.gauss(0, 25)
            m = skill[x] - skill[y] + lk + rng.gauss(0, 5)
            placing = (1.0, 0.0) if m > 0 else (0.0, 1.0)
            out.append(
                Outcome(f"m{u}/{g}", f"u{u}", ((f"b{x}",), (f"b{y}",)), placing, (100, round(100 - m)), (lk, -lk))
            )
    return out


def section_fits(bots: int, units: int) -> dict[str, Any]:
    outcomes = synthetic(bots, units)
    t = time.perf_counter()
    fit_ratings(outcomes)
    win_loss = time.perf_counter() - t
    t = time.perf_counter()
    fit_skill(outcomes)
    skill = time.perf_counter() - t
    return {
        "bots": bots,
        "games": len(outcomes),
        "win_loss_ms": round(win_loss * 1000, 1),
        "skill_ms": round(skill * 1000, 1),
        "skill_over_win_loss": round(skill / win_loss, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=40, help="matches per table size")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = redis.Redis.from_url(REDIS_URL)
    out = {
        "matches": [section_matches(r, p, args.matches) for p in (2, 3)],
        "fits": [section_fits(4, 200), section_fits(40, 4000)],
    }
    if args.json:
        print(json.dumps(out))
        return
    print("luck per match (median): CPU of the estimate beside the match's own play and the ledger commit")
    for m in out["matches"]:
        print(
            f"  {m['players']} seats: play {m['play_ms']} ms CPU, luck {m['luck_ms']} ms CPU,"
            f" commit {m['commit_ms']} ms wall; luck = {m['luck_over_play']}x the in-process play,"
            f" {m['luck_over_commit']}x the commit"
        )
    print("ladder fit: skill beside win/loss, same outcomes")
    for f in out["fits"]:
        print(
            f"  {f['bots']} bots, {f['games']} games: win/loss {f['win_loss_ms']} ms, skill {f['skill_ms']} ms"
            f" ({f['skill_over_win_loss']}x)"
        )


if __name__ == "__main__":
    main()
