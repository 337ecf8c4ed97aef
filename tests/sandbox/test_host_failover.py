"""A host killed mid-league: another host takes its hosted versions over and their games go on, unblamed.

Two hosts (`tablanette host`) serve one arena. A hosted version (the Perl bot,
through the JSON-lines bridge, one sandboxed run per game) plays a league
against a gRPC bot; mid-league, the host running it is killed with SIGKILL (its
sandboxed programs die with it). The other host must take the version over once
the lease runs out and have it back within the engine's grace period: the league
then finishes by itself with every match counted once, every record verified,
and no forfeit, timeout or illegal play charged to the hosted bot. The league is
on the CPU clock, so the killed host's meter goes away too (mid-turn, the turn
runs on under the wall-clock cap) and the other host's takes over.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import ROOT, new_arena, readable_folder

from bots.sandbox import unavailable
from cli.local import CLI
from engine_service.rules import verify_record
from store.leagues import LeagueStore
from store.results import LeagueResults
from store.versions import Versions

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")


@pytest.fixture
def work() -> Iterator[Path]:
    with readable_folder("failover") as folder:
        yield folder


def test_a_killed_hosts_versions_are_taken_over_and_their_games_go_on(work: Path) -> None:
    arena = new_arena("failover", work / "arena")
    try:
        engine, port = arena.start_engine()
        arena.start_workers(2)
        arena.start_python_bot("greedy", "rival", arena.add_bot("rival"), port, "--think-ms", "20")
        hosts = {
            name: arena.spawn(name, [*CLI, "host", "--dir", str(work / name), "--address", f"127.0.0.1:{port}"])
            for name in ("host-a", "host-b")
        }
        done = arena.tablanette("bot", "submit", str(ROOT / "bots/jsonlines"), "--name", "perly", "--wait", timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        versions, leagues = Versions(arena.redis, arena.prefix), LeagueStore(arena.redis, arena.prefix)
        for cmd in (
            ["league", "create", "failover", "--games", "12", "--clock", "cpu"],
            ["league", "add-bot", "failover", "perly@1", "rival"],
        ):
            created = arena.tablanette(*cmd)
            assert created.returncode == 0, created.stdout + created.stderr
        feeder = arena.spawn("league", [*CLI, "league", "start", "failover", "--window", "2"])
        arena.wait_until(lambda: leagues.status("failover").done >= 1, "a first match", 120)

        holder = versions.holder("perly@1")
        assert holder is not None
        victim = next(name for name, child in hosts.items() if holder.split("/")[1] == str(child.popen.pid))
        survivor = next(name for name in hosts if name != victim)
        hosts[victim].popen.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        arena.wait_until(
            lambda: (versions.holder("perly@1") or "//").split("/")[1] == str(hosts[survivor].popen.pid),
            "the other host to take the version over",
            30,
        )
        arena.wait_until(lambda: arena.redis.exists(arena.keys.session("perly@1")), "perly@1 back", 30)
        back_s = time.monotonic() - killed_at
        arena.wait_until(lambda: not feeder.alive(), "the league to finish", 300)
        assert "finished, 12 of 12 matches done" in feeder.text(), feeder.tail()

        results = LeagueResults(arena.redis, arena.prefix)
        for row in results.ladder("failover"):
            assert (row.games, row.timeouts, row.illegal, row.forfeits) == (12, 0, 0, 0), row
        records = list(results.records("failover"))
        assert len(records) == 12
        for record in records:
            verify_record(record)
        assert "left (it metered: perly@1)" in engine.text()  # the killed host's meter went with it
        print(f"host killed: perly@1 back through the other host after {back_s:.1f} s")
    finally:
        arena.close()
