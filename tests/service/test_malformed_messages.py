"""Bytes that are not a BotMessage, and messages over the size limit, end only the sender's stream.

The engine runs with ``TABLANETTE_MAX_MESSAGE_BYTES=4096``. Garbage ends the
stream with INVALID_ARGUMENT, an oversized message with RESOURCE_EXHAUSTED; the
engine stays up and a league of healthy bots keeps playing on it.
"""

from __future__ import annotations

import grpc
import pytest
from arena_harness import Arena
from grpc_health.v1 import health_pb2, health_pb2_grpc
from service_kit import Engine, MatchThread

from engine_service.rules import Rules, verify_record
from tablanette.v1 import arena_pb2 as apb

LIMIT = 4096
GARBAGE = b"\xff\xff\xff\xff\x0f not a protobuf message"


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena, TABLANETTE_MAX_MESSAGE_BYTES=str(LIMIT))


def still_serving(engine: Engine) -> None:
    assert engine.proc.alive(), engine.proc.text()
    with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as ch:
        resp = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert resp.status == health_pb2.HealthCheckResponse.SERVING


def test_garbage_after_the_hello_is_invalid_argument(engine: Engine) -> None:
    token = engine.arena.add_bot("garbage-bot")
    league = engine.league("garbage")
    raw = engine.raw(raw_bytes=True)
    raw.welcome(token, "garbage-bot")
    raw.send(GARBAGE)
    code, details = raw.status()
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
    assert "malformed message" in details
    # the bot is not banned: a well-formed session is welcomed again
    again = engine.raw()
    assert again.welcome(token, "garbage-bot").bot_name == "garbage-bot"
    again.close()
    still_serving(engine)
    league.finish()


def test_garbage_as_the_first_message_is_invalid_argument(engine: Engine) -> None:
    league = engine.league("garbage-first")
    raw = engine.raw(raw_bytes=True)
    raw.send(GARBAGE)
    code, details = raw.status()
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
    assert "malformed message" in details
    assert "Traceback" not in engine.proc.text()
    still_serving(engine)
    league.finish()


def test_garbage_mid_game_ends_the_stream_and_the_bot_may_come_back(engine: Engine) -> None:
    token = engine.arena.add_bot("midgame-bot")
    league = engine.league("garbage-mid")
    raw = engine.raw(raw_bytes=True)
    raw.welcome(token, "midgame-bot")
    match = MatchThread(
        engine.arena.prefix, Rules.preset("tablic", target=21), "s", ["midgame-bot", engine.healthy[1]], "mid/1"
    )
    turn = raw.next_turn()
    raw.send(GARBAGE)
    assert raw.status()[0] == grpc.StatusCode.INVALID_ARGUMENT

    back = engine.raw()  # within the grace period: the pending turn comes again, with the game
    back.welcome(token, "midgame-bot")
    started = back.recv("game_started").game_started
    assert (started.game_id, started.seat) == ("mid/1", 0)
    again = back.next_turn()
    assert again.turn_id == turn.turn_id and list(again.legal_plays) == list(turn.legal_plays)
    back.play(again.game_id, again.turn_id, index=0)
    back.play_out("mid/1")
    outcome = match.result()
    assert outcome.record["result"]["reason"] == "target"
    assert verify_record(outcome.record).totals == outcome.record["score"]
    assert not any(c.forfeit or c.timeouts for c in outcome.conduct), outcome.conduct
    back.close()
    league.finish()


@pytest.mark.parametrize("after_hello", [True, False], ids=["after-hello", "first"])
def test_oversized_message_is_resource_exhausted(engine: Engine, after_hello: bool) -> None:
    token = engine.arena.add_bot(f"big-bot-{after_hello}".lower())
    league = engine.league(f"oversized-{after_hello}".lower())
    raw = engine.raw()
    if after_hello:
        raw.welcome(token, f"big-bot-{after_hello}".lower())
        for i in range(100):  # many small messages are fine
            raw.send(apb.BotMessage(keepalive=apb.Keepalive(unix_ms=i)))
        # and so is one just under the limit: answered (its long game id never echoed back), stream open
        raw.play("g" * (LIMIT - 100), 1, index=0)
        rejected = raw.recv("play_rejected").play_rejected
        assert rejected.game_id == "" and "a game id is at most 128 characters" in rejected.reason
        raw.play("g" * (LIMIT + 1), 1, index=0)
    else:
        raw.hello(token + "x" * (2 * LIMIT), "big-bot")
    code, details = raw.status()
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert "exceeds the limit" in details and str(LIMIT) in details
    still_serving(engine)
    league.finish()


def test_the_bot_message_limit_never_refuses_the_runners_own_requests(module_arena: Arena) -> None:
    """A 512-byte bot limit is far below a Dispatch request (observation + legal plays, over 1 KB)."""
    import asyncio

    from arena_harness import REDIS_URL

    from worker.match_runner import run_match

    _, port = module_arena.start_engine("tiny-limit", TABLANETTE_MAX_MESSAGE_BYTES="512")
    for name in ("tiny-a", "tiny-b"):
        module_arena.start_python_bot("greedy", name, module_arena.add_bot(name), port)
    module_arena.wait_connected("tiny-a", "tiny-b")
    outcome = asyncio.run(
        run_match(
            REDIS_URL,
            module_arena.prefix,
            Rules.preset("tablic-pagat", target=41),
            "tiny",
            ["tiny-a", "tiny-b"],
            "tiny/1",
        )
    )
    assert outcome.record["result"]["reason"] == "target"
    assert verify_record(outcome.record).totals == outcome.record["score"]
