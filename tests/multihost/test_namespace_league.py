"""A league across hosts: every part of the arena in a network namespace of its own, TLS on.

The arena of :mod:`arena_hosts`: half the bots on each replica, so matches
between them cross from one replica to the other. The league must play to the
end with every match counted once, every record must verify, and every engine
and worker must serve its metrics to a scraper on another host (curl on the
operator's machine).
"""

from __future__ import annotations

import time

from arena_hosts import BOTS, LEAGUE, Deployment, deployment, total

__all__ = ["deployment"]  # the fixture
MATCHES = 12  # 6 pairings, 2 games each


def test_a_league_across_hosts_with_tls_plays_to_the_end_and_every_record_verifies(deployment: Deployment) -> None:
    d = deployment
    d.start()
    assert d.create_league() == MATCHES

    started = time.monotonic()
    d.cli("league", "start", LEAGUE, "--window", "4", timeout=600)  # waits for bots that are still connecting
    print(f"league across the hosts: {MATCHES} matches in {time.monotonic() - started:.1f} s")

    status = d.status()
    assert (status["status"], status["done"], status["failed"]) == ("finished", MATCHES, 0), status
    d.verify_records(MATCHES)

    listed = {row["bot"]: row for row in d.bots()}
    for bot, home in BOTS.items():  # each bot stayed on its own replica, over TLS, the whole league
        assert listed[bot]["connected"] == d.address(home), listed[bot]

    engines = {h: d.scrape(h) for h in ("engine-a", "engine-b")}
    workers = {h: d.scrape(h) for h in ("worker-a", "worker-b")}
    for host, samples in engines.items():
        assert samples["tablanette_connected_bots"] == 2, host
        assert total(samples, "tablanette_move_latency_seconds_count") > 0, host
    for host, samples in workers.items():
        assert samples['tablanette_matches_total{outcome="done"}'] >= 1, f"{host} played no match"
    assert sum(s['tablanette_matches_total{outcome="done"}'] for s in workers.values()) == MATCHES
    for samples in [*engines.values(), *workers.values()]:
        assert samples["tablanette_redis_errors_total"] == 0
