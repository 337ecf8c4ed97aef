"""A host no bot can stall: a program that stops reading its input, builds that hang, and SIGTERM.

First the pieces, attacked directly: a line written to a program that never
reads fails within its deadline and ends the program; :meth:`ChildProgram.stop`
returns at once even while another thread's write waits; a sandboxed program
that shrinks its input pipe to one page and stops reading cannot hold its game
past ``end_match``.

Then the whole host, as an attacker submits (`tablanette bot submit`): two
builds that hang (and a second version of one of them, which must not take a
third slot) while a harmless version builds and passes its preflight; a
JSON-lines version that passes its preflight honestly, then in its league reads
its ``start`` line and never reads again, beside a healthy league on the same
host; and SIGTERM to the host while that program's input is full and the two
builds still hang.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from arena_harness import Arena, new_arena, readable_folder

from bots.sdk import Clock
from cli.local import CLI
from engine_service.rules import Match, Rules, verify_record
from programs.bridge import BridgeError, ProgramBot, turn_message
from programs.child import ChildError, ChildProgram
from programs.sandbox import Limits, Sandbox, unavailable
from store.results import LeagueResults
from store.versions import Versions

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")
RULES = Rules.preset("tablic-pagat")
SMALL = Limits(memory_mb=64, pids=16, cpus=0.5, cpu_seconds=30, scratch_mb=4)
NEVER_READS = [
    sys.executable,
    "-c",
    "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(120)",
]
TURN_LINE = json.dumps({"type": "turn", "pad": "x" * 1000})

STALLER = """\
import fcntl, json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fcntl.fcntl(0, fcntl.F_SETPIPE_SZ, 4096)  # the smallest pipe there is: it is full after a few turns
start = json.loads(sys.stdin.readline())
if not start["rules"]["deals"]:  # the preset's rules: its preflight; it plays like anyone
    for line in sys.stdin:
        if json.loads(line)["type"] == "turn":
            print(json.dumps({"play": 0}), flush=True)
    sys.exit(0)
print("stalling: never reading my input again", file=sys.stderr, flush=True)
while True:
    time.sleep(60)
"""
HARMLESS = """\
import json, sys
for line in sys.stdin:
    if json.loads(line)["type"] == "turn":
        print(json.dumps({"play": 0}), flush=True)
"""


def processes_with(marker: str) -> list[int]:
    """The processes on the machine whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def pending_input(pid: int) -> int:
    """Bytes written to process ``pid``'s standard input (a pipe) that it has not read (-1: cannot tell)."""
    try:
        fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return -1
    try:
        buf = bytearray(4)
        fcntl.ioctl(fd, termios.FIONREAD, buf)
        return int.from_bytes(buf, sys.byteorder)
    except OSError:
        return -1
    finally:
        os.close(fd)


def input_full(marker: str, timeout: float) -> None:
    """Until the input of the program with ``marker`` in its command line has no room for one more turn's line
    (each line written shows as a rise of its unread bytes)."""
    deadline = time.monotonic() + timeout
    seen: dict[int, int] = {}
    smallest = 4096
    while time.monotonic() < deadline:
        for pid in processes_with(marker):
            pending = pending_input(pid)
            if pending > seen.get(pid, 0):
                smallest = min(smallest, pending - seen.get(pid, 0))
                seen[pid] = pending
                if pending + smallest > 4096:
                    return
        time.sleep(0.02)
    pytest.fail(f"not within {timeout} s: the input of the program with {marker} full")


