"""Rules survive the trip through protobuf for every preset, player count and kind of override."""

from __future__ import annotations

import pytest

from engine_service.rules import PRESETS, Rules
from engine_service.wire import convert

OVERRIDES = {"target": 51, "ace_values": [1, 14], "jack": 12, "card_points": {"TD": 5}, "most_suit": {"H": 2}}


@pytest.mark.parametrize(("preset", "players"), [(n, p) for n, spec in PRESETS.items() for p in spec.players])
@pytest.mark.parametrize("overrides", [{}, OVERRIDES], ids=["preset", "overridden"])
def test_rules_round_trip_through_protobuf(preset: str, players: int, overrides: dict[str, object]) -> None:
    rules = Rules.preset(preset, players=players, **overrides)
    assert convert.rules_from_pb(convert.rules_to_pb(rules)) == rules
