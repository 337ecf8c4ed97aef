"""The benchmarks still run: each quick one, as a reader of the README would run it, prints its figures.

A benchmark is the evidence behind a claim in the docs and the issues; one that a refactor broke (a stand-in
class whose method lost a parameter, say) would say nothing, silently. These take seconds;
``worlds`` needs Redis (it starts its own engine replica on a key prefix of its own), and ``standing`` (its ladder
page reads a key prefix of its own); the benchmarks that start
a whole arena or take minutes are run by hand (README, "Benchmarks").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICK = {
    "hot_path": (["--quick"], ("move_us", "move_from_scratch_us", "turn_build_us")),
    "local_match": (["--games", "4", "--rounds", "1"], ("ratio_in_process", "ratio_commands")),
    "standing": (
        ["--bots", "400", "--results", "40000"],
        ("cold_fit_s", "warm_fit_s", "fit_ratings_s", "decision_ms_a_match", "play_ms_a_match", "page_ms"),
    ),
    "worlds": (["--quick"], ("rpc_worlds_ms", "rpc_legal_plays_ms", "local_worlds_ms")),
}


@pytest.mark.parametrize("bench", sorted(QUICK))
def test_a_quick_benchmark_runs_and_prints_its_figures(bench: str) -> None:
    args, figures = QUICK[bench]
    done = subprocess.run(
        [sys.executable, f"bench/{bench}.py", *args, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for figure in figures:
        assert isinstance(out[figure], int | float) and out[figure] > 0, (figure, out)
