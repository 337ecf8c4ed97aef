"""The turns a match loop builds incrementally are the turns built from scratch, byte for byte.

:class:`engine_service.turn_builder.TurnBuilder` keeps the deal's packed play columns
between turns instead of packing every play again; this plays whole matches
(every preset at each of its player counts, several deals, auto plays and forfeits left
to the rules engine) and compares each of its turns with the plain conversion
of the seat's observation.
"""

from __future__ import annotations

import random

import pytest

from engine_service.rules import PRESETS, Match, Rules
from engine_service.turn_builder import TurnBuilder, turn_message
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb


def from_scratch(match: Match, game_id: str, turn_id: int) -> apb.Turn:
    obs = match.observation(match.turn)
    return apb.Turn(
        game_id=game_id,
        turn_id=turn_id,
        packed=convert.observation_to_packed(obs),
        legal_cards=[p.card for p in obs.legal_plays],
        legal_captured=[p.mask for p in obs.legal_plays],
        time_left_ms=match.rules.move_time_ms,
    )


@pytest.mark.parametrize(
    ("preset", "players"), [(name, n) for name, spec in sorted(PRESETS.items()) for n in spec.players]
)
def test_every_turn_of_whole_matches_equals_the_turn_built_from_scratch(preset: str, players: int) -> None:
    pick = random.Random(f"{preset}/{players}")
    for seed in range(3):
        match = Match(Rules.preset(preset, players=players, deals=3), f"builder-{seed}")
        builder = TurnBuilder(match, "g")
        turn_id = deals_seen = 0
        while not match.is_over:
            turn_id += 1
            built = builder.turn(turn_id)
            expected = from_scratch(match, "g", turn_id)
            assert built == expected, f"{preset}/{players} seed {seed} turn {turn_id}"
            assert built.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
            deals_seen = max(deals_seen, built.packed.deal_index)
            if pick.random() < 0.05:
                match.play(match.timeout_play(), auto=True)  # an auto play is a column of its own
            else:
                match.play(pick.choice(match.legal_plays()))
        assert deals_seen == 2  # three deals (numbered from 0): the columns started afresh at each


def test_turn_message_is_the_builders_turn() -> None:
    match = Match(Rules.preset("tablic"), "one")
    for turn_id in range(1, 20):
        assert turn_message(match, "g", turn_id) == TurnBuilder(match, "g").turn(turn_id)
        match.play(match.legal_plays()[0])


def test_a_builder_asked_twice_at_one_position_gives_the_same_turn() -> None:
    match = Match(Rules.preset("tablic"), "twice")
    builder = TurnBuilder(match, "g")
    for _ in range(10):
        match.play(match.legal_plays()[-1])
    assert builder.turn(11) == builder.turn(11) == from_scratch(match, "g", 11)


def test_a_builder_asked_only_now_and_then_still_gives_the_whole_deal() -> None:
    """The runner asks a turn itself only now and then (after a replica hands the match back)."""
    match = Match(Rules.preset("tablic", deals=3), "sparse")
    builder = TurnBuilder(match, "g")
    asked = 0
    for deal in range(3):
        for k in range(30):
            if k == 2 * deal + 1:  # an early turn of the first deal, later turns of the next ones
                assert builder.turn(k) == from_scratch(match, "g", k)
                asked += 1
            match.play(match.legal_plays()[0])
        while not match.is_over and match.observation(match.turn).deal_index == deal:
            match.play(match.legal_plays()[0])
    assert asked == 3
