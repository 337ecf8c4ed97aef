"""What ``league start`` says about a bot that is not connected: a calm line while it may merely be starting
(a hosted bot its host is starting), one warning once it has been away past the grace period, and a line
when it comes. The feeder runs for real on the test Redis; only its clock is the test's, so a minute of
absence takes no minute."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from arena_harness import scratch_redis

from engine_service.rules import Rules
from scheduler.league import ABSENT_WARN_S, Feeder
from store.keys import Keys
from store.leagues import League, LeagueStore

STEP_S = 5.0
"""Seconds of the feeder's clock between two of its polls."""


def feed_for(
    store: LeagueStore, seconds: float, caplog: pytest.LogCaptureFixture, then: tuple[float, Callable[[], object]]
) -> list[tuple[float, int, str]]:
    """Run the league's feeder for ``seconds`` of its clock, doing ``then[1]()`` at ``then[0]`` seconds; what it
    logged, with when (seconds from its start)."""
    now = [1_000_000.0]
    start = now[0]
    said: list[tuple[float, int, str]] = []
    seen = [0]

    def tick() -> bool:  # called once a poll: what was logged meanwhile is stamped with the clock's time
        said.extend((now[0] - start, r.levelno, r.getMessage()) for r in caplog.records[seen[0] :])
        seen[0] = len(caplog.records)
        if now[0] - start < then[0] <= now[0] + STEP_S - start:
            then[1]()
        now[0] += STEP_S
        return now[0] - start > seconds

    feeder = Feeder(store, "L", lambda league, match: None, poll=0, should_stop=tick, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="tablanette.scheduler"):
        feeder.run()
    return said


def test_a_bot_not_connected_yet_gets_a_calm_line_and_one_warning_past_the_grace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with scratch_redis("waiting") as (client, prefix):
        store = LeagueStore(client, prefix)
        store.create(League("L", Rules.preset("tablic"), bots=["perly@1", "away"], seed="waiting"))
        comes = 2 * ABSENT_WARN_S  # then it connects: the registry holds its session
        said = feed_for(
            store, comes + 3 * STEP_S, caplog, (comes, lambda: client.set(Keys(prefix).session("away"), "{}"))
        )
        about = [
            (at, lv, text) for at, lv, text in said if ("perly@1" in text or "away" in text) and "back" not in text
        ]
        calm = [(at, text) for at, level, text in about if level < logging.WARNING]
        warned = [(at, text) for at, level, text in about if level >= logging.WARNING]
        assert calm, f"no calm line first: {about}"
        first = calm[0][0]  # the feeder's first look at who is connected
        assert calm == [
            (first, "league L: waiting for away to connect"),
            (first, "league L: waiting for perly@1 to connect (its host starts it)"),
        ], about
        assert warned == [
            (first + ABSENT_WARN_S, f"league L: waiting for away: not connected for {ABSENT_WARN_S:.0f} s"),
            (first + ABSENT_WARN_S, f"league L: waiting for perly@1: not connected for {ABSENT_WARN_S:.0f} s"),
        ], about  # once each, at the end of the grace period, in a minute of absence
        back = [(at, level, text) for at, level, text in said if "back" in text]
        assert back == [(comes, logging.INFO, "league L: away is back")], said
