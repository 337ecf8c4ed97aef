"""The README followed literally, and the rough edges a new user meets first.

- the quickstart's league block, run as written against `tablanette up`, ends with a
  finished league and nothing failed;
- the demo's league is the arena's own: `league status` and the web see it afterwards;
- `league add-bot` refuses a bot nobody registered, saying how to register it;
- `tablanette up | head -c 1` leaves no process behind; output in a pipe is never cut;
- a missing `--batch` file is a clear error, not a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import REDIS_URL, ROOT, unique_prefix

from cli.local import free_port
from store.client import connect
from store.keys import Keys

BIN = Path(sys.executable).parent


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    """A fresh arena (key prefix) on the test Redis, and `tablanette` on the PATH; its keys go afterwards."""
    prefix = unique_prefix("newcomer")
    yield {
        **os.environ,
        "TABLANETTE_REDIS_URL": REDIS_URL,
        "TABLANETTE_PREFIX": prefix,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONUNBUFFERED": "1",
    }
    client = connect(REDIS_URL)
    for pattern in Keys(prefix).patterns():
        for key in client.scan_iter(pattern):
            client.delete(key)


def run(env: dict[str, str], *args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tablanette", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def readme_block(marker: str) -> str:
    """The first ```bash block of README.md that holds ``marker``, or that comes after the prose line holding it."""
    text = (ROOT / "README.md").read_text()
    for match in re.finditer(r"```bash\n(.*?)```", text, re.S):
        if marker in match.group(1) or marker in text[: match.start()].rsplit("```", 1)[-1]:
            return match.group(1)
    raise AssertionError(f"no bash block for {marker!r} in README.md")


