"""One scheduler a league (:mod:`store.feeder_claim`), on the test Redis: a second feeder of a league waits,
saying who feeds it, and writes nothing; it takes over at once when the first gives the claim back, and when
the claim lapses; a holder paused past its claim stops; a claim Redis lost is taken again by its holder."""

from __future__ import annotations

import time
from collections.abc import Callable

from arena_harness import scratch_redis

from engine_service.rules import Rules
from scheduler.league import Feeder
from store.feeder_claim import FeederClaim
from store.keys import Keys
from store.leagues import League, LeagueStore


def until(predicate: Callable[[], bool]) -> None:
    """Poll a condition the Redis clock makes true (a claim lapsing), however loaded the machine."""
    while not predicate():
        time.sleep(0.02)


def stop_after(polls: int) -> Callable[[], bool]:
    left = [polls]

    def stop() -> bool:
        left[0] -= 1
        return left[0] < 0

    return stop


def test_a_second_claimant_waits_saying_who_holds_it_and_takes_over_when_it_is_given_back() -> None:
    with scratch_redis("claim-wait") as (r, prefix):
        first, second = FeederClaim(r, prefix, "L"), FeederClaim(r, prefix, "L")
        said: list[str] = []
        assert first.take(lambda: False, said.append)
        assert not second.take(stop_after(3), said.append, poll=0.01)  # told to stop while it waited
        assert len(said) == 1 and first.holder in said[0] and "this one waits and takes over" in said[0]
        assert first.holder_now() == first.holder
        second.give_back()  # not its to give: nothing happens
        assert first.holder_now() == first.holder
        first.give_back()
        assert second.take(lambda: False, said.append) and second.holder_now() == second.holder


def test_a_lapsed_claim_is_taken_over_and_its_old_holder_stops_while_a_claim_redis_lost_is_taken_again() -> None:
    with scratch_redis("claim-lapse") as (r, prefix):
        first, second = FeederClaim(r, prefix, "L", claim_ms=300), FeederClaim(r, prefix, "L", claim_ms=300)
        assert first.take(lambda: False, print)
        until(lambda: first.holder_now() is None)  # first was paused past its claim: it lapses
        assert second.take(lambda: False, print)
        assert not first.keep()  # it wakes up: another holds the league now
        assert second.keep() and second.holder_now() == second.holder
        r.delete(Keys(prefix).league("L").feeder)  # a Redis restarted without the key
        second._kept_at = float("-inf")  # its next keep looks now, not a third of a claim later
        assert second.keep() and second.holder_now() == second.holder


def test_a_feeder_that_finds_the_league_fed_writes_nothing_until_the_claim_is_its() -> None:
    with scratch_redis("claim-feeder") as (r, prefix):
        store = LeagueStore(r, prefix)
        store.create(League("L", Rules.preset("tablic", deals=1), bots=["a", "b", "c"], games=2, seed="claim"))
        for bot in ("a", "b", "c"):
            r.set(Keys(prefix).session(bot), "{}")
        other = FeederClaim(r, prefix, "L")
        assert other.take(lambda: False, print)
        sent: list[str] = []
        feeder = Feeder(store, "L", lambda league, match: sent.append(match), poll=0, should_stop=stop_after(5))
        feeder.run()
        assert (store.match_ids("L"), sent) == ([], [])  # it waited: no plan, nothing sent
        assert other.holder_now() == other.holder  # and it took nothing
        other.give_back()
        feeder = Feeder(store, "L", lambda league, match: sent.append(match), poll=0, should_stop=stop_after(5))
        feeder.run()
        assert len(store.match_ids("L")) == 6 and sent  # the round robin, planned and sent
        assert other.holder_now() is None  # given back when it stopped
