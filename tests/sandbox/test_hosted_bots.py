"""Hosted bots end to end: a newcomer submits the example bots, the arena builds, preflights and runs them.

One arena (engine service, two workers) and one host (`tablanette host`) on the
real machine: the Perl bot through the JSON-lines protocol, and the Python,
Node.js and C++ examples through their gRPC SDKs, each submitted with
`tablanette bot submit` from its folder as its README says, then a rated league
of the hosted versions. Beside them, a version whose build fails and one whose
program crashes: each says why, keeps its evidence, and never reaches a rated league.
And two versions for the CPU clock, metered from their real cgroups: one that
waits past a short move time (a bot held up by its neighbours' load uses no CPU
while it waits) and one that spins past it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import ROOT, Arena, new_arena, readable_folder

from cli.local import CLI
from engine_service.rules import verify_record
from programs.sandbox import unavailable
from store.results import LeagueResults
from store.versions import Version, Versions

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")
EXAMPLES = {
    "perly": "bots/jsonlines",
    "mybot": "bots/examples/python",
    "nodebot": "bots/node",
    "cppbot": "bots/cpp",
    "javabot": "bots/examples/java",  # javac in the build sandbox: the JDK keeps its conf/ in /etc
}
CRASHER = """\
import sys
print("loading the opening book from /bot/book.bin", flush=True)
sys.exit("RuntimeError: book.bin is corrupt")
"""


CLOCK_BOT = """\
import os, sys, time

from bots import Bot
from bots.sdk import BotClient

SPIN = sys.argv[1] == "spin"


class Slow(Bot):
    name = "slow"

    def choose(self, observation, clock=None):
        if clock is not None and clock.remaining() < 1.0:  # a short move time: take longer than it
            if SPIN:
                end = time.process_time() + 0.5
                while time.process_time() < end:
                    pass
            else:
                time.sleep(0.5)
        return observation.legal_plays[0]


address, token = os.environ["TABLANETTE_ADDRESS"], os.environ["TABLANETTE_TOKEN"]
BotClient(Slow, address, token, name=os.environ["TABLANETTE_BOT_NAME"], max_games=1).run_forever()
"""


def clock_folders(into: Path) -> dict[str, Path]:
    """A bot that sleeps half a second on a short move time, and one that spins for half a CPU second."""
    out = {}
    for name, mode in (("sleeper", "sleep"), ("spinner", "spin")):
        folder = into / name
        folder.mkdir()
        (folder / "bot.toml").write_text(
            f'language = "python"\nprotocol = "grpc"\nrun = ["python3", "slow.py", "{mode}"]\n'
        )
        (folder / "slow.py").write_text(CLOCK_BOT)
        out[name] = folder
    return out


def broken_folders(into: Path) -> dict[str, Path]:
    fails = into / "fails-to-build"
    fails.mkdir()
    (fails / "bot.toml").write_text(
        'language = "c"\nprotocol = "jsonlines"\nrun = ["./bot"]\n'
        'build = ["sh", "-c", "echo \'bot.c:3:1: error: expected ; before }\' >&2; exit 1"]\n'
    )
    crashes = into / "crashes"
    crashes.mkdir()
    (crashes / "bot.toml").write_text('language = "python"\nprotocol = "grpc"\nrun = ["python3", "bot.py"]\n')
    (crashes / "bot.py").write_text(CRASHER)
    return {"brokenbuild": fails, "crasher": crashes}


@pytest.fixture(scope="module")
def hosted() -> Iterator[tuple[Arena, dict[str, Version]]]:
    """Every bot submitted to one arena's host, once each has been built and preflighted (or has failed)."""
    with readable_folder("hosted-test") as work:
        yield from _hosted(work)


def _hosted(work: Path) -> Iterator[tuple[Arena, dict[str, Version]]]:
    arena = new_arena("hosted", work / "arena")
    try:
        _, port = arena.start_engine()
        arena.start_workers(2)
        host = arena.spawn("host", [*CLI, "host", "--dir", str(work / "hosted"), "--address", f"127.0.0.1:{port}"])
        folders = {name: ROOT / folder for name, folder in EXAMPLES.items()} | broken_folders(work)
        folders |= clock_folders(work)
        if not (ROOT / "bots/node/node_modules").is_dir():  # scripts/setup_test_deps.sh installs them
            del folders["nodebot"]
        for name, folder in folders.items():
            done = arena.tablanette("bot", "submit", str(folder), "--name", name)
            assert done.returncode == 0, done.stdout + done.stderr
            assert f"submitted {name}@1" in done.stdout
        versions = Versions(arena.redis, arena.prefix)
        deadline = time.monotonic() + 600  # the C++ build takes a minute or two on 2 cores
        while time.monotonic() < deadline:
            got = {name: versions.require(f"{name}@1") for name in folders}
            if all(v.state not in ("submitted", "building", "preflight") for v in got.values()):
                break
            time.sleep(1)
        else:
            pytest.fail(f"not settled in 600 s: { {n: v.state for n, v in got.items()} }\n{host.tail(4000)}")
        yield arena, got
    finally:
        arena.close()


