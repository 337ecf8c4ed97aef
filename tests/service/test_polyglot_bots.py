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
from service_kit import ObservedRunner

from engine_service.rules import Rules, verify_record
from engine_service.time_control import TimeControl

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

    credits: dict[str, list[int]] = {bot: [] for bot in BOTS}

    async def play_all() -> list[dict]:  # type: ignore[type-arg]
        from redis.asyncio import Redis

        redis = Redis.from_url(REDIS_URL)
        # a league that credits latency and gives a time bank: every SDK echoes the server's pings
        runner = ObservedRunner(redis, arena.prefix)
        try:
            pairs = list(itertools.permutations(BOTS, 2))  # every pair, both seat orders
            tables = [
                (Rules.preset("tablic", target=61), f"poly-{i}", list(pair), f"poly/{i}")
                for i, pair in enumerate(pairs)
            ]
            # and one three-seat table with every language at once
            tables.append((Rules.preset("tablic", players=3, target=41), "poly-3", list(BOTS), "poly/3p"))
            outcomes = []
            for rules, seed, seats, game_id in tables:
                runner.responses.clear()
                control = TimeControl(rules.move_time_ms, latency_credit_ms=1000, time_bank_ms=5000)
                outcomes.append(await runner.play(rules, seed, seats, game_id, control))
                for seat, resp in runner.responses:
                    credits[seats[seat]].append(resp.credit_ms)
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
    for bot, got in credits.items():  # measured from the first echo, sent back right after the Welcome
        assert got[1:] and all(c > 0 for c in got[1:]), (bot, got[:5])


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
