"""Possible worlds for a Python bot: drawn in-process, or asked of the arena's Rules API.

A world completes what a seat has seen: the hand every other seat holds now and
the hands still to be dealt, drawn as the shuffle deals them given everything
the seat saw (:mod:`engine_service.rules.worlds` says exactly what that means).
A Python bot draws them itself, with no server::

    from bots.sdk import sample_worlds, world_states
    for state in world_states(observation, 16, seed=1):  # DealStates: push plays, read scores
        ...

A bot that wants the arena's answer (the same worlds for the same observation
and seed) asks the Rules API's ``PossibleWorlds`` with :func:`ask_worlds`.
"""

from __future__ import annotations

import grpc

from engine_service.rules import DealState, Observation
from engine_service.rules.worlds import World, WorldSampler, possible_worlds
from engine_service.wire import convert
from tablanette.v1 import rules_pb2 as rpb
from tablanette.v1 import rules_pb2_grpc

__all__ = ["World", "ask_worlds", "sample_worlds", "world_states"]


def sample_worlds(observation: Observation, k: int, seed: int) -> list[World]:
    """``k`` worlds for ``observation``, drawn in-process (same observation and seed, same worlds)."""
    return possible_worlds(observation, k, seed)


def world_states(observation: Observation, k: int, seed: int) -> list[DealState]:
    """``k`` worlds as the engine's deal states, ready to play on (``push``, ``legal_plays``, ``score``)."""
    sampler = WorldSampler(observation)
    return [sampler.state(w) for w in possible_worlds(observation, k, seed)]


def ask_worlds(channel: grpc.Channel, observation: Observation, k: int, seed: int, timeout: float = 5.0) -> list[World]:
    """``k`` worlds from the Rules API on ``channel`` (``grpc.insecure_channel("127.0.0.1:50051")``).

    Sends the observation packed and asks for masks back; raises ``grpc.RpcError``
    as the service refuses (INVALID_ARGUMENT for a bad observation or ``k`` outside 1..256,
    RESOURCE_EXHAUSTED past the per-bot rate).
    """
    request = rpb.PossibleWorldsRequest(
        resolved=convert.rules_to_pb(observation.rules),
        packed=convert.observation_to_packed(observation),
        k=k,
        seed=seed,
        packed_worlds=True,
    )
    response = rules_pb2_grpc.RulesServiceStub(channel).PossibleWorlds(request, timeout=timeout)
    n = observation.rules.players
    return [
        World(
            tuple(w.hand_masks),
            tuple(tuple(w.round_masks[i : i + n]) for i in range(0, len(w.round_masks), n)),
        )
        for w in response.worlds
    ]
