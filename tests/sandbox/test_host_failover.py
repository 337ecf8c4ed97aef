"""A host killed mid-league: another host takes its hosted versions over and their games go on, unblamed.

Two hosts (`tablanette host`) serve one arena. A hosted version (the Perl bot,
through the JSON-lines bridge, one sandboxed run per game, with a build step
that takes longer than the engine's grace period) plays a league against a gRPC
bot. A second host joins mid-league and builds it on standby while the first
runs it. Then the first is killed with SIGKILL (its sandboxed programs die with it).
The other host must take the version over once the lease runs out and have it
back within the grace period, without building it then: the league finishes by
itself with every match counted once, every record verified, and no forfeit,
timeout or illegal play charged to the hosted bot. The league is
on the CPU clock, so the killed host's meter goes away too (mid-turn, the turn
runs on under the wall-clock cap) and the other host's takes over.
"""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import ROOT, new_arena, readable_folder

from cli.local import CLI, Child
from engine_service.rules import verify_record
from hosting.build import is_built
from programs.sandbox import unavailable
from store.leagues import LeagueStore
from store.results import LeagueResults
from store.versions import Versions

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")
SLOW_BUILD = 'build = ["sh", "-c", "sleep 15"]  # longer than the grace period: a takeover cannot wait for it\n'


def slow_to_build_perly(into: Path) -> Path:
    folder = into / "perly"
    shutil.copytree(ROOT / "bots/jsonlines", folder)
    manifest = folder / "bot.toml"
    run = 'run = ["perl", "greedy.pl"]\n'
    manifest.write_text(manifest.read_text().replace(run, run + SLOW_BUILD))
    assert SLOW_BUILD in manifest.read_text()
    return folder


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

        def host(name: str) -> Child:
            return arena.spawn(name, [*CLI, "host", "--dir", str(work / name), "--address", f"127.0.0.1:{port}"])

        first = host("host-a")
        folder = slow_to_build_perly(work)
        done = arena.tablanette("bot", "submit", str(folder), "--name", "perly", "--wait", timeout=300)
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
        second = host("host-b")  # it has never built perly@1: it must do so on standby, before it is needed
        source = versions.require("perly@1").source_hash
        arena.wait_until(lambda: is_built(work / "host-b", "perly@1", source), "the standby build", 120)

        def holder_pid() -> str:
            return (versions.holder("perly@1") or "//").split("/")[1]

        assert holder_pid() == str(first.popen.pid)  # the standby build did not take the version over
        first.popen.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        arena.wait_until(lambda: holder_pid() == str(second.popen.pid), "the other host to take the version over", 30)
        arena.wait_until(lambda: arena.redis.exists(arena.keys.session("perly@1")), "perly@1 back", 30)
        back_s = time.monotonic() - killed_at
        arena.wait_until(lambda: not feeder.alive(), "the league to finish", 300)
        assert "finished, 12 of 12 matches done" in feeder.text(), feeder.tail()

        results = LeagueResults(arena.redis, arena.prefix)
        for row in results.standings("failover"):
            assert (row.games, row.timeouts, row.illegal, row.forfeits) == (12, 0, 0, 0), row
        records = list(results.records("failover"))
        assert len(records) == 12
        for record in records:
            verify_record(record)
        assert "left (it metered: perly@1)" in engine.text()  # the killed host's meter went with it
        print(f"host killed: perly@1 back through the other host after {back_s:.1f} s")
    finally:
        arena.close()
