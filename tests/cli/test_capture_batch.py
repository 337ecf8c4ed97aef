"""The capture batch path: its fast path answers as the checked one, across processes and both entries."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from arena_harness import ROOT

from cli.capture_batch import CHUNK, answers, batch_command, capture_answer, write_answers
from engine_service.rules import CARDS, PRESETS, Rules


def questions(count: int, seed: int) -> list[str]:
    """Canonical questions (every card can be played, Jacks included) and a few odd ones."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        cards = rng.sample(range(52), rng.randint(1, 9))
        table, card = cards[1:], cards[0]
        lines.append(json.dumps({"table": [str(CARDS[c]) for c in table], "card": str(CARDS[card])}))
        if i % 97 == 0:
            lines.append(json.dumps({"table": " ".join(str(CARDS[c]).lower() for c in table), "card": "10h"}))
        if i % 211 == 0:
            lines += ["", "not json", '{"table": ["AH", "AH"], "card": "9C"}', '{"table": ["9C"], "card": "9C"}']
    return lines


def checked(rules: Rules, lines: list[str]) -> list[str]:
    """The answers as the checked path (``capture_answer``) gives them."""
    out = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
            answer = {"captures": capture_answer(rules, q.get("table", []), q["card"])["captures"]}
        except Exception as exc:  # any refusal: only that it is one, and its line, matter here
            answer = {"error": f"line {lineno}: {type(exc).__name__}"}
        out.append(answer)
    return [json.dumps(a) for a in out]


def normalized(answer_lines: list[str]) -> list[str]:
    out = []
    for line in answer_lines:
        a = json.loads(line)
        if "error" in a:
            a = {"error": a["error"].split(":")[0]}
        out.append(json.dumps(a))
    return out


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_fast_path_answers_as_the_checked_path(preset: str) -> None:
    rules = Rules.preset(preset)
    lines = questions(1500, seed=len(preset))
    got = normalized(list(answers(rules, lines)))
    assert got == normalized(checked(rules, lines))


def test_a_sweeping_jack_takes_the_table_and_an_empty_table_gives_nothing() -> None:
    rules = Rules.preset("tablic")
    assert rules.jack_sweeps
    lines = ['{"table": ["AH", "8D"], "card": "JC"}', '{"table": [], "card": "JC"}', '{"card": "9C"}']
    assert list(answers(rules, lines)) == ['{"captures":[["AH","8D"]]}\n', '{"captures":[]}\n', '{"captures":[]}\n']


def test_several_processes_answer_in_input_order_with_the_right_line_numbers() -> None:
    rules = Rules.preset("tablic-pagat")
    lines = questions(3 * CHUNK, seed=5)
    lines.insert(2 * CHUNK + 7, "oops")  # an error in the third chunk names its own line
    alone: list[str] = []
    write_answers(rules, lines, alone.append, workers=1)
    shared: list[str] = []
    write_answers(rules, lines, shared.append, workers=2)
    assert len(shared) > 1  # written chunk by chunk
    assert "".join(shared) == "".join(alone)
    assert f'"line {2 * CHUNK + 8}: Expecting value' in "".join(alone)


@pytest.mark.parametrize(
    "args",
    [
        ["rules", "presets"],
        ["rules", "captures", "--card", "9C"],
        ["rules", "captures", "--batch", "QUESTIONS", "--json"],
        ["rules", "captures", "--batch", "QUESTIONS", "--help"],
        ["rules", "captures", "--batch", "QUESTIONS", "--preset", "nope"],
        ["rules", "captures", "--batch", "QUESTIONS", "-r", "nope=1"],
        ["rules", "captures", "--batch", "QUESTIONS", "--players", "two"],
        ["rules", "captures", "--batch", "QUESTIONS", "-p", "tablic", "-p", "pisti"],
        ["rules", "captures", "--batch", "no-such-file.jsonl"],
        ["rules", "captures", "--batch"],
        ["--prefix", "x", "rules", "captures", "--batch", "QUESTIONS"],
    ],
)
def test_the_app_runs_what_the_strict_parser_does_not_take(args: list[str], tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"table": ["AH"], "card": "AD"}\n')
    assert batch_command([str(path) if a == "QUESTIONS" else a for a in args]) is None


@pytest.mark.parametrize(
    "options", [[], ["--preset", "pisti"], ["--preset=tablic-pagat", "-n", "4"], ["-p", "tablic", "-r", "sums=false"]]
)
def test_the_strict_parser_takes_the_rule_options(options: list[str], tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"table": ["AH"], "card": "AD"}\n')
    assert batch_command(["rules", "captures", "--batch", str(path), *options]) is not None


def test_both_entries_write_the_same_bytes(tmp_path: Path) -> None:
    """Through ``main`` (no app) and through the app (``--json`` is the app's, ignored with --batch)."""
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(questions(2 * CHUNK + 300, seed=9)) + "\n")

    def run(*extra: str) -> str:
        cmd = [sys.executable, "-c", "from cli import main; main()", "rules", "captures", "--preset", "tablic-pagat"]
        cmd += ["--batch", str(path), *extra]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    fast, app = run(), run("--json")
    assert fast == app
    rules = Rules.preset("tablic-pagat")
    first = json.loads(path.read_text().splitlines()[0])
    want = capture_answer(rules, first["table"], first["card"])["captures"]
    assert json.loads(fast.splitlines()[0]) == {"captures": want}
