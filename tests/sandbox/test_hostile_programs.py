"""Deliberately broken bot programs, each run in a real sandbox (bubblewrap + cgroups), each contained.

A fork bomb, a memory hog, an infinite loop, writes outside its scratch, a
network connection, reading other bots' files, a flood on stdout, an exit
mid-game: each costs its own bot a move (or its program), says why, leaves
nothing behind and changes nothing outside its sandbox, while a healthy
sandboxed match next to them plays to the end.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import ROOT, Arena, readable_folder

from bots.base import play_match
from bots.greedy import GreedyBot
from bots.sdk import Clock
from cli.local import CLI
from engine_service.rules import Match, Rules, match_record, verify_record
from programs.bridge import BridgeError, ProgramBot
from programs.cgroups import CGROUP_ROOT
from programs.sandbox import Limits, Sandbox, unavailable
from store.results import LeagueResults

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")
RULES = Rules.preset("tablic-pagat")
ABORTED = {"winner": None, "reason": "aborted", "score": [0, 0]}
SMALL = Limits(memory_mb=64, pids=16, cpus=0.5, cpu_seconds=2, scratch_mb=4)

PROLOGUE = """\
import json, os, socket, sys, time
def report(**kw):
    print(json.dumps(kw), file=sys.stderr, flush=True)
