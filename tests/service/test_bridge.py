"""The JSON-lines bridge (docs/jsonlines.md): real programs on real pipes, then a league through the arena.

Each way a program can go wrong costs at most the move it happened on: garbage,
an illegal play, a late answer (skipped, not taken for the next turn's), an
exit mid-game (started again), a flood (killed), a program that is not there.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest
from arena_harness import ROOT, Arena

from bots.base import play_match
from bots.greedy import GreedyBot
from bots.sdk import Clock
from engine_service.rules import Match, Observation, Play, Rules, match_record, verify_record
from programs.bridge import BridgeError, ProgramBot, parse_answer, turn_message
from programs.child import ChildError, ChildProgram
from store.results import LeagueResults

PERL_GREEDY = ["perl", str(ROOT / "bots" / "jsonlines" / "greedy.pl")]
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="the Perl example bot needs perl (Debian: perl)")
RULES = Rules.preset("tablic-pagat")


def program(tmp_path: Path, body: str) -> list[str]:
    """A Python program speaking JSON lines; ``body`` runs for each turn with ``msg`` and ``n`` (turns so far)."""
    path = tmp_path / "prog.py"
    path.write_text(
        "import json, sys, time, os\n"
        "n = 0\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'end':\n"
        "        break\n"
        "    if msg['type'] != 'turn':\n"
        "        continue\n"
        "    n += 1\n" + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return [sys.executable, str(path)]


def started(argv: list[str], name: str) -> tuple[ProgramBot, Observation]:
    """A bridged bot told a game starts, and the observation of its first turn."""
    bot = ProgramBot(argv, name)
    match = Match(RULES, name)
    bot.new_match(RULES, match.turn)
    return bot, match.observation(match.turn)


ABORTED = {"winner": None, "reason": "aborted", "score": [0, 0]}


@needs_perl
def test_the_perl_example_plays_whole_matches_that_verify() -> None:
    for seed in ("a", "b"):
        bot = ProgramBot(PERL_GREEDY, "perly")
        match = play_match(RULES, seed, [bot, GreedyBot()])
        verify_record(match_record(match, ["perly", "greedy"], f"bridge/{seed}"))
        assert bot.starts == 1 and bot.program is None  # one run, ended with the match


def test_a_turn_line_holds_the_whole_view_and_answers_are_read_by_index_or_by_play() -> None:
    match = Match(RULES, "view")
    obs = match.observation(match.turn)
    msg = turn_message(obs, 1500)
    assert msg["type"] == "turn" and msg["time_left_ms"] == 1500 and len(msg["hand"]) == 6
    assert msg["legal_plays"] == [str(p) for p in obs.legal_plays]
    json.dumps(msg)  # all of it is JSON
    legal = obs.legal_plays
    assert parse_answer('{"play": 1}', legal) == legal[1]
    assert parse_answer(json.dumps({"play": str(legal[-1])}), legal) == legal[-1]
    for bad, why in [
        ("hello", "not JSON"),
        ("[1]", 'with a "play"'),
        ('{"play": 99}', "out of range"),
        ('{"play": true}', "an index or a play"),
        ('{"play": "ZZ"}', "cannot read"),
    ]:
        with pytest.raises(BridgeError, match=why):
            parse_answer(bad, legal)
    not_legal = next(Play.parse(f"{c}") for c in ("AC", "2C", "3C", "4C") if Play.parse(c) not in legal)
    with pytest.raises(BridgeError, match="not a legal play"):
        parse_answer(json.dumps({"play": str(not_legal)}), legal)


def test_a_late_answer_is_skipped_not_taken_for_the_next_turns(tmp_path: Path) -> None:
    argv = program(
        tmp_path, "if n == 1:\n    time.sleep(1.0)\nprint(json.dumps({'play': n - 1 if n < 3 else 0}), flush=True)"
    )
    bot, obs = started(argv, "late")
    with pytest.raises(BridgeError, match="no answer within"):
        bot.choose(obs, Clock(100))
    assert bot.owed == 1
    # Its second answer ({"play": 1}) comes after the late first ({"play": 0}), which must be skipped.
    assert bot.choose(obs, Clock(5000)) == obs.legal_plays[1]
    assert bot.owed == 0
    bot.end_match(ABORTED)


def test_a_program_that_exits_mid_game_is_started_again_a_limited_number_of_times(tmp_path: Path) -> None:
    argv = program(tmp_path, "print('dying now', file=sys.stderr, flush=True)\nsys.exit(3)")
    bot, obs = started(argv, "crashy")
    with pytest.raises(BridgeError, match=r"exited with status 3; its last error output: dying now"):
        bot.choose(obs, Clock(5000))
    for _ in range(2):  # started again twice (RESTARTS), failing the same way
        with pytest.raises(BridgeError, match="status 3"):
            bot.choose(obs, Clock(5000))
    with pytest.raises(BridgeError, match="not started again"):
        bot.choose(obs, Clock(5000))
    assert bot.starts == 3


def test_garbage_costs_a_move_and_the_program_answers_the_next_turn(tmp_path: Path) -> None:
    argv = program(tmp_path, "print('not json' if n == 1 else json.dumps({'play': 0}), flush=True)")
    bot, obs = started(argv, "garbled")
    with pytest.raises(BridgeError, match="not JSON"):
        bot.choose(obs, Clock(5000))
    assert bot.choose(obs, Clock(5000)) == obs.legal_plays[0]
    assert bot.starts == 1
    bot.end_match(ABORTED)


def test_a_flood_on_stdout_kills_the_program_before_it_grows_our_memory(tmp_path: Path) -> None:
    argv = program(tmp_path, "sys.stdout.write('x' * 10_000_000)\nsys.stdout.flush()\ntime.sleep(30)")
    bot, obs = started(argv, "flood")
    with pytest.raises(BridgeError, match="longer than 65536 bytes"):
        bot.choose(obs, Clock(20_000))


def test_a_flood_of_short_lines_nobody_asked_for_ends_the_program_too() -> None:
    chatty = ChildProgram([sys.executable, "-c", "import time\nfor _ in range(100_000): print('{}')\ntime.sleep(30)"])
    deadline = time.monotonic() + 20
    while chatty.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "more than 64 lines that nobody asked for" in chatty.ended()
    chatty.stop()


def test_a_program_that_is_not_there_or_lingers_after_the_end() -> None:
    with pytest.raises(ChildError, match="no such executable file"):
        ChildProgram(["./no/such/bot"])
    with pytest.raises(ChildError, match="not found on PATH"):
        ChildProgram(["no-such-bot-anywhere"])
    stubborn = ChildProgram([sys.executable, "-c", "import signal, time; time.sleep(60)"])
    stubborn.stop(grace=0.2)  # its input closed, it does not exit: killed
    assert not stubborn.alive()


@needs_perl
def test_bridged_bots_play_a_league_through_the_arena(arena: Arena, tmp_path: Path) -> None:
    """The Perl example and a Python JSON-lines program, each through `tablanette bot bridge`."""
    _, port = arena.start_engine()
    arena.start_worker("w1")
    python_bot = program(tmp_path, "print(json.dumps({'play': str(msg['legal_plays'][-1])}), flush=True)")
    bridges = {}
    for name, argv in (("perly", PERL_GREEDY), ("pyline", python_bot)):
        token = arena.add_bot(name)
        bridges[name] = arena.spawn(
            f"bridge-{name}",
            [sys.executable, "-c", "from cli import main; main()", "bot", "bridge", "--as", name, "--", *argv],
            {"TABLANETTE_TOKEN": token, "TABLANETTE_ADDRESS": f"127.0.0.1:{port}"},
        )
    arena.wait_connected("perly", "pyline")
    for cmd in (
        ["league", "create", "bridged", "--games", "4", "--rule", "deals=2"],
        ["league", "add-bot", "bridged", "perly", "pyline"],
    ):
        done = arena.tablanette(*cmd)
        assert done.returncode == 0, done.stdout + done.stderr
    run = arena.tablanette("league", "start", "bridged", timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    results = LeagueResults(arena.redis, arena.prefix)
    rows = results.standings("bridged")
    assert sorted(r.bot for r in rows) == ["perly", "pyline"]
    for r in rows:
        assert (r.games, r.timeouts, r.illegal, r.forfeits) == (4, 0, 0, 0), r
    records = list(results.records("bridged"))
    assert len(records) == 4
    for record in records:
        verify_record(record)
        assert not any(p.get("auto") for d in record["deals"] for p in d["plays"])
    for bridge in bridges.values():  # the programs themselves chose every play
        assert "choose raised" not in bridge.text(), bridge.tail()
    # Every game told its program it was over (end_match through the SDK): none is left running.
    deadline = time.monotonic() + 10
    while (left := running_programs(PERL_GREEDY[1], str(tmp_path))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"programs still running after their games: {left}"


def running_programs(*needles: str) -> list[str]:
    """Command lines of running processes that name any of ``needles`` (full paths: only this test's
    programs, not those of another arena on the machine, such as a host's ``perl greedy.pl``)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(n in text for n in needles) and "bot bridge" not in text and "pytest" not in text:
            found.append(text)
    return found
