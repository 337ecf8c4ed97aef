"""Built-in Python bots connect through the SDK and play complete matches via the match runner."""

from __future__ import annotations

import asyncio

from arena_harness import REDIS_URL, Arena

from engine_service.rules import Rules, verify_record
from worker.match_runner import run_match


def test_two_python_bots_play_a_verified_match(arena: Arena) -> None:
    _, port = arena.start_engine()
    for name, kind in (("alice", "greedy"), ("bob", "random")):
        arena.start_python_bot(kind, name, arena.add_bot(name), port)
    arena.wait_connected("alice", "bob")

    outcome = asyncio.run(
        run_match(REDIS_URL, arena.prefix, Rules.preset("tablic", target=51), "seed-1", ["alice", "bob"], "t/1")
    )

    record = outcome.record
    assert record["players"] == ["alice@1", "bob@1"]
    assert record["result"]["reason"] == "target"
    replay = verify_record(record)
    assert replay.totals == record["score"]
    assert all(c.timeouts == 0 and c.illegal == 0 and not c.forfeit for c in outcome.conduct)
    assert outcome.moves == sum(len(d["plays"]) for d in record["deals"])