def test_the_example_bots_are_built_and_pass_their_preflight(hosted: tuple[Arena, dict[str, Version]]) -> None:
    arena, got = hosted
    for name in EXAMPLES:
        if name not in got:
            continue
        v = got[name]
        assert v.state == "ready", (name, v.state, v.note, v.build_log[-2000:], v.evidence)
        report = v.preflight
        assert report["passed"] and report["games"] == report["planned"] > 0, report
        mine = report["bots"][v.name]
        assert (mine["timeouts"], mine["illegal"], mine["forfeits"]) == (0, 0, 0), mine
    assert "Built target tablanette-cpp-bot" in got["cppbot"].build_log  # built in the sandbox, its log kept
    assert "$ javac -d out Bot.java" in got["javabot"].build_log and "[built in" in got["javabot"].build_log
    shown = arena.tablanette("bot", "versions")
    assert shown.returncode == 0 and "cppbot@1" in shown.stdout and "ready" in shown.stdout, shown.stdout


def test_a_failed_build_says_why_shows_its_log_and_the_version_never_plays(
    hosted: tuple[Arena, dict[str, Version]],
) -> None:
    arena, got = hosted
    v = got["brokenbuild"]
    assert v.state == "build-failed"
    assert v.note == "the build exited with status 1"
    assert "bot.c:3:1: error: expected ; before }" in v.build_log
    shown = arena.tablanette("bot", "version", "brokenbuild@1")
    assert "build-failed (the build exited with status 1)" in shown.stdout
    assert "bot.c:3:1: error" in shown.stdout  # the end of the log, on the command line
    assert "  the build's last error: bot.c:3:1: error: expected ; before }" in shown.stdout  # said first
    assert not arena.redis.exists(arena.keys.session("brokenbuild@1"))  # it never ran


def test_a_crashing_program_fails_preflight_with_its_output_as_evidence(
    hosted: tuple[Arena, dict[str, Version]],
) -> None:
    _, got = hosted
    v = got["crasher"]
    assert v.state == "preflight-failed", (v.state, v.note)
    assert "its program ended 3 time(s)" in v.note
    assert v.evidence, "no evidence kept"
    latest = v.evidence[0]
    assert latest["reason"] == "it exited with status 1"
    assert "RuntimeError: book.bin is corrupt" in latest["output"]
    assert "loading the opening book from /bot/book.bin" in latest["output"]


def test_failed_versions_are_refused_by_rated_leagues_and_ready_ones_play_one(
    hosted: tuple[Arena, dict[str, Version]],
) -> None:
    arena, got = hosted
    assert arena.tablanette("league", "create", "hosted", "--games", "2").returncode == 0
    for bad, why in (("brokenbuild@1", "it is build-failed"), ("crasher@1", "it is preflight-failed")):
        refused = arena.tablanette("league", "add-bot", "hosted", bad)
        assert refused.returncode != 0 and f"{bad} cannot join a rated league: {why}" in refused.stderr, refused.stderr
    players = [f"{name}@latest" if name == "cppbot" else f"{name}@1" for name in EXAMPLES if name in got]
    added = arena.tablanette("league", "add-bot", "hosted", *players)
    assert added.returncode == 0, added.stdout + added.stderr
    run = arena.tablanette("league", "start", "hosted", timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    results = LeagueResults(arena.redis, arena.prefix)
    rows = results.standings("hosted")
    assert {row.bot for row in rows} == {f"{name}@1" for name in EXAMPLES if name in got}
    for row in rows:
        assert row.games > 0 and (row.timeouts, row.illegal, row.forfeits) == (0, 0, 0), row
    records = list(results.records("hosted"))
    assert records
    for record in records:
        verify_record(record)
        assert all(p.split("@")[0] in EXAMPLES and p.count("@") == 1 for p in record["players"]), record["players"]


def test_a_cpu_clock_league_charges_hosted_bots_their_cpu_time_not_their_waits(
    hosted: tuple[Arena, dict[str, Version]],
) -> None:
    """300 ms a move. On the CPU clock the sleeper (half a second of waiting a turn) loses no move and the
    spinner (half a CPU second) loses every one, ended by its host's meter; on the wall clock both lose all."""
    arena, got = hosted
    assert got["sleeper"].state == got["spinner"].state == "ready", (got["sleeper"].note, got["spinner"].note)
    results = LeagueResults(arena.redis, arena.prefix)
    turns = 2 * 24  # two games of one deal: 24 plays a seat each
    for clock in ("cpu", "wall"):
        league = f"clock-{clock}"
        rules = ["--rule", "move_time_ms=300", "--rule", "deals=1"]
        made = arena.tablanette(
            "league", "create", league, "--games", "2", "--clock", clock, *rules, "--quarantine-timeouts", "0"
        )
        assert made.returncode == 0, made.stdout + made.stderr
        assert arena.tablanette("league", "add-bot", league, "sleeper@1", "spinner@1").returncode == 0
        run = arena.tablanette("league", "start", league, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        rows = {row.bot: row for row in results.standings(league)}
        sleeper, spinner = rows["sleeper@1"], rows["spinner@1"]
        assert sleeper.games == spinner.games == 2
        assert spinner.timeouts == turns, spinner
        assert sleeper.timeouts == (0 if clock == "cpu" else turns), (clock, sleeper)
        for record in results.records(league):
            verify_record(record)
