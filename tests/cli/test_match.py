"""``tablanette match`` and ``tablanette replay`` as an author runs them: real processes, no Redis.

Every run here gets an environment whose Redis URL points at a closed port, so a
command that touched Redis would fail: the local loop needs none.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from records_recipes import doc_block, run_recipes

from cli.local import CLI
from engine_service.rules import read_records, verify_record
from programs.sandbox import unavailable

ROOT = Path(__file__).resolve().parents[2]
NO_REDIS = "redis://127.0.0.1:1/0"

AWK_BOT = r"""
# A JSON-lines bot in awk (a language the project ships nothing in): the legal play capturing most cards.
/"type": *"turn"/ {
    s = $0
    sub(/.*"legal_plays": *\[/, "", s)
    sub(/\].*/, "", s)
    n = split(s, plays, /", *"/)
    best = 0; most = -1
    for (i = 1; i <= n; i++) {
        p = plays[i]; gsub(/"/, "", p)
        c = index(p, ":") ? split(substr(p, index(p, ":") + 1), cards, ",") : 0
        if (c > most) { most = c; best = i - 1 }
    }
    printf("{\"play\": %d}\n", best)
    fflush()
}
"""

CRASHER = r"""
import json, sys
turns = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "turn":
        turns += 1
        if turns == 3:
            print("\x1b]0;owned\x07crashing on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        print(json.dumps({"play": 0}), flush=True)
"""


def tablanette(
    *args: str, cwd: Path = ROOT, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "TABLANETTE_REDIS_URL": NO_REDIS, "COLUMNS": "200", **(env or {})}
    return subprocess.run([*CLI, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout)


def played(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    return {b["name"]: b for b in out["bots"]}


def test_a_program_in_any_language_plays_strong_in_one_command(tmp_path: Path) -> None:
    (tmp_path / "bot.awk").write_text(AWK_BOT)
    records = tmp_path / "games.jsonl"
    result = tablanette(
        "match",
        "--bot",
        "mine=awk -f bot.awk",
        "--bot",
        "strong",
        "--games",
        "4",
        "--records",
        str(records),
        "--json",
        cwd=tmp_path,
    )
    bots = played(result)
    assert bots["mine"]["games"] == bots["strong"]["games"] == 4
    conduct = bots["mine"]["conduct"]
    assert conduct["moves"] > 100
    assert conduct["timeouts"] == conduct["illegal"] == conduct["faults"] == conduct["forfeits"] == 0
    rating = bots["mine"]["rating"]
    assert rating["interval"][0] < rating["rating"] < rating["interval"][1]
    lines = list(read_records(records))
    assert len(lines) == 4
    for _, record in lines:
        verify_record(record)
        assert sorted(record["players"]) == ["mine", "strong"]


def test_a_crashing_program_is_restarted_and_said_at_the_end(tmp_path: Path) -> None:
    (tmp_path / "crash.py").write_text(CRASHER)
    result = tablanette(
        "match", "--bot", "python3 crash.py", "--bot", "greedy", "-g", "2", "--no-records", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "crash" in result.stdout and "timeout play" in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout  # the program's words, made printable
    as_json = tablanette(
        "match", "--bot", "python3 crash.py", "--bot", "greedy", "-g", "2", "--json", "--no-records", cwd=tmp_path
    )
    conduct = played(as_json)["crash"]["conduct"]
    assert conduct["faults"] >= 2 and conduct["forfeits"] == 0  # each game: a crash, a restart, another crash...
    assert any("exited with status 3" in reason or "status 3" in reason for reason in conduct["reasons"])


GARBAGE = r"""
import sys
for line in sys.stdin:
    if '"turn"' in line:
        print("I think \x1b[31mAH\x1b[0m is best", flush=True)
"""

ONE_ANSWER = r"""
import json, sys
for line in sys.stdin:
    if json.loads(line)["type"] == "turn":
        print(json.dumps({"play": 0}), flush=True)
        sys.exit(0)  # one answer a run: found ended at its next turn
"""


def test_a_fault_summary_shows_what_the_bot_printed_and_counts_crashes_as_crashes(tmp_path: Path) -> None:
    (tmp_path / "garbage.py").write_text(GARBAGE)
    (tmp_path / "crash.py").write_text(CRASHER)
    (tmp_path / "once.py").write_text(ONE_ANSWER)
    args = ("--bot", "greedy", "-g", "2", "--no-records")
    text = tablanette("match", "--bot", "python3 garbage.py", *args, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "\x1b" not in text.stdout + text.stderr and "the answer was not JSON" in text.stdout
    shown = r"the answer was not JSON; the first time, its answer: 'I think \x1b[31mAH\x1b[0m is best'"
    assert shown in text.stdout, text.stdout  # what it printed, shown as text: its escapes are not obeyed
    garbage = played(tablanette("match", "--bot", "python3 garbage.py", *args, "--json", cwd=tmp_path))["garbage"]
    assert garbage["conduct"]["crashes"] == 0 and garbage["conduct"]["faults"] == garbage["conduct"]["moves"]
    assert garbage["conduct"]["samples"] == {
        "the answer was not JSON": r"its answer: 'I think \x1b[31mAH\x1b[0m is best'"
    }

    crash = played(tablanette("match", "--bot", "python3 crash.py", *args, "--json", cwd=tmp_path))["crash"]
    conduct = crash["conduct"]
    assert conduct["crashes"] == 6 and conduct["crashed"] == {"it exited with status 3": 6}  # 3 runs a game
    assert "crashing on purpose" in conduct["samples"]["it exited with status 3"]
    assert "\x1b" not in json.dumps(conduct, ensure_ascii=False) and "owned" not in json.dumps(conduct)
    text = tablanette("match", "--bot", "python3 crash.py", *args, cwd=tmp_path)
    said = text.stdout
    assert "crash: crashed 6 times" in said and "crashed 6 × it exited with status 3" in said, said
    assert "its last error output: crashing on purpose" in said and "\x1b" not in said and "\x07" not in said

    once = played(tablanette("match", "--bot", "python3 once.py", *args, "--json", cwd=tmp_path))["once"]
    assert once["conduct"]["crashes"] == 6 and once["conduct"]["crashed"] == {"it exited with status 0": 6}


GRPC_CRASHER = r"""
import os, sys
from bots import Bot
from bots.sdk import BotClient

class Crasher(Bot):
    name = "crasher"
    moves = 0

    def choose(self, observation):
        Crasher.moves += 1
        if Crasher.moves == 20:  # mid-game, in every game it starts
            print("\x1b]0;owned\x07crashing on purpose", file=sys.stderr, flush=True)
            os._exit(5)
        return observation.legal_plays[0]

env = os.environ
BotClient(Crasher, env["TABLANETTE_ADDRESS"], env["TABLANETTE_TOKEN"], name=env["TABLANETTE_BOT_NAME"]).run_forever()
"""


def test_grpc_sdk_programs_in_other_languages_play_through_an_engine_of_the_command(tmp_path: Path) -> None:
    """The Node.js and C++ SDK bots, as their authors run them, connect to the engine ``tablanette match``
    starts for them (no Redis: its URL points at a closed port), and play each other and a built-in bot."""
    records = tmp_path / "games.jsonl"
    before = set(Path("/tmp").glob("tablanette-grpc-*"))
    specs = ["node=grpc:node bots/node/bot.js", "random"]
    cpp = ROOT / "bots/cpp/build/tablanette-cpp-bot"
    if cpp.exists():  # built by scripts/setup_test_deps.sh (the full run)
        specs.insert(1, f"cpp=grpc:{cpp}")
    args = [a for spec in specs for a in ("--bot", spec)]
    result = tablanette("match", *args, "--games", "6", "--records", str(records), "--json")
    bots = played(result)
    for name in ("node", "cpp") if cpp.exists() else ("node",):
        assert bots[name]["games"] == (4 if cpp.exists() else 6)
        conduct = bots[name]["conduct"]
        assert conduct["moves"] > 50
        assert conduct["timeouts"] == conduct["illegal"] == conduct["faults"] == conduct["forfeits"] == 0
    for _, record in read_records(records):
        verify_record(record)
    leftovers = set(Path("/tmp").glob("tablanette-grpc-*")) - before
    assert not leftovers, f"a clean series left its programs' logs behind: {leftovers}"


def test_a_grpc_program_that_dies_is_started_again_and_said(tmp_path: Path) -> None:
    (tmp_path / "crasher.py").write_text(GRPC_CRASHER)
    env = {"TABLANETTE_GRACE_MS": "300"}  # its seat's turns wait this long for it once it is gone
    result = tablanette(
        "match",
        "--bot",
        f"grpc:{sys.executable} crasher.py",
        "--bot",
        "greedy",
        "-g",
        "2",
        "--json",
        "--no-records",
        cwd=tmp_path,
        env=env,
    )
    conduct = played(result)["crasher"]["conduct"]
    assert conduct["crashes"] == 2  # dead in each game: started again before the second, found dead after it
    assert conduct["crashed"] == {
        "its program exited with status 5; it was started again": 1,
        "its program exited with status 5": 1,
    }
    assert conduct["faults"] == 0 and conduct["forfeits"] == 2  # gone past its grace period: each game forfeited
    assert "crashing on purpose" in conduct["samples"]["its program exited with status 5"]
    text = tablanette(
        "match",
        "--bot",
        f"grpc:{sys.executable} crasher.py",
        "--bot",
        "greedy",
        "-g",
        "1",
        "--no-records",
        cwd=tmp_path,
        env=env,
    )
    assert text.returncode == 0, text.stderr
    assert "\x1b" not in text.stdout + text.stderr and "\x07" not in text.stdout + text.stderr


def test_a_grpc_program_that_never_connects_is_a_clear_error(tmp_path: Path) -> None:
    quits = "grpc:sh -c 'printf \"\\033[31mno token for me\\n\" >&2; exit 3'"
    result = tablanette("match", "--bot", quits, "--bot", "greedy", "-g", "1", "--no-records", cwd=tmp_path)
    assert result.returncode == 2
    said = " ".join(result.stderr.split())
    assert "its program exited with status 3 before it connected" in said and "no token for me" in said
    assert "\x1b" not in result.stderr and "Traceback" not in result.stderr


def test_a_grpc_program_gets_one_seat_a_game_and_leaves_nothing_running() -> None:
    """One program answers one seat: fewer bots than seats is refused (a program would see two hands).
    A program's whole process group goes at the end (a wrapper's children too)."""
    refused = tablanette("match", "--bot", "grpc:node bots/node/bot.js", "--bot", "greedy", "-n", "3", "-g", "1")
    assert refused.returncode == 2
    assert "a match needs 3 bots for its 3 seats, and 2 were named" in " ".join(refused.stderr.split())
    marker = "sleep 313"  # started by the wrapper, in the program's process group
    wrapped = f"wrapped=grpc:sh -c '{marker} & exec node bots/node/bot.js'"
    result = tablanette("match", "--bot", wrapped, "--bot", "greedy", "-g", "2", "--json", "--no-records")
    assert played(result)["wrapped"]["games"] == 2
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout.strip() == "", "the wrapper's child outlived the match"
    long_seed = tablanette("match", "--bot", "greedy", "--bot", "random", "-g", "1", "--seed", "x" * 101)
    assert long_seed.returncode == 2 and "a seed is at most 100 characters" in long_seed.stderr


def test_a_python_bot_class_plays_in_process() -> None:
    result = tablanette(
        "match", "--bot", "bots/examples/python/mybot.py", "--bot", "random", "-g", "2", "--json", "--no-records"
    )
    bots = played(result)
    assert bots["mybot"]["games"] == 2 and bots["mybot"]["conduct"]["faults"] == 0


@pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")
def test_a_folder_is_built_and_played_in_sandboxes(tmp_path: Path) -> None:
    folder = tmp_path / "javabot"
    shutil.copytree(ROOT / "bots/examples/java", folder)
    before = set(Path("/tmp").glob("tablanette-match-*"))  # a failed build keeps its log in one: not this run's
    result = tablanette("match", "--bot", str(folder), "--bot", "greedy", "-g", "2", "--json", "--no-records")
    bots = played(result)
    assert bots["javabot"]["games"] == 2
    assert bots["javabot"]["conduct"]["timeouts"] == bots["javabot"]["conduct"]["faults"] == 0
    assert not (folder / "out").exists()  # built in a copy, never in the author's folder
    leftovers = set(Path("/tmp").glob("tablanette-match-*")) - before
    assert not leftovers, f"the build's folders were left behind: {sorted(leftovers)}"


@pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")
def test_a_failed_build_quotes_its_error(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text(
        'language = "java"\nprotocol = "jsonlines"\nbuild = ["javac", "-d", "out", "Bot.java"]\nrun = ["java", "Bot"]\n'
    )
    (tmp_path / "Bot.java").write_text("class Bot { void f() { int x = 1 } }\n")
    result = tablanette("match", "--bot", str(tmp_path), "--bot", "greedy", "-g", "1")
    assert result.returncode == 2
    assert "error: ';' expected" in result.stderr and "build.log" in result.stderr


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("no-such-program --x", "not a built-in bot, a .py file or a folder"),
        ("stronk", "built-in bots: random, greedy, strong"),
        ("greedy:eps=lots", "eps must be a number"),
        ("bots/examples/python", 'a grpc bot connects to an engine service: give its run command as --bot "grpc:'),
        ("grpc:no-such-program", "not a built-in bot, a .py file or a folder, and as a command"),
        ("grpc:", "an empty command"),
        ("tests", "no bot.toml here"),
        ("'unclosed", "cannot split it into a command"),
    ],
)
def test_a_bot_that_cannot_play_is_a_clear_error(spec: str, said: str) -> None:
    result = tablanette("match", "--bot", spec, "--bot", "greedy", "-g", "1", "--no-records")
    assert result.returncode == 2
    assert said in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.stderr


def test_replay_writes_a_page_of_a_record(tmp_path: Path) -> None:
    records = tmp_path / "games.jsonl"
    assert tablanette("match", "-b", "greedy", "-b", "random", "-g", "2", "--records", str(records)).returncode == 0
    result = tablanette("replay", str(records), "--match", "2")
    assert result.returncode == 0, result.stderr
    page = tmp_path / "games.replay-2.html"
    assert page.as_uri() in result.stdout
    html = page.read_text()
    assert "window.TA_REPLAY" in html and "/static/" not in html
    by_id = tablanette("replay", str(records), "--match", "match/game-1", "--out", str(tmp_path / "one.html"))
    assert by_id.returncode == 0 and (tmp_path / "one.html").exists()


@pytest.mark.parametrize(
    ("content", "args", "said"),
    [
        ("not json\n", (), "does not hold records"),
        ('{"format": "something-else"}\n', (), "not a game record the engine can re-play"),
        ("", (), "holds no records"),
        (None, ("--match", "7"), "no record 7 (it holds 2 record(s))"),
        (None, ("--match", "0"), "records are numbered from 1"),
        (None, ("--match", "nope"), "no record with the id 'nope'"),
    ],
)
def test_replay_of_what_is_not_there_is_a_clear_error(
    tmp_path: Path, content: str | None, args: tuple[str, ...], said: str
) -> None:
    file = tmp_path / "file.jsonl"
    if content is None:
        assert tablanette("match", "-b", "greedy", "-b", "random", "-g", "2", "--records", str(file)).returncode == 0
    else:
        file.write_text(content)
    result = tablanette("replay", str(file), *args)
    assert result.returncode == 2
    assert said in " ".join(result.stderr.split()), result.stderr


MINE = """
from bots import Bot


class Mine(Bot):
    name = "mine"

    def choose(self, obs):
        return obs.legal_plays[0]
"""


def test_match_records_become_the_parquet_dataset_with_no_arena_and_the_docs_recipes_read_it(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    pd = pytest.importorskip("pandas")
    from store.archive import SCHEMAS

    documented = doc_block("local-export", "bash").splitlines()
    export = next(line.split("#")[0].split() for line in documented if "records export" in line)
    mine = tmp_path / "mine.py"
    mine.write_text(MINE)
    assert tablanette("match", "--bot", "mine.py", "--bot", "strong", "-g", "6", cwd=tmp_path).returncode == 0
    done = tablanette(*export[1:], cwd=tmp_path)  # as documented, with Redis unreachable
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "records" / "match-records"
    assert "6 game(s)" in done.stdout and str(Path("records") / "match-records") in done.stdout, done.stdout
    for table in ("matches", "deals", "plays"):
        frame = pd.read_parquet(folder / f"{table}.parquet")
        assert list(frame.columns) == SCHEMAS[table].names and set(frame["league"]) == {"match-records"}
    matches = pd.read_parquet(folder / "matches.parquet")
    plays = pd.read_parquet(folder / "plays.parquet")
    records = [record for _, record in read_records(tmp_path / "match-records.jsonl")]
    assert list(matches["match_id"]) == [r["id"] for r in records] and list(matches["plan_index"]) == list(range(6))
    assert int(matches["plays"].sum()) == len(plays) == sum(len(d["plays"]) for r in records for d in r["deals"])
    assert plays["ms"].isna().all() and matches["elo"].isna().all()  # what only an arena knows

    rows, scope = run_recipes(tmp_path)  # the recipes read records/*/... from where they run
    deals = pd.read_parquet(folder / "deals.parquet")
    decided = deals[deals["winner_team"].notna()]
    share = round(float((decided["winner_team"] == decided["dealer_team"]).mean()), 3)
    assert rows == [("tablic", len(decided), pytest.approx(share))]
    assert set(scope["per_bot"].index) == {"mine", "strong"}  # type: ignore[attr-defined]


def test_a_record_file_that_is_not_records_exports_nothing_and_says_which_line(tmp_path: Path) -> None:
    file = tmp_path / "games.jsonl"
    assert tablanette("match", "-b", "greedy", "-b", "random", "-g", "2", "--records", str(file)).returncode == 0
    good = file.read_text()
    file.write_text(good + '{"format": "tablanette-record/1", "id": 7}\n')
    out = tmp_path / "records"
    bad = tablanette("records", "export", "--format", "parquet", "--out", str(out), str(file))
    assert bad.returncode == 2 and "line 3" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    assert not (out / "games").exists()
    file.write_text(good + good)
    twice = tablanette("records", "export", "--format", "parquet", "--out", str(out), str(file))
    assert twice.returncode == 2 and "a second record of game 'match/game-1'" in twice.stderr, twice.stderr
    as_jsonl = tablanette("records", "export", "--out", str(out), str(file))
    assert as_jsonl.returncode == 2 and "--format parquet" in as_jsonl.stderr
