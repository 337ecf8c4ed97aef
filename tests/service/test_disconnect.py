"""A bot that leaves mid-game and does not come back forfeits once the grace period is over.

The engine runs with ``TABLANETTE_GRACE_MS=1500`` and the runner with the same
grace. Healthy bots play on the same engine throughout.
"""

from __future__ import annotations

import time

import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread, wait_until

from engine_service.rules import Rules, verify_record
from store.keys import Keys

GRACE_MS = 1500


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena, TABLANETTE_GRACE_MS=str(GRACE_MS))


@pytest.mark.parametrize("how", ["drop", "half-close"])
def test_a_bot_gone_past_the_grace_period_forfeits(engine: Engine, how: str) -> None:
    name = f"leaver-{how}"
    token = engine.arena.add_bot(name)
    raw = engine.raw()
    assert raw.welcome(token, name).grace_ms == GRACE_MS
    league = engine.league(f"leave-{how}")
    rules = Rules.preset("tablic", target=21)
    game = f"leave-{how}/1"
    match = MatchThread(engine.arena.prefix, rules, "d", [engine.healthy[0], name], game, grace_ms=GRACE_MS)

    for _ in range(3):  # answer three turns, then leave
        turn = raw.next_turn()
        raw.play(turn.game_id, turn.turn_id, index=0)
    match.wait_answers(3, seat=1)
    if how == "drop":
        raw.close()
    else:
        raw.half_close()
    left = time.monotonic()
    wait_until(lambda: engine.arena.redis.get(Keys(engine.arena.prefix).session(name)) is None, what="release")
    outcome = match.result()
    waited = time.monotonic() - left

    record = outcome.record
    assert record["result"] == {"winner": 0, "reason": "forfeit", "forfeit_seat": 1}
    assert verify_record(record).totals == record["score"]
    assert sum(1 for d in record["deals"] for p in d["plays"] if p["seat"] == 1) == 3
    leaver, healthy = outcome.conduct[1], outcome.conduct[0]
    assert (leaver.forfeit, leaver.moves, leaver.timeouts) == (True, 3, 0)
    assert (healthy.forfeit, healthy.timeouts, healthy.illegal) == (False, 0, 0)
    assert waited >= GRACE_MS / 1000 * 0.9, f"forfeited after {waited:.2f} s, before the grace period"
    league.finish()
