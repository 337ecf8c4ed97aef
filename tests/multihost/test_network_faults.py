"""Network faults between the arena's hosts (:mod:`arena_hosts`): a host cut off mid-league.

Each test deploys the arena on a network of its own, unplugs a host from the
bridge (its processes keep running and see nothing: no reset, no error, the
way a machine behind a failed switch looks), and checks what a league
operator needs: the league finishes by itself, every match counted once, every
record verified, and no bot charged a move or a game for the network's fault.
The time each took is printed (``pytest -s`` shows it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_hosts import BOTS, LEAGUE, Deployment, deployed

from cli.local import CLI, Child

SHORT_LEASES = {"TABLANETTE_LEASE_MS": "3000", "TABLANETTE_RESTORE_INTERVAL": "1"}


@pytest.fixture
def arena_hosts(tmp_path: Path) -> Iterator[Deployment]:
    """A deployment whose match leases expire within seconds (a stalled match is taken over soon)."""
    yield from deployed(tmp_path, **SHORT_LEASES)


def wait_until(check: object, timeout: float, what: str) -> float:
    """Seconds until ``check()`` is true (or a clear failure)."""
    start = time.monotonic()
    while not check():  # type: ignore[operator]
        assert time.monotonic() - start < timeout, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(0.2)
    return time.monotonic() - start


def feed_a_long_league(d: Deployment, games: int = 4) -> tuple[int, Child]:
    """The arena started with bots that think 20 ms a move (matches last long enough for a cut to fall
    mid-match) and a scheduler feeding a league of ``games`` games a pairing: the number of matches, the
    feeder."""
    d.start(think_ms=20)
    matches = d.create_league(games=games)
    return matches, d.spawn("feeder", "ops", [*CLI, "league", "start", LEAGUE, "--window", "4"])


def assert_clean(d: Deployment, matches: int) -> None:
    """Finished by itself, each match once, every record verified, no bot charged anything."""
    status = d.status()
    assert (status["status"], status["done"], status["failed"]) == ("finished", matches, 0), status
    d.verify_records(matches)
    for bot, row in d.ladder().items():
        assert (row["timeouts"], row["illegal"], row["forfeits"]) == (0, 0, 0), (bot, row)


def test_redis_cut_off_for_20_seconds_mid_league_everything_resumes_by_itself(arena_hosts: Deployment) -> None:
    d = arena_hosts
    # 12 games a pairing: the league must outlast the status calls before the cut (each a CLI process, seconds
    # apiece on a loaded machine); with 4 it once ended before the cut, and nothing was left to recover
    matches, feeder = feed_a_long_league(d, games=12)
    wait_until(lambda: d.status()["done"] >= 3, 300, "three matches to finish")
    before = d.status()["done"]
    assert before < matches, "the league ended before Redis was cut off: make it longer"
    d.net.cut(d.hosts["redis"])
    time.sleep(20)
    d.net.plug(d.hosts["redis"])
    plugged = time.monotonic()
    recovered = wait_until(lambda: d.status()["done"] > before, 300, "a match to finish after Redis came back")
    wait_until(lambda: not feeder.alive(), 600, "the league to finish")
    print(
        f"Redis cut off for 20 s with {before} of {matches} matches done: the next match finished "
        f"{recovered:.1f} s after it came back, the league {time.monotonic() - plugged:.1f} s after"
    )
    assert feeder.popen.returncode == 0, feeder.tail()
    assert_clean(d, matches)
    for name in ("engine-a", "engine-b", "worker-a", "worker-b"):
        assert d.children[name].alive(), f"{name} did not survive the outage:\n{d.children[name].tail()}"
    assert set(BOTS) <= set(d.ladder())


def test_a_worker_host_cut_off_mid_match_its_match_is_played_elsewhere_and_counted_once(
    arena_hosts: Deployment,
) -> None:
    d = arena_hosts
    matches, feeder = feed_a_long_league(d)
    wait_until(
        lambda: d.status()["done"] >= 2 and d.scrape("worker-a")["tablanette_matches_running"] == 1,
        300,
        "worker-a to be playing a match",
    )
    d.net.cut(d.hosts["worker-a"])
    cut = time.monotonic()
    wait_until(lambda: not feeder.alive(), 600, "the league to finish without worker-a")
    print(f"worker host cut off mid-match: the league finished {time.monotonic() - cut:.1f} s later without it")
    assert feeder.popen.returncode == 0, feeder.tail()
    d.net.plug(d.hosts["worker-a"])  # it comes back with a match it can no longer commit
    wait_until(lambda: d.scrape("worker-a")["tablanette_matches_running"] == 0, 120, "worker-a to let its match go")
    assert_clean(d, matches)


def test_an_engine_host_cut_off_its_bots_move_to_the_other_replica_and_lose_no_game(
    arena_hosts: Deployment,
) -> None:
    d = arena_hosts
    matches, feeder = feed_a_long_league(d)
    wait_until(lambda: d.status()["done"] >= 3, 300, "three matches to finish")
    d.net.cut(d.hosts["engine-a"])
    cut = time.monotonic()
    moved = wait_until(
        lambda: all(row["connected"] == d.address("engine-b") for row in d.bots()), 120, "every bot on engine-b"
    )
    wait_until(lambda: not feeder.alive(), 600, "the league to finish without engine-a")
    print(
        f"engine host cut off: its bots were on the other replica {moved:.1f} s later, "
        f"the league finished {time.monotonic() - cut:.1f} s after the cut"
    )
    assert feeder.popen.returncode == 0, feeder.tail()
    assert_clean(d, matches)


def test_bots_100_and_400_ms_of_round_trip_away_lose_nothing(arena_hosts: Deployment) -> None:
    """Latency: ann and bob reach the replicas through a link 50 ms long each way, cat and dan 200 ms
    (:mod:`delay_relay`, as this kernel has no netem), well inside the 2 s move time."""
    d = arena_hosts
    d.start(delays_ms={"ann": 50, "bob": 50, "cat": 200, "dan": 200})
    matches = d.create_league(games=1)
    took = time.monotonic()
    d.cli("league", "start", LEAGUE, "--window", "4", timeout=900)
    print(f"bots 100 / 400 ms of round trip away: {matches} matches in {time.monotonic() - took:.1f} s")
    assert_clean(d, matches)
    engines = [d.scrape(h) for h in ("engine-a", "engine-b")]

    def mean_move(bot: str) -> float:  # as the replicas timed it: the link's round trip is in it
        seconds = sum(e.get(f'tablanette_move_latency_seconds_sum{{bot="{bot}"}}', 0) for e in engines)
        return seconds / sum(e.get(f'tablanette_move_latency_seconds_count{{bot="{bot}"}}', 0) for e in engines)

    assert 0.1 <= mean_move("ann") < 0.4 <= mean_move("cat"), {bot: mean_move(bot) for bot in BOTS}


def test_bots_on_a_link_losing_5_percent_of_packets_each_way_lose_nothing(arena_hosts: Deployment) -> None:
    d = arena_hosts
    d.start()
    d.lose("bots-a", 5)  # ann and bob: TCP retransmits, and their answers still come within the move time
    matches = d.create_league()
    took = time.monotonic()
    d.cli("league", "start", LEAGUE, "--window", "4", timeout=900)
    print(f"ann and bob behind 5% packet loss each way: {matches} matches in {time.monotonic() - took:.1f} s")
    assert_clean(d, matches)