def survivors(marker: str) -> list[str]:
    """Command lines of live processes that mention ``marker`` (our test's prefix or folder)."""
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def start_up(env: dict[str, str], cwd: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    up = subprocess.Popen(
        ["tablanette", "up", *extra], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert up.stdout is not None
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("Ctrl-C stops everything" in x for x in lines):
        lines.append(up.stdout.readline())
    assert any("Ctrl-C stops everything" in x for x in lines), "".join(lines)
    return up, "".join(lines)


@pytest.mark.slow
def test_the_readme_quickstart_as_written_ends_with_a_finished_league(env: dict[str, str], tmp_path: Path) -> None:
    up_line = readme_block("A league of your own").strip()
    assert up_line.startswith("tablanette up ")
    up, _ = start_up(env, tmp_path)  # terminal 1, exactly as written (its logs go under ./var/up)
    block = readme_block("# terminal 2")
    log = tmp_path / "terminal2.log"
    with log.open("w") as out:  # a file, not a pipe: the bots it leaves running keep their output open
        terminal2 = subprocess.Popen(
            ["bash", "-e", "-c", block],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        assert terminal2.wait(timeout=600) == 0, log.read_text()[-3000:]
        status = json.loads(run(env, "league", "status", "spring", "--json").stdout)
        assert (status["status"], status["done"], status["failed"], status["total"]) == ("finished", 12, 0, 12)
        assert status["troubles"] == []
        assert (tmp_path / "spring.jsonl").read_text().count("\n") == 12
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(terminal2.pid, signal.SIGTERM)  # the three bots it left running in the background
        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=60) == 0
    assert not survivors(str(tmp_path)), "tablanette up left processes behind"


def test_add_bot_refuses_a_bot_nobody_registered(env: dict[str, str]) -> None:
    assert run(env, "league", "create", "spring").returncode == 0
    assert run(env, "bot", "add", "mybot").returncode == 0
    done = run(env, "league", "add-bot", "spring", "mybot", "otherbot")
    assert done.returncode == 2
    assert "bot 'otherbot' is not registered: register it first with `tablanette bot add otherbot`" in done.stderr
    assert "Traceback" not in done.stderr
    status = json.loads(run(env, "league", "status", "spring", "--json").stdout)
    assert status["total"] == 0  # nothing was added


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command says (exit status 2, no traceback, nothing else)."""
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(said) == 1 and "Traceback" not in done.stderr + done.stdout, done.stderr
    return said[0]


def test_one_bot_is_a_one_line_error_for_a_match_and_for_a_league(env: dict[str, str], tmp_path: Path) -> None:
    alone = one_line_error(run(env, "match", "--bot", "greedy", "--games", "2", "--no-records", cwd=tmp_path))
    assert "2 bots for its 2 seats" in alone and "--bot greedy --bot greedy" in alone, alone
    three = one_line_error(run(env, "match", "-b", "greedy", "-b", "random", "-n", "3", "--no-records", cwd=tmp_path))
    assert "3 bots for its 3 seats" in three, three
    itself = run(env, "match", "--bot", "greedy", "--bot", "greedy", "-g", "2", "--no-records", "--json", cwd=tmp_path)
    assert itself.returncode == 0, itself.stderr
    assert [b["name"] for b in json.loads(itself.stdout)["bots"]] == ["greedy#1", "greedy#2"]  # self-play

    assert run(env, "bot", "add", "one-bot").returncode == 0
    assert run(env, "league", "create", "solo").returncode == 0
    added = run(env, "league", "add-bot", "solo", "one-bot")
    assert added.returncode == 0 and "it needs at least 2 to start" in added.stdout, added.stdout
    refused = one_line_error(run(env, "league", "start", "solo"))
    assert "league solo has 1 bot (one-bot)" in refused and "at least 2" in refused, refused
    assert "tablanette league add-bot solo" in refused, refused
    status = json.loads(run(env, "league", "status", "solo", "--json").stdout)
    assert status["status"] == "created" and status["total"] == 0  # nothing was started


def test_bot_add_prints_only_the_token_on_standard_output(env: dict[str, str]) -> None:
    done = run(env, "bot", "add", "tokenbot")
    assert re.fullmatch(r"tbl_[\w-]{20,}\n", done.stdout), done.stdout
    assert "registered" in done.stderr
    listed = json.loads(run(env, "bot", "list", "--json").stdout)
    assert [b["bot"] for b in listed] == ["tokenbot"] and listed[0]["status"] == "active"


def test_a_missing_batch_file_is_a_clear_error(env: dict[str, str]) -> None:
    done = run(env, "rules", "captures", "--batch", "no-such-questions.jsonl")
    assert done.returncode == 2
    assert "cannot read --batch no-such-questions.jsonl: No such file or directory" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_up_into_a_pipe_that_closes_leaves_no_process_behind(env: dict[str, str], tmp_path: Path) -> None:
    piped = subprocess.run(
        ["bash", "-c", f"tablanette up --port 0 --web-port {free_port()} --workdir {tmp_path} | head -c 1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert piped.stdout == "e"  # "engine service on ..."
    deadline = time.monotonic() + 30
    while survivors(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not survivors(str(tmp_path)), "processes left behind"


def engine_line(env: dict[str, str], cwd: Path, *args: str) -> str:
    """The demo's "engine service on ..." line; then Ctrl-C (the demo stops everything it started)."""
    demo = subprocess.Popen(
        ["tablanette", "demo", "--workdir", str(cwd), "--web-port", "0", "--no-keep-serving", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert demo.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and (line := demo.stdout.readline()):
            lines.append(line)
            if line.startswith("engine service on"):
                return line
        raise AssertionError("the demo never said where its engine listens:\n" + "".join(lines))
    finally:
        demo.send_signal(signal.SIGINT)
        demo.communicate(timeout=60)


def test_the_demo_listens_on_tablanette_port_or_its_port_option(env: dict[str, str], tmp_path: Path) -> None:
    from_env, from_option = free_port(), free_port()
    said = engine_line({**env, "TABLANETTE_PORT": str(from_env)}, tmp_path)
    assert said.startswith(f"engine service on 127.0.0.1:{from_env};"), said
    said = engine_line({**env, "TABLANETTE_PORT": str(from_env)}, tmp_path, "--port", str(from_option))
    assert said.startswith(f"engine service on 127.0.0.1:{from_option};"), said
    assert not survivors(str(tmp_path)), "the demo left processes behind"


@pytest.mark.slow
def test_the_demos_league_is_the_arenas_and_its_output_survives_a_pipe(env: dict[str, str], tmp_path: Path) -> None:
    demo = run(env, "demo", "--workdir", str(tmp_path), "--web-port", "0", "--no-keep-serving", timeout=600)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "records exported" in demo.stdout and "re-verified" in demo.stdout
    next_line = next(line for line in demo.stdout.splitlines() if line.startswith("Next:"))
    assert "docs/jsonlines.md" in next_line and "tablanette match --bot" in next_line, next_line  # the fastest path
    assert "margin: points a game over its opponents'" in demo.stdout and "form: the incremental Elo" in demo.stdout
    for bot in ("demo-strong", "demo-greedy", "demo-random"):
        assert re.search(rf"│\s*\d+\s*│[^│]*│ {bot}[\s(]", demo.stdout), (
            f"{bot} cut from the ladder in a pipe:\n{demo.stdout}"
        )
    assert not survivors(str(tmp_path)), "the demo left processes behind"
    status = json.loads(run(env, "league", "status", "demo", "--json").stdout)
    assert status["status"] == "finished" and status["failed"] == 0 and status["done"] == status["total"] > 0
    port = free_port()
    web = subprocess.Popen(["tablanette", "web", "--port", str(port)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/leagues/demo", timeout=5) as resp:
                    assert json.loads(resp.read())["progress"]["status"] == "finished"
                break
            except OSError:
                assert time.monotonic() < deadline, "the web ladder does not show the demo's league"
                time.sleep(0.2)
    finally:
        web.terminate()
        web.wait(10)
