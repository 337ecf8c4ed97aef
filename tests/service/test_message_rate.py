"""The per-stream message limit cuts floods, never a bot for answering fast.

The engine here allows a message every 10 seconds (burst 10) on a stream: far
below what any bot answers at, so every answer must be left out of the count,
while what a flood is made of (keepalives, plays for no waiting turn) is still cut.
"""

from __future__ import annotations

import grpc
import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread, check_clean, session_of

from engine_service.rules import Rules
from tablanette.v1 import arena_pb2 as apb

RATE, BURST = 0.1, 10


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena, TABLANETTE_MESSAGE_RATE=str(RATE), TABLANETTE_MESSAGE_BURST=str(BURST))


def test_bots_answering_many_times_the_rate_play_on(engine: Engine) -> None:
    a, b = engine.healthy
    sessions = [session_of(engine.arena, bot) for bot in (a, b)]
    assert all(sessions), "the healthy bots are not connected"
    match = MatchThread(engine.arena.prefix, Rules.preset("tablic", target=61), "fast", [a, b], "fast/1")
    outcome = match.result()
    check_clean(outcome)
    allowed = BURST + RATE * outcome.seconds  # what the limit lets through in that time, were answers counted
    assert outcome.moves / 2 > allowed, f"{outcome.moves} moves in {outcome.seconds:.1f} s: too few to tell"
    assert [session_of(engine.arena, bot) for bot in (a, b)] == sessions, "a bot was cut (and came back)"


@pytest.mark.parametrize(
    "message",
    [
        apb.BotMessage(keepalive=apb.Keepalive(unix_ms=1)),
        apb.BotMessage(play=apb.PlayMove(game_id="no-such-game", turn_id=1, index=0)),
    ],
    ids=["keepalives", "plays-for-no-turn"],
)
def test_a_flood_of_anything_else_is_cut(engine: Engine, message: apb.BotMessage) -> None:
    name = f"flood-{message.WhichOneof('kind')}"
    token = engine.arena.add_bot(name)
    raw = engine.raw()
    raw.welcome(token, name)
    for _ in range(BURST * 4):
        raw.send(message)
    code, details = raw.status(timeout=30)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "messages per second" in details, details
    raw.close()
