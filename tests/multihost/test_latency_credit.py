"""Clocks that credit latency, across the namespace network (:mod:`arena_hosts`).

cat reaches the replicas through a link 200 ms long each way (the relay on the
``wan`` host, :mod:`delay_relay`: this kernel has no netem), the other bots
directly. The move time is 300 ms, less than cat's 400 ms round trip, so
without a credit every answer of cat's arrives too late; in a league created
with ``--latency-credit-ms`` the replicas wait its measured round trip longer,
and it loses no move. Both leagues finish by themselves, every match counted
once and every record verified.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_hosts import BOTS, Deployment, deployed

MOVE_MS = 300
CAT_DELAY_MS = 200
"""Each way."""


@pytest.fixture
def arena_hosts(tmp_path: Path) -> Iterator[Deployment]:
    yield from deployed(tmp_path)


def play(d: Deployment, league: str, *options: str) -> tuple[int, float]:
    """A league of one-deal games at :data:`MOVE_MS` a move, played to its end: its matches, its seconds."""
    settings = ("--rule", f"move_time_ms={MOVE_MS}", "--quarantine-timeouts", "0")  # a late bot still plays
    matches = d.create_league(1, league, *settings, *options)
    took = time.monotonic()
    d.cli("league", "start", league, "--window", "4", timeout=900)
    seconds = time.monotonic() - took
    status = d.status(league)
    assert (status["status"], status["done"], status["failed"]) == ("finished", matches, 0), status
    d.verify_records(matches, league)
    return matches, seconds


def test_a_bot_200_ms_away_each_way_loses_every_move_to_time_without_the_credit_and_none_with_it(
    arena_hosts: Deployment,
) -> None:
    d = arena_hosts
    d.start(delays_ms={"cat": CAT_DELAY_MS})
    moves = 3 * 24  # three matches of 24 moves a seat (52 cards less the 4 on the table, halved)

    matches, seconds = play(d, "plain")
    plain = d.ladder("plain")
    matches, credited_seconds = play(d, "credited", "--latency-credit-ms", "1000")
    credited = d.ladder("credited")
    engines = [d.scrape(h) for h in ("engine-a", "engine-b")]
    rtt = max(e.get('tablanette_round_trip_seconds{bot="cat"}', 0.0) for e in engines)
    print(
        f"cat {2 * CAT_DELAY_MS} ms of round trip away (measured {rtt * 1000:.0f} ms), {MOVE_MS} ms a move:"
        f" without the credit {plain['cat']['timeouts']} of its {moves} moves timed out ({matches} matches in"
        f" {seconds:.1f} s); with it {credited['cat']['timeouts']} ({credited_seconds:.1f} s);"
        f" the others: {[(b, plain[b]['timeouts'], credited[b]['timeouts']) for b in BOTS if b != 'cat']}"
    )
    assert plain["cat"]["timeouts"] == moves  # no answer can beat a 400 ms round trip to a 300 ms deadline
    assert credited["cat"]["timeouts"] == 0
    assert (credited["cat"]["illegal"], credited["cat"]["forfeits"]) == (0, 0)
    assert 2 * CAT_DELAY_MS / 1000 <= rtt < 1.0  # the replicas measured the link, and the metric shows it
