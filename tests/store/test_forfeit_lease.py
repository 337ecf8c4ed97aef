"""A forfeit is settled as a worker settles a match: holding its lease, so never over a match being played.

The scheduler forfeits an absent bot's unplayed matches. A worker may have just
taken one of them (its lease is live) and be playing it with the bot back: the
forfeit must leave that match to it, and the ledger must refuse any commit that
does not hold the lease while another holder's is live.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from arena_harness import scratch_redis

from bots import make_bot, play_match
from engine_service.rules import Rules, match_record
from scheduler.league import Feeder, plan_league
from store.leagues import League, LeagueStore
from store.leases import MatchLease
from store.ledger import NotLeaseHolder

RULES = Rules.preset("tablic", target=31)
CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}


@pytest.fixture
def arena() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("forfeit-lease") as scratch:
        yield scratch


def test_a_forfeit_leaves_a_leased_match_to_its_worker_and_the_ledger_refuses_it(
    arena: tuple[redis.Redis, str],
) -> None:
    client, prefix = arena
    store = LeagueStore(client, prefix)
    store.create(League("away", RULES, "round-robin", 2))
    store.add_bots("away", ["ann", "ben"])
    league = store.settle_deals(store.load("away"))
    plan = plan_league(league, store.deal_seeds(league))
    store.write_plan(league, plan)
    keys = store.keys("away")
    taken, *others = plan
    worker = MatchLease(client, keys, taken.match_id, 30_000, "w1")
    assert worker.acquire()  # a worker has just taken it: ann is back and playing

    feeder = Feeder(store, "away", lambda *_: None)
    feeder.seats = store.seats("away")
    feeder.absent = {"ann": 0.0}
    feeder.fresh = [m.match_id for m in plan]
    feeder._forfeit_absent(league, "ann", 999.0)

    assert store.match("away", taken.match_id)["status"] != "done"  # left to its worker
    assert feeder.fresh == [taken.match_id]
    for m in others:  # the rest: forfeited by ann, and their leases let go
        assert store.match("away", m.match_id)["status"] == "done"
        assert not client.exists(keys.lease(m.match_id))

    played = play_match(RULES, taken.seed, [make_bot("greedy", "x"), make_bot("greedy", "y")])
    record = match_record(played, list(taken.seats), f"away/{taken.match_id}")
    with pytest.raises(NotLeaseHolder, match="another runner holds its lease"):
        store.ledger.commit(keys, taken.match_id, record, taken.seats, [CLEAN, CLEAN], 24, 1500)
    with pytest.raises(NotLeaseHolder, match="no longer holds"):
        store.ledger.commit(keys, taken.match_id, record, taken.seats, [CLEAN, CLEAN], 24, 1500, "scheduler/x")
    assert store.ledger.commit(keys, taken.match_id, record, taken.seats, [CLEAN, CLEAN], 24, 1500, worker.token)
    assert store.match("away", taken.match_id)["status"] == "done"
