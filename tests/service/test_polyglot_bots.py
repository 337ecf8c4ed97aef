"""Bots in three languages connect with their tokens and play each other through the match runner.

The Node.js and C++ bots are built by ``scripts/setup_test_deps.sh`` (run by the test
script); this test fails, rather than skips, if they are missing.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
from arena_harness import REDIS_URL, ROOT, Arena

from engine_service.rules import Rules, verify_record
from worker.match_runner import MatchRunner

BOTS = {"py-greedy": "python", "node-greedy": "node", "cpp-greedy": "cpp"}


def test_python_node_and_cpp_bots_play_complete_verified_matches(arena: Arena) -> None:
    cpp = ROOT / "bots/cpp/build/tablanette-cpp-bot"
    node_modules = ROOT / "bots/node/node_modules"
    if not cpp.exists() or not node_modules.exists():
        pytest.fail("build the example bots first: bash scripts/setup_test_deps.sh")
    _, port = arena.start_engine()
    for name, lang in BOTS.items():
        token = arena.add_bot(name)
        if lang == "python":
            arena.start_python_bot("greedy", name, token, port)
        elif lang == "node":
            arena.start_node_bot(name, token, port)
        else:
            arena.start_cpp_bot(name, token, port)
    arena.wait_connected(*BOTS)

    async def play_all() -> list[dict]:  # type: ignore[type-arg]
        from redis.asyncio import Redis

        redis = Redis.from_url(REDIS_URL)
        runner = MatchRunner(redis, arena.prefix)
        try:
            pairs = list(itertools.permutations(BOTS, 2))  # every pair, both seat orders
            outcomes = [
                await runner.play(Rules.preset("tablic", target=61), f"poly-{i}", list(pair), f"poly/{i}")
                for i, pair in enumerate(pairs)
            ]
            # and one three-seat table with every language at once
            outcomes.append(
                await runner.play(Rules.preset("tablic", players=3, target=41), "poly-3", list(BOTS), "poly/3p")
            )
        finally:
            await runner.close()
            await redis.aclose()
        for o in outcomes:
            assert all(c.timeouts == 0 and c.illegal == 0 and not c.forfeit for c in o.conduct), o.conduct
        return [o.record for o in outcomes]

    records = asyncio.run(play_all())
    assert len(records) == 7
    for record in records:
        assert record["result"]["reason"] == "target"
        assert verify_record(record).totals == record["score"]
    labels = {p.split("@")[0] for r in records for p in r["players"]}
    assert labels == set(BOTS)


def test_the_cpp_bot_self_test_passes() -> None:
    selftest = ROOT / "bots/cpp/build/tablanette-cpp-bot-selftest"
    if not selftest.exists():
        pytest.fail("build the example bots first: bash scripts/setup_test_deps.sh")
    import subprocess

    done = subprocess.run([str(selftest)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_node_bot_self_test_passes() -> None:
    import shutil
    import subprocess

    node = shutil.which("node")
    assert node, "Node.js is required"
    done = subprocess.run(
        [node, str(Path(ROOT / "bots/node/selftest.js"))],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT / "bots/node",
    )
    assert done.returncode == 0, done.stdout + done.stderr