def wait_for(ready: Callable[[], object], what: str, timeout: float, every: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(every)
    pytest.fail(f"not within {timeout} s: {what}")


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder the sandbox's unprivileged user can read (pytest's own are private to root)."""
    with readable_folder("stalls-test") as made:
        yield made


# ----------------------------------------------------------------- the pieces


def test_a_line_to_a_program_that_never_reads_fails_within_its_deadline_and_ends_it() -> None:
    program = ChildProgram(NEVER_READS)
    try:
        written = 0
        while True:  # the pipe takes 64 KiB, then nothing more
            started = time.monotonic()
            try:
                program.write_line(TURN_LINE, timeout=0.5)
            except ChildError as exc:
                took = time.monotonic() - started
                reason = str(exc)
                break
            written += 1
            assert written < 1000, "a program that never reads took a megabyte"
        assert took < 5, f"the failing write took {took:.1f} s (its deadline: 0.5 s)"
        assert "it stopped reading its input" in reason, reason
        wait_for(lambda: not program.alive(), "the program killed", 5)
        with pytest.raises(ChildError, match="stopped reading its input"):
            program.write_line(TURN_LINE)  # and every later line says why
    finally:
        started = time.monotonic()
        program.stop()
        assert time.monotonic() - started < 5
    print(f"a program that never reads: {written} lines taken, then a write failed after {took:.2f} s")


def test_stop_returns_at_once_while_another_thread_waits_to_write() -> None:
    program = ChildProgram(NEVER_READS)  # it ignores SIGTERM too
    outcome: list[str] = []

    def write_forever() -> None:
        try:
            program.write_line("x" * (1 << 20), timeout=120)  # a megabyte: it waits for room that never comes
            outcome.append("written")
        except ChildError as exc:
            outcome.append(str(exc))

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    time.sleep(0.5)
    assert writer.is_alive() and program.alive()  # the write waits
    started = time.monotonic()
    program.stop(grace=0.2)
    stopped = time.monotonic() - started
    writer.join(timeout=5)
    assert stopped < 5, f"stop took {stopped:.1f} s"
    assert not writer.is_alive() and outcome and outcome[0] != "written", outcome
    assert not program.alive()
    program.stop()  # again: nothing left to do, nothing to wait for
    print(f"stop() beside a stuck write: {stopped:.2f} s")


def test_a_sandboxed_program_that_stops_reading_is_gone_when_its_game_ends(folder: Path) -> None:
    """It shrinks its input to one page and never reads after its start line; a turn with 30 s on its
    clock then waits to be written while end_match comes: end_match must not wait for that turn."""
    program_dir = folder / "staller"
    program_dir.mkdir()
    (program_dir / "stall.py").write_text(STALLER)
    made: list[Sandbox] = []

    def launcher() -> Sandbox:
        made.append(Sandbox(program_dir, SMALL, "staller"))
        return made[-1]

    bot = ProgramBot(["python3", "stall.py"], "staller", launcher=launcher)
    rules = RULES.with_overrides({"deals": 1})
    match = Match(rules, "stall")
    bot.new_match(rules, match.turn)
    observation = match.observation(match.turn)
    line = len(json.dumps(turn_message(observation, 30_000))) + 1
    for _ in range(10):  # short turns, unanswered, until the next line cannot fit in its input
        with pytest.raises(BridgeError, match="no answer within"):
            bot.choose(observation, Clock(300))
        assert bot.program is not None and bot.program.alive()
        if pending_input(bot.program.proc.pid) + line > 4096:
            break
    else:
        pytest.fail("its input never filled")
    outcome: list[str] = []

    def long_turn() -> None:
        try:
            bot.choose(observation, Clock(30_000))
            outcome.append("answered")
        except BridgeError as exc:
            outcome.append(str(exc))

    turn = threading.Thread(target=long_turn, daemon=True)
    turn.start()
    time.sleep(1.0)
    assert turn.is_alive()  # its line waits for room in the program's input
    programs = [p for p in [bot.program] if p is not None]
    started = time.monotonic()
    bot.end_match({"winner": None, "reason": "aborted", "score": [0, 0]})
    ended = time.monotonic() - started
    turn.join(timeout=5)
    assert ended < 5, f"end_match took {ended:.1f} s"
    assert not turn.is_alive() and outcome and "not reading its input" in outcome[0], outcome
    assert all(not p.alive() for p in programs)
    assert all(s.closed for s in made)  # every run's sandbox released: its cgroup is gone
    print(f"end_match beside a stuck turn: {ended:.2f} s ({outcome[0]})")


# ----------------------------------------------------------------- the whole host


def bot_folder(into: Path, name: str, manifest: str, files: dict[str, str]) -> Path:
    folder = into / name
    folder.mkdir()
    (folder / "bot.toml").write_text(manifest)
    for file, text in files.items():
        (folder / file).write_text(text)
    return folder


def test_a_host_survives_a_program_that_stops_reading_and_builds_that_hang() -> None:
    marker = secrets.token_hex(4)
    hang_marker = f"3600.{int(marker, 16) % 10**6}"  # in the command line of each hung build's sleep
    with readable_folder("stalls") as work:
        arena = new_arena("stalls", work / "arena")
        try:
            _host_attacked(arena, work, marker, hang_marker)
        finally:
            arena.close()
    wait_for(lambda: not processes_with(marker) and not processes_with(hang_marker), "nothing of the bots left", 15)


def _host_attacked(arena: Arena, work: Path, marker: str, hang_marker: str) -> None:
    t0 = time.monotonic()

    def phase(what: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f} s] {what}", flush=True)

    _, port = arena.start_engine()
    arena.start_workers(2)
    for rival in ("rival-a", "rival-b"):
        arena.start_python_bot("greedy", rival, arena.add_bot(rival), port)
    host = arena.spawn("host", [*CLI, "host", "--dir", str(work / "hosted"), "--address", f"127.0.0.1:{port}"])
    versions = Versions(arena.redis, arena.prefix)
    phase("arena up")

    def submit(name: str, folder: Path) -> float:
        done = arena.tablanette("bot", "submit", str(folder), "--name", name)
        assert done.returncode == 0, done.stdout + done.stderr
        return time.monotonic()

    def state(version: str) -> str:
        return versions.require(version).state

    def settled(version: str, timeout: float) -> str:
        wait_for(lambda: state(version) not in ("submitted", "building", "preflight"), f"{version} settled", timeout)
        return state(version)

    # Two bots whose builds hang (and a second version of one of them), then a version that stalls.
    hang = (
        f'language = "c"\nprotocol = "jsonlines"\nrun = ["./bot"]\nbuild = ["sh", "-c", "exec sleep {hang_marker}"]\n'
    )
    for name in ("hang-a", "hang-b", "hang-a"):
        into = work / secrets.token_hex(3)
        into.mkdir()
        submit(name, bot_folder(into, name, hang, {}))
    staller = bot_folder(
        work,
        "staller",
        f'language = "python"\nprotocol = "jsonlines"\nrun = ["python3", "stall.py", "{marker}"]\n',
        {"stall.py": STALLER},
    )
    submit("staller", staller)
    wait_for(lambda: state("hang-a@1") == state("hang-b@1") == "building", "the two hung builds", 60)
    assert settled("staller@1", 180) == "ready", versions.require("staller@1").note
    phase("staller ready")

    # A harmless version, built and preflighted while both builds hang (a second version of a hung bot waits).
    harmless = bot_folder(
        work,
        "harmless",
        'language = "python"\nprotocol = "jsonlines"\nrun = ["python3", "play.py"]\n'
        'build = ["sh", "-c", "cp bot.py play.py"]\n',
        {"bot.py": HARMLESS},
    )
    submitted = submit("harmless", harmless)
    assert settled("harmless@1", 120) == "ready", versions.require("harmless@1").note
    harmless_s = time.monotonic() - submitted
    assert harmless_s < 60, f"the harmless version took {harmless_s:.1f} s beside two hung builds"
    assert state("hang-a@1") == state("hang-b@1") == "building"
    assert state("hang-a@2") == "submitted"  # one build per bot at a time: it took no slot
    phase("harmless ready")

    # The staller's league (it reads its start line, then nothing), and a healthy league beside it.
    def league(name: str, *bots: str, games: int, rules: tuple[str, ...]) -> None:
        for cmd in (
            ["league", "create", name, "--games", str(games), "--quarantine-timeouts", "0", *rules],
            ["league", "add-bot", name, *bots],
        ):
            done = arena.tablanette(*cmd)
            assert done.returncode == 0, done.stdout + done.stderr

    quick = ("--rule", "deals=1", "--rule", "move_time_ms=500")
    league("stall", "staller@1", "rival-a", games=1, rules=quick)
    league("healthy", "harmless@1", "rival-b", games=2, rules=("--rule", "deals=1"))
    stall = arena.spawn("league-stall", [*CLI, "league", "start", "stall", "--window", "1"])
    wait_for(lambda: "it stopped reading its input" in host.text(), "the staller's program ended for not reading", 60)
    healthy = arena.spawn("league-healthy", [*CLI, "league", "start", "healthy", "--window", "2"])
    phase("staller stalled; healthy league started")
    wait_for(lambda: not healthy.alive(), "the healthy league to finish", 180)
    assert "finished, 2 of 2 matches done" in healthy.text(), healthy.tail()
    results = LeagueResults(arena.redis, arena.prefix)
    for row in results.standings("healthy"):
        assert (row.games, row.timeouts, row.illegal, row.forfeits) == (2, 0, 0, 0), row
    for record in results.records("healthy"):
        verify_record(record)
    assert not versions.require("harmless@1").evidence
    phase("healthy league done")

    wait_for(lambda: not stall.alive(), "the staller's league to finish", 120)
    assert "finished, 1 of 1 matches done" in stall.text(), stall.tail()
    rival = {row.bot: row for row in results.standings("stall")}["rival-a"]  # its opponent is charged nothing
    assert (rival.games, rival.timeouts, rival.illegal, rival.forfeits) == (1, 0, 0, 0), rival
    for record in results.records("stall"):
        verify_record(record)
    game_over = time.monotonic()
    wait_for(lambda: not processes_with(marker), "the staller's programs gone with its game", 10)
    gone_s = time.monotonic() - game_over
    phase("stall league done")

    # SIGTERM while a line waits to be written to the staller (its input is full) and both builds hang.
    # A long move (6 s): the line that waits for room waits long enough that load cannot make SIGTERM miss it.
    league("stall-again", "staller@1", "rival-a", games=2, rules=("--rule", "deals=1", "--rule", "move_time_ms=6000"))
    arena.spawn("league-stall-again", [*CLI, "league", "start", "stall-again", "--window", "1"])
    input_full(marker, 120)
    phase("staller input full")
    # The last line written waits for its answer until the turn's deadline; once the host has given up on
    # it, the rival plays, and the next line waits for room (for a whole move): SIGTERM in that wait.
    no_answer = "gave no answer within the turn's"
    unanswered = host.text().count(no_answer)
    wait_for(lambda: host.text().count(no_answer) > unanswered, "the staller's last turn given up on", 60, 0.02)
    time.sleep(3.0)  # half a move: the next line has come (the rival's move is quick) and waits 3 s more at least
    assert state("hang-a@1") == state("hang-b@1") == "building"
    signalled = time.monotonic()
    host.popen.send_signal(signal.SIGTERM)
    try:
        host.popen.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the host did not stop within 30 s of SIGTERM:\n{host.tail(3000)}")
    stop_s = time.monotonic() - signalled
    assert stop_s < 10, f"the host took {stop_s:.1f} s to stop on SIGTERM"
    assert host.popen.returncode == 0, host.tail(3000)
    # A line was pending for the program, which does not read: usually it waits for room (the input is full),
    # but a line shorter than those before it may still fit, and the host then meets SIGTERM writing the next
    # one. Either way the host stops at once (above); test_stop_returns_at_once_while_another_thread_waits_to_write
    # checks the wait for room itself, deterministically.
    pending = ("it was stopped while it was not reading its input", "its input is closed (it is being stopped)")
    assert any(said in host.text() for said in pending), host.tail(3000)
    print(
        f"harmless version built and preflighted beside two hung builds in {harmless_s:.1f} s; "
        f"staller's programs gone {gone_s:.1f} s after its game; host stopped {stop_s:.1f} s after SIGTERM"
    )
