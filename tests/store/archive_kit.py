"""A league built cheaply for the archive's tests: real records the engine played, committed by the ledger.

No workers or bots over the network: each planned match is played in-process by built-in bots
(:func:`bots.play_match`), its record written by the engine and committed with
:meth:`store.ledger.Ledger.commit` exactly as a worker commits it, with move times. The league is
then marked finished as the feeder marks it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import redis

from bots import make_bot, play_match
from engine_service.rules import Rules, match_record
from scheduler.league import plan_league
from store.keys import Keys
from store.leagues import League, LeagueStore
from store.ledger import Ledger
from store.units import mirror_unit

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}


def played_league(
    client: redis.Redis, prefix: str, name: str, rules: Rules, bots: list[str], games: int = 2, finished_at: float = 0
) -> int:
    """Create, plan, play and finish the league; returns how many matches it played."""
    store = LeagueStore(client, prefix)
    league = League(name, rules, games=games, bots=list(bots))
    store.create(league)
    plan = plan_league(league)
    store.write_plan(league, plan)
    keys = Keys(prefix).league(name)
    ledger = Ledger(client)
    for m in plan:
        players = [make_bot("greedy" if i % 2 == 0 else "random", f"{m.seed}/{b}") for i, b in enumerate(m.seats)]
        record = match_record(play_match(rules, m.seed, players), list(m.seats), f"{name}/{m.match_id}")
        times = list(_times(sum(len(d["plays"]) for d in record["deals"]), m.match_id))
        ledger.set_state(keys, m.match_id, "running", worker="kit", started_at="1700000000.000")
        ledger.commit(
            keys,
            m.match_id,
            record,
            m.seats,
            [CLEAN] * len(m.seats),
            league.k,
            league.initial,
            unit=mirror_unit(m.seed, m.seats),
            times_ms=times,
        )
    assert store.finish_if_complete(name)
    if finished_at:
        client.hset(keys.meta, "finished_at", finished_at)
    return len(plan)


def _times(n: int, seed: str) -> Iterator[int]:
    rng = random.Random(seed)
    for _ in range(n):
        yield int(rng.expovariate(1 / 40))


def league_memory(client: redis.Redis, prefix: str, name: str) -> dict[str, int]:
    """``MEMORY USAGE`` of each of the league's keys (every key under its hash tag)."""
    base = Keys(prefix).league(name).base
    return {k.decode(): int(client.memory_usage(k) or 0) for k in client.scan_iter(match=f"{base}*", count=1000)}