def answer():
    print(json.dumps({"play": 0}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "turn":
        continue
"""


def hostile(folder: Path, body: str) -> list[str]:
    """A program in ``folder`` that runs ``body`` (indented into its turn loop) on each turn."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(PROLOGUE + "".join(f"    {line}\n" for line in body.strip().splitlines()))
    return ["python3", "bot.py"]


def sandboxed_bot(folder: Path, argv: list[str], limits: Limits = SMALL) -> tuple[ProgramBot, list[Sandbox]]:
    made: list[Sandbox] = []

    def launcher() -> Sandbox:
        made.append(Sandbox(folder, limits, folder.name))
        return made[-1]

    return ProgramBot(argv, folder.name, launcher=launcher), made


def one_turn(bot: ProgramBot, ms: int = 10_000) -> object:
    match = Match(RULES, "hostile")
    bot.new_match(RULES, match.turn)
    return bot.choose(match.observation(match.turn), Clock(ms))


def reports(bot: ProgramBot) -> dict[str, object]:
    assert bot.program is not None
    out: dict[str, object] = {}
    deadline = time.monotonic() + 5
    while not out and time.monotonic() < deadline:
        for line in list(bot.program.stderr_tail):
            if line.startswith("{"):
                out.update(json.loads(line))
        time.sleep(0.02)
    return out


def perl_bot(folder: Path) -> Path:
    """The Perl example bot copied into ``folder``/perly: wherever the repository lies, nobody can read it."""
    target = folder / "perly"
    target.mkdir()
    shutil.copy(ROOT / "bots" / "jsonlines" / "greedy.pl", target / "greedy.pl")
    target.chmod(0o755)
    return target


def left_behind(sandboxes: list[Sandbox]) -> list[str]:
    """cgroups of these runs still on the machine (each run must remove its own)."""
    return [str(g) for s in sandboxes for g in s.groups.values() if g.exists()]


def run_cgroups() -> set[Path]:
    """Every sandbox run's cgroup on the machine (v1: under the pids hierarchy; v2: the unified one)."""
    base = CGROUP_ROOT / ("pids" if (CGROUP_ROOT / "pids").is_dir() else "") / "tablanette"
    return {p for p in base.glob("*") if p.is_dir()}


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A folder the sandbox's unprivileged user can read (pytest's own are private to root)."""
    with readable_folder("sandbox-test") as made:
        yield made


@pytest.fixture(autouse=True)
def no_cgroup_left() -> Iterator[None]:
    before = run_cgroups()
    yield
    assert not run_cgroups() - before, "a sandbox run left its cgroup behind"


def test_a_fork_bomb_hits_the_process_limit_and_nothing_of_it_survives(tmp_path: Path) -> None:
    argv = hostile(tmp_path / "forker", "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass")
    bot, made = sandboxed_bot(tmp_path / "forker", argv)
    with pytest.raises(BridgeError, match="no answer within"):
        one_turn(bot, ms=1500)
    assert made[0].pids_refused() > 0
    bot.end_match(ABORTED)
    assert not left_behind(made)


def test_a_memory_hog_is_killed_by_the_kernel_and_the_reason_is_given(tmp_path: Path) -> None:
    argv = hostile(tmp_path / "hog", "hoard = []\nwhile True:\n    hoard.append(bytearray(8 << 20))")
    bot, made = sandboxed_bot(tmp_path / "hog", argv)
    with pytest.raises(BridgeError, match=r"memory limit \(64 MB\) was reached"):
        one_turn(bot)
    bot.end_match(ABORTED)
    assert not left_behind(made)


def test_an_infinite_loop_times_out_then_hits_its_cpu_time_limit(tmp_path: Path) -> None:
    argv = hostile(tmp_path / "spinner", "while True:\n    pass")
    bot, made = sandboxed_bot(tmp_path / "spinner", argv)
    with pytest.raises(BridgeError, match="no answer within"):
        one_turn(bot, ms=300)
    program = bot.program
    assert program is not None
    deadline = time.monotonic() + 60  # 2 CPU seconds at half a core: about 4 s
    while program.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "CPU time limit (2 s) was reached" in program.ended()
    assert made[0].cpu_seconds() > 1  # its cgroup counted the CPU it burnt (kernels round differently)
    bot.end_match(ABORTED)


def test_it_cannot_write_outside_its_scratch_reach_the_network_or_read_other_bots(tmp_path: Path) -> None:
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "secret.txt").write_text("the other bot's weights")
    body = f"""
def attempt(what):
    try:
        what()
        return "done"
    except Exception as exc:
        return type(exc).__name__
def write(path):
    return lambda: open(path, "w").write("x")
def connect(port):
    return lambda: socket.create_connection(("127.0.0.1", port), timeout=2)
report(
    bot_dir=attempt(write("/bot/planted")),
    usr=attempt(write("/usr/planted")),
    etc=attempt(write("/etc/planted")),
    scratch=attempt(write("/scratch/ok")),
    tmp=attempt(write("/tmp/ok")),
    other_bot=attempt(lambda: open({str(other / "secret.txt")!r}).read()),
    work=attempt(lambda: os.listdir({str(ROOT)!r})),
    redis=attempt(connect(6379)),
    internet=attempt(lambda: socket.create_connection(("192.0.2.1", 80), timeout=2)),
    uid=os.getuid(),
)
answer()
"""
    argv = hostile(tmp_path / "snoop", body)
    before = sorted(p.name for p in (tmp_path / "snoop").iterdir())
    bot, made = sandboxed_bot(tmp_path / "snoop", argv)
    assert one_turn(bot) is not None  # it answered: it was only looking around
    seen = reports(bot)
    assert seen["scratch"] == seen["tmp"] == "done"
    for where in ("bot_dir", "usr", "etc"):
        assert seen[where] in ("OSError", "PermissionError", "FileNotFoundError"), (where, seen)
    assert seen["other_bot"] == seen["work"] == "FileNotFoundError", seen
    assert seen["redis"] == "ConnectionRefusedError", seen  # its own network: nothing listens there
    assert seen["internet"] == "OSError", seen  # no route at all
    bot.end_match(ABORTED)
    assert sorted(p.name for p in (tmp_path / "snoop").iterdir()) == before  # nothing planted
    assert not (Path("/usr/planted").exists() or Path("/etc/planted").exists())
    assert not left_behind(made)


def test_a_flood_and_an_exit_mid_game_cost_a_move_each(tmp_path: Path) -> None:
    flood = hostile(tmp_path / "flood", "sys.stdout.write('x' * 5_000_000)\nsys.stdout.flush()\ntime.sleep(30)")
    bot, made = sandboxed_bot(tmp_path / "flood", flood)
    with pytest.raises(BridgeError, match="longer than 65536 bytes"):
        one_turn(bot)
    bot.end_match(ABORTED)
    quitter = hostile(tmp_path / "quitter", "sys.exit(7)")
    bot, made2 = sandboxed_bot(tmp_path / "quitter", quitter)
    with pytest.raises(BridgeError, match="exited with status 7"):
        one_turn(bot)
    bot.end_match(ABORTED)
    assert not left_behind(made + made2)


def test_a_healthy_sandboxed_match_plays_to_the_end_beside_all_of_them(tmp_path: Path) -> None:
    bodies = {
        "forker": "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        "hog": "hoard = []\nwhile True:\n    hoard.append(bytearray(8 << 20))",
        "spinner": "while True:\n    pass",
    }
    errors: list[str] = []

    def misbehave(name: str, body: str) -> None:
        bot, _ = sandboxed_bot(tmp_path / name, hostile(tmp_path / name, body))
        try:
            one_turn(bot, ms=3000)
        except BridgeError as exc:
            errors.append(str(exc))
        finally:
            bot.end_match(ABORTED)

    threads = [threading.Thread(target=misbehave, args=item) for item in bodies.items()]
    for t in threads:
        t.start()
    healthy, _ = sandboxed_bot(perl_bot(tmp_path), ["perl", "greedy.pl"], Limits())
    started = time.monotonic()
    match = play_match(RULES, "beside-the-hostile", [healthy, GreedyBot()])
    took = time.monotonic() - started
    for t in threads:
        t.join(60)
    verify_record(match_record(match, ["perly", "greedy"], "beside/1"))
    assert match.result is not None and match.result.reason == "target"
    assert len(errors) == len(bodies), errors
    print(f"healthy sandboxed match beside three hostile programs: {took:.2f} s")


def test_a_sandboxed_bridged_bot_plays_a_league_through_the_arena(arena: Arena, tmp_path: Path) -> None:
    """`tablanette bot bridge --sandbox`: the Perl example, sandboxed, in a rated league beside a gRPC bot."""
    _, port = arena.start_engine()
    arena.start_worker("w1")
    arena.start_python_bot("greedy", "greedy", arena.add_bot("greedy"), port)
    argv = ["bot", "bridge", "--as", "perly", "--sandbox", "--dir", str(perl_bot(tmp_path))]
    env = {"TABLANETTE_TOKEN": arena.add_bot("perly"), "TABLANETTE_ADDRESS": f"127.0.0.1:{port}"}
    bridge = arena.spawn("bridge-perly", [*CLI, *argv, "--", "perl", "greedy.pl"], env)
    arena.wait_connected("greedy", "perly")
    for cmd in (["league", "create", "boxed", "--games", "4"], ["league", "add-bot", "boxed", "greedy", "perly"]):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stdout + done.stderr
    run = arena.tablanette("league", "start", "boxed", timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    results = LeagueResults(arena.redis, arena.prefix)
    for row in results.standings("boxed"):
        assert (row.games, row.timeouts, row.illegal, row.forfeits) == (4, 0, 0, 0), row
    for record in results.records("boxed"):
        verify_record(record)
    assert "choose raised" not in bridge.text(), bridge.tail()  # the program itself chose every play
