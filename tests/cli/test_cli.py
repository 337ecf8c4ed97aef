"""The command line as a user runs it: self-play, records verify, rules captures (single and batch)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from arena_harness import ROOT


def tablanette(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        input=stdin,
        timeout=300,
    )


def test_selfplay_writes_verifiable_records_and_balances_seats(tmp_path: Path) -> None:
    records = tmp_path / "games.jsonl"
    done = tablanette(
        "selfplay",
        "--bots",
        "greedy,random,random",
        "--games",
        "12",
        "--seed",
        "t",
        "--records",
        str(records),
        "--rule",
        "target=31",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["games"] == 12 and sum(b["games"] for b in stats["bots"]) == 24
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(lines) == 12
    seats = Counter((r["players"][0], r["players"][1]) for r in lines)
    assert all(seats[(a, b)] == seats[(b, a)] for a, b in seats)  # every pair sits both ways equally
    verify = tablanette("records", "verify", str(records))
    assert verify.returncode == 0 and "12 record(s) verified" in verify.stdout


def test_records_verify_names_the_first_discrepancy(tmp_path: Path) -> None:
    records = tmp_path / "games.jsonl"
    assert tablanette("selfplay", "--games", "2", "--records", str(records), "--rule", "target=21").returncode == 0
    first, second = records.read_text().splitlines()
    tampered = json.loads(second)
    tampered["deals"][0]["plays"][3]["bonus"] += 1
    records.write_text(first + "\n" + json.dumps(tampered) + "\n")
    done = tablanette("records", "verify", str(records))
    assert done.returncode == 1
    assert "games.jsonl:2" in done.stderr and "deal 0, play 3" in done.stderr and "bonus" in done.stderr


def test_captures_answers_one_question_and_a_batch_in_order() -> None:
    one = tablanette(
        "rules", "captures", "--preset", "tablic-pagat", "--table", "AH 3S 6D 7C 8H QS", "--card", "KC", "--json"
    )
    assert one.returncode == 0, one.stderr
    assert len(json.loads(one.stdout)["captures"]) == 6
    batch = "\n".join(
        [
            json.dumps({"table": ["AH", "3S", "6D", "7C", "8H", "QS"], "card": "9C"}),
            json.dumps({"table": ["AH"], "card": "XX"}),
            json.dumps({"table": ["2H", "3S", "4D", "7C"], "card": "9C"}),
        ]
    )
    out = tablanette("rules", "captures", "--preset", "tablic-pagat", "--batch", "-", stdin=batch)
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    assert answers[0] == {"captures": [["AH", "8H"], ["3S", "6D"], ["AH", "3S", "6D", "8H"]]}
    assert "line 2" in answers[1]["error"] and "'XX' is not a card" in answers[1]["error"]
    assert answers[2] == {"captures": [["2H", "7C"], ["2H", "3S", "4D"]]}


def test_bad_input_gets_a_clear_error_and_exit_code_2() -> None:
    for args, message in [
        (("selfplay", "--preset", "nope"), "unknown preset 'nope'"),
        (("selfplay", "--rule", "target=bad"), "rule target='bad' is not valid"),
        (("selfplay", "--bots", "greedy,alphago"), "unknown bot 'alphago'; built-in bots: random, greedy, strong"),
        (("rules", "captures", "--preset", "tablanette-1939", "--players", "4", "--card", "9C"), "2 or 3 players"),
    ]:
        done = tablanette(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)


def test_up_runs_the_arena_in_the_foreground_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    import os
    import re
    import signal
    import socket
    import time
    import urllib.request

    import grpc
    from arena_harness import REDIS_URL, unique_prefix
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        web_port = s.getsockname()[1]
    env = {
        **os.environ,
        "TABLANETTE_REDIS_URL": REDIS_URL,
        "TABLANETTE_PREFIX": unique_prefix("up"),
        "PYTHONPATH": str(ROOT),
    }
    up = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from cli import main; main()",
            "up",
            "--port",
            "0",
            "--workers",
            "1",
            "--web-port",
            str(web_port),
            "--workdir",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
        # as a shell starts a background job (`tablanette up &`): Ctrl-C ignored, which Python would keep
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert up.stdout is not None
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("Ctrl-C stops everything" in x for x in lines):
            lines.append(up.stdout.readline())
        engine_port = int(re.search(r"engine service on 127\.0\.0\.1:(\d+)", "".join(lines)).group(1))  # type: ignore[union-attr]
        with grpc.insecure_channel(f"127.0.0.1:{engine_port}") as ch:
            assert health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/health", timeout=5) as resp:
            assert json.loads(resp.read()) == {"status": "ok"}

        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=30) == 0
        for port in (engine_port, web_port):  # nothing is left listening
            with socket.socket() as s:
                assert s.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still open after Ctrl-C"
        assert "stopping" in up.stdout.read()
    finally:
        if up.poll() is None:  # a failed assertion must not leave the arena running: its children follow it
            up.kill()
            up.wait(10)
    survivors = subprocess.run(["pgrep", "-f", env["TABLANETTE_PREFIX"]], capture_output=True, text=True).stdout
    assert not survivors.strip(), f"processes left behind: {survivors}"  # the worker's queue name carries it


def test_the_league_commands_start_without_scipy() -> None:
    """SciPy's statistics take most of a second of CPU to load: a league command loads them only when it fits
    ratings, not to create a league, add a bot or start one (every test arena runs such commands by the dozen)."""
    probe = "import sys, cli.league_cmd, cli.ladder_cmd; print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
