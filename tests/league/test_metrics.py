"""Metrics during a real league: the engine replica's and each worker's endpoint, scraped as Prometheus does.

One engine service, two Celery workers (each serving its own endpoint), three
bots, one of which thinks past the move time, so its moves time out. The
endpoints are read while the league plays and after it ends; what the workers
count must agree with what the ledger committed.
"""

from __future__ import annotations

import time

from arena_harness import Arena, metrics_port, scrape

from cli.local import CLI
from store.results import LeagueResults

BOTS = ("ann", "bea", "slow")
MATCHES = 6  # three pairings, two games each
MOVE_TIME_MS = "150"
SLOW_THINK_MS = "300"  # past the move time: every move of "slow" times out (and is played for it)


def total(samples: list[dict[str, float]], key: str) -> float:
    """``key`` summed over several endpoints (0 where it is missing)."""
    return sum(s.get(key, 0.0) for s in samples)


def test_every_process_serves_its_series_during_a_league_and_the_counts_match_the_ledger(arena: Arena) -> None:
    arena.extra_env["TABLANETTE_METRICS_PORT"] = "0"  # a free port each, printed by the process
    engine, port = arena.start_engine()
    workers = [arena.start_worker(f"w{i}") for i in (1, 2)]
    for name in BOTS:
        extra = ("--think-ms", SLOW_THINK_MS) if name == "slow" else ()
        arena.start_python_bot("random", name, arena.add_bot(name), port, *extra)
    arena.wait_connected(*BOTS)
    engine_port = metrics_port(engine)
    worker_ports = [metrics_port(w) for w in workers]

    before = scrape(engine_port)
    assert before["tablanette_connected_bots"] == len(BOTS)
    assert before["tablanette_redis_errors_total"] == 0
    for wp in worker_ports:
        idle = scrape(wp)
        assert idle["tablanette_matches_running"] == 0 and idle["tablanette_matches_queued"] == 0

    create = ["league", "create", "m", "--games", "2", "--rule", "deals=1", "--rule", f"move_time_ms={MOVE_TIME_MS}"]
    for cmd in ([*create, "--quarantine-timeouts", "0"], ["league", "add-bot", "m", *BOTS]):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stdout + done.stderr
    feeder = arena.spawn("feeder", [*CLI, "league", "start", "m", "--window", "4"])

    # During the league: a match being played, moves timed by the engine, the queue read from the broker.
    seen_running = seen_latency = False
    deadline = time.monotonic() + 240
    while feeder.alive() and not (seen_running and seen_latency):
        assert time.monotonic() < deadline, "the league did not show a running match and timed moves"
        during = [scrape(wp) for wp in worker_ports]
        assert all(s["tablanette_matches_queued"] >= 0 for s in during)
        seen_running |= total(during, "tablanette_matches_running") > 0
        seen_latency |= scrape(engine_port).get('tablanette_move_latency_seconds_count{bot="ann"}', 0) > 0
        time.sleep(0.1)
    assert seen_running and seen_latency
    while feeder.alive():
        assert time.monotonic() < deadline, f"the league did not finish:\n{feeder.tail()}"
        time.sleep(0.2)
    assert feeder.popen.returncode == 0, feeder.tail()

    after = [scrape(wp) for wp in worker_ports]
    assert total(after, 'tablanette_matches_total{outcome="done"}') == MATCHES
    assert total(after, "tablanette_match_duration_seconds_count") == MATCHES
    assert total(after, "tablanette_matches_running") == 0
    ladder = {row.bot: row for row in LeagueResults(arena.redis, arena.prefix).standings("m")}
    for bot in BOTS:  # what the workers counted is what the ledger holds, every bot's series present
        assert total(after, f'tablanette_timeouts_total{{bot="{bot}"}}') == ladder[bot].timeouts
        assert total(after, f'tablanette_illegal_plays_total{{bot="{bot}"}}') == ladder[bot].illegal
        assert total(after, f'tablanette_forfeits_total{{bot="{bot}"}}') == ladder[bot].forfeits
    assert ladder["slow"].timeouts > 0 and ladder["ann"].timeouts == 0

    engine_after = scrape(engine_port)
    assert engine_after["tablanette_connected_bots"] == len(BOTS)
    assert engine_after['tablanette_turns_total{bot="slow",outcome="timeout"}'] > 0
    assert engine_after.get('tablanette_turns_total{bot="ann",outcome="timeout"}', 0) == 0
    played = engine_after['tablanette_turns_total{bot="ann",outcome="played"}']
    assert engine_after['tablanette_move_latency_seconds_count{bot="ann"}'] == played > 0
    assert engine_after['tablanette_move_latency_seconds_bucket{bot="ann",le="+Inf"}'] == played
    for s in [engine_after, *after]:
        assert s["tablanette_redis_errors_total"] == 0
