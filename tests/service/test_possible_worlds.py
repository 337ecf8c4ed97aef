"""The Rules service's PossibleWorlds call, asked over gRPC on a real engine.

The service draws the same worlds as the engine function in-process (same
observation, same seed), from the named or the packed observation, inline for a
real position and in the worker pool for a big K; bad input is INVALID_ARGUMENT
naming it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from arena_harness import Arena
from google.protobuf.json_format import MessageToDict
from service_kit import Engine

from bots.greedy import GreedyBot
from bots.sdk import ask_worlds, sample_worlds, world_states
from engine_service.rules import Match, Observation, Rules, card_names
from engine_service.rules.worlds import possible_worlds
from engine_service.wire import convert
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb
from tablanette.v1 import rules_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena, "engine-worlds")


@pytest.fixture(scope="module")
def rules(engine: Engine) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
        yield rules_pb2_grpc.RulesServiceStub(channel)


def position(preset: str, players: int, plays: int) -> Observation:
    match = Match(Rules.preset(preset, players=players), seed=f"worlds-{preset}")
    for _ in range(plays):
        match.play(GreedyBot().choose(match.observation(match.turn)))
    return match.observation(match.turn)


def as_names(world: rpb.World) -> tuple[list[list[str]], list[list[list[str]]], list[str]]:
    return (
        [list(h.cards) for h in world.hands],
        [[list(h.cards) for h in r.hands] for r in world.rounds],
        list(world.stock),
    )


def expected(obs: Observation, k: int, seed: int) -> list[tuple[list[list[str]], list[list[list[str]]], list[str]]]:
    return [
        ([card_names(h) for h in w.hands], [[card_names(h) for h in r] for r in w.rounds], card_names(w.stock))
        for w in possible_worlds(obs, k, seed)
    ]


@pytest.mark.parametrize(("preset", "players", "plays"), [("tablic", 2, 9), ("tablic", 4, 3), ("pisti", 3, 30)])
def test_the_service_draws_the_engines_worlds(rules: Any, preset: str, players: int, plays: int) -> None:
    obs = position(preset, players, plays)
    spec = gpb.RulesSpec(preset=preset, players=players)
    resp = rules.PossibleWorlds(
        rpb.PossibleWorldsRequest(rules=spec, observation=convert.observation_to_pb(obs), k=32, seed=11), timeout=10
    )
    assert [as_names(w) for w in resp.worlds] == expected(obs, 32, 11)
    assert len(resp.first_table) == 4
    packed = rules.PossibleWorlds(
        rpb.PossibleWorldsRequest(
            resolved=convert.rules_to_pb(obs.rules), packed=convert.observation_to_packed(obs), k=32, seed=11
        ),
        timeout=10,
    )
    assert packed.worlds == resp.worlds
    named = convert.observation_to_pb(obs)
    ask = rpb.PossibleWorldsRequest(rules=spec, observation=named, k=32, seed=11, packed_worlds=True)
    masks = rules.PossibleWorlds(ask, timeout=10)
    assert [(tuple(w.hand_masks), tuple(w.round_masks), w.stock_mask) for w in masks.worlds] == [
        (w.hands, tuple(h for r in w.rounds for h in r), w.stock) for w in possible_worlds(obs, 32, 11)
    ]


def test_the_sdk_asks_for_the_same_worlds_it_draws(engine: Engine) -> None:
    obs = position("tablic", 4, 10)
    with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
        assert ask_worlds(channel, obs, 24, seed=9) == sample_worlds(obs, 24, seed=9)
    states = world_states(obs, 3, seed=9)
    assert [s.legal_plays() for s in states] == [list(obs.legal_plays)] * 3


NODE_ASK = """
const { rulesClient, possibleWorlds } = require('./worlds.js');
const [address, request] = [process.argv[1], JSON.parse(process.argv[2])];
possibleWorlds(rulesClient(address), request.rules, request.observation, request.k, request.seed)
  .then((worlds) => { process.stdout.write(JSON.stringify(worlds)); process.exit(0); })
  .catch((err) => { process.stderr.write(String(err.details || err)); process.exit(3); });
"""


def test_the_node_bot_asks_for_the_same_worlds(engine: Engine) -> None:
    """bots/node/worlds.js against the real service: the engine's worlds (fails, not skips, without Node.js)."""
    node = shutil.which("node")
    assert node, "Node.js is required (bots/node)"
    obs = position("tablic", 2, 14)
    named = MessageToDict(convert.observation_to_pb(obs), preserving_proto_field_name=True)
    rules_json = MessageToDict(convert.rules_to_pb(obs.rules), preserving_proto_field_name=True)
    ask = {"rules": rules_json, "observation": named, "k": 8, "seed": 5}
    run = subprocess.run(
        [node, "-e", NODE_ASK, f"127.0.0.1:{engine.port}", json.dumps(ask)],
        cwd=ROOT / "bots/node",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    worlds = json.loads(run.stdout)
    assert [(w["hands"], w["rounds"], w["stock"]) for w in worlds] == expected(obs, 8, 5)
    bad = subprocess.run(
        [node, "-e", NODE_ASK, f"127.0.0.1:{engine.port}", json.dumps({**ask, "observation": {**named, "plays": []}})],
        cwd=ROOT / "bots/node",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 3 and "plays" in bad.stderr


def test_a_big_k_is_answered_by_the_pool(rules: Any) -> None:
    obs = position("tablic", 2, 20)
    request = rpb.PossibleWorldsRequest(
        rules=gpb.RulesSpec(preset="tablic"), observation=convert.observation_to_pb(obs), k=256, seed=2
    )
    resp = rules.PossibleWorlds(request, timeout=30)
    assert [as_names(w) for w in resp.worlds] == expected(obs, 256, 2)


def bad_requests() -> list[tuple[str, rpb.PossibleWorldsRequest, str]]:
    obs = position("tablic", 2, 9)
    named = convert.observation_to_pb(obs)
    spec = gpb.RulesSpec(preset="tablic")
    short = gpb.Observation()
    short.CopyFrom(named)
    del short.plays[-1]
    odd = gpb.Observation()
    odd.CopyFrom(named)
    odd.hand[0] = "XX"
    return [
        ("k-zero", rpb.PossibleWorldsRequest(rules=spec, observation=named, k=0), "1 to 256"),
        ("k-big", rpb.PossibleWorldsRequest(rules=spec, observation=named, k=257), "1 to 256"),
        ("no-observation", rpb.PossibleWorldsRequest(rules=spec, k=4), "observation"),
        ("plays-missing", rpb.PossibleWorldsRequest(rules=spec, observation=short, k=4), "plays"),
        ("bad-card", rpb.PossibleWorldsRequest(rules=spec, observation=odd, k=4), "XX"),
        ("bad-preset", rpb.PossibleWorldsRequest(rules=gpb.RulesSpec(preset="nope"), observation=named, k=4), "nope"),
        (
            "wrong-players",
            rpb.PossibleWorldsRequest(rules=gpb.RulesSpec(preset="tablic", players=3), observation=named, k=4),
            "these rules deal 3 rounds",
        ),
    ]


@pytest.mark.parametrize("case", range(7))
def test_bad_input_is_invalid_argument_naming_it(rules: Any, case: int) -> None:
    _, request, named = bad_requests()[case]
    with pytest.raises(grpc.RpcError) as info:
        rules.PossibleWorlds(request, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
    assert named in (info.value.details() or "")
