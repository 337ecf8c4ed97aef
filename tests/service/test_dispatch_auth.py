"""Dispatch is internal: calls without the arena's secret metadata are PERMISSION_DENIED."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from arena_harness import Arena
from service_kit import Engine

from config.internal_calls import INTERNAL_METADATA
from store.keys import Keys
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import dispatch_pb2_grpc
from tablanette.v1 import game_pb2 as gpb


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


@pytest.fixture(scope="module")
def dispatch(engine: Engine) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
        yield dispatch_pb2_grpc.DispatchStub(channel)


def rogue_turn(bot: str) -> dpb.PlayRequest:
    """A turn a rogue client would like to push to a connected bot."""
    turn = apb.Turn(
        game_id="rogue/1", turn_id=1, legal_plays=[gpb.Play(card="2C")], time_left_ms=500, deadline_unix_ms=1
    )
    return dpb.PlayRequest(bot_name=bot, game=apb.GameStarted(game_id="rogue/1"), turn=turn, grace_ms=100)


def test_dispatch_without_the_secret_is_permission_denied(engine: Engine, dispatch: Any) -> None:
    league = engine.league("rogue-dispatch")
    bot = engine.healthy[0]
    attempts = [
        lambda md: dispatch.RequestPlay(rogue_turn(bot), metadata=md, timeout=5),
        lambda md: dispatch.EndGame(
            dpb.EndGameRequest(bot_name=bot, game_over=apb.GameOver(game_id="rogue/1")), metadata=md, timeout=5
        ),
        # a rogue "host" claiming to meter a bot's CPU time (so as to time it out, or to never do so)
        lambda md: list(dispatch.Meter(iter([dpb.MeterReport(claim=[bot])]), metadata=md, timeout=5)),
        # a rogue "relay" announcing its connection as a hosted version's (so as to spend that bot's limits)
        lambda md: dispatch.Relayed(
            dpb.RelayedRequest(bot_name=bot, host="127.0.0.1", port=1, connection="rogue"), metadata=md, timeout=5
        ),
    ]
    for call in attempts:
        for metadata in ((), ((INTERNAL_METADATA, "guess"),), ((INTERNAL_METADATA, ""),), (("x-other", "1"),)):
            with pytest.raises(grpc.RpcError) as info:
                call(metadata)
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, metadata
            assert "internal" in info.value.details()
    outcomes = league.finish()
    assert all(o.record["id"].startswith("league-rogue-dispatch/") for o in outcomes)


def test_dispatch_with_the_secret_is_served(engine: Engine, dispatch: Any) -> None:
    secret = engine.arena.redis.get(Keys(engine.arena.prefix).internal_secret)
    assert secret
    metadata = ((INTERNAL_METADATA, secret.decode()),)
    resp = dispatch.RequestPlay(rogue_turn("nobody-connected"), metadata=metadata, timeout=5)
    assert resp.outcome == dpb.PlayResponse.DISCONNECTED
    resp = dispatch.EndGame(
        dpb.EndGameRequest(bot_name="nobody-connected", game_over=apb.GameOver(game_id="x")), metadata=metadata
    )
    assert not resp.delivered


def test_a_bad_time_control_is_invalid_argument(engine: Engine, dispatch: Any) -> None:
    secret = engine.arena.redis.get(Keys(engine.arena.prefix).internal_secret)
    assert secret
    metadata = ((INTERNAL_METADATA, secret.decode()),)
    for control, says in (
        (dpb.TimeControl(move_time_ms=0), "move time must be positive"),
        (dpb.TimeControl(move_time_ms=500, clock=7), "7"),  # type: ignore[arg-type]
    ):
        req = rogue_turn("nobody-connected")
        req.time_control.CopyFrom(control)
        with pytest.raises(grpc.RpcError) as info:
            dispatch.RequestPlay(req, metadata=metadata, timeout=5)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "bad time control" in info.value.details() and says in info.value.details()
