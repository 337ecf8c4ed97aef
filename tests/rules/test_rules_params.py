"""Rules: the five presets of docs/rules.md, overrides from strings, validation and the record form."""

from __future__ import annotations

from typing import Any

import pytest
from rules_testkit import ALLOWED_PLAYERS, PRESET_PLAYERS

from engine_service.rules import (
    DEFAULT_PRESET,
    PRESETS,
    Card,
    InvalidRulesError,
    Rules,
    parameter_names,
    parse_override,
)


def card_points(rules: Rules) -> dict[str, int]:
    """The card points of a rule set, by card name."""
    return dict(rules.to_dict()["card_points"])


def each_of(ranks: str, points: int) -> dict[str, int]:
    return {r + s: points for r in ranks for s in "CDHS"}


# The preset table of docs/rules.md, column by column (players=2).
EXPECTED: dict[str, dict[str, Any]] = {
    "tablic": dict(
        hand_size=6,
        table_size=4,
        initial_table_jacks="replace",
        ace_values=(1,),
        jack="sweep",
        queen=12,
        king=13,
        sums=True,
        face_sums=False,
        multi_capture=False,
        rank_priority=False,
        capture_optional=True,
        tabla_points="fixed",
        jack_sweep_tabla="same",
        last_play_tabla=False,
        leftover_to="last_capturer",
        pisti_bonus=0,
        card_points={**each_of("A", 1), "TD": 3, "2C": 2},
        most_cards=3,
        most_cards_tie="none",
        most_suit=(),
        target=101,
    ),
    "tablanette-1939": dict(
        hand_size=6,
        table_size=4,
        initial_table_jacks="replace",
        ace_values=(1, 11),
        jack="sweep",
        queen=13,
        king=14,
        sums=True,
        face_sums=True,
        multi_capture=True,
        rank_priority=False,
        capture_optional=True,
        tabla_points="total_value",
        jack_sweep_tabla="none",
        last_play_tabla=False,
        leftover_to="last_capturer",
        pisti_bonus=0,
        card_points={**each_of("AKQJT", 1), "TD": 2, "2C": 1},
        most_cards=3,
        most_cards_tie="none",
        most_suit=(),
        target=251,
    ),
    "tablic-pagat": dict(
        hand_size=6,
        table_size=4,
        initial_table_jacks="keep",
        ace_values=(1, 11),
        jack=12,
        queen=13,
        king=14,
        sums=True,
        face_sums=True,
        multi_capture=True,
        rank_priority=False,
        capture_optional=True,
        tabla_points="fixed",
        jack_sweep_tabla="same",
        last_play_tabla=False,
        leftover_to="last_capturer",
        pisti_bonus=0,
        card_points={**each_of("AKQJT", 1), "TD": 2, "2C": 1},
        most_cards=3,
        most_cards_tie="none",
        most_suit=(),
        target=101,
    ),
    "tablanette-ro": dict(
        hand_size=4,
        table_size=4,
        initial_table_jacks="keep",
        ace_values=(1,),
        jack="sweep",
        queen=12,
        king=13,
        sums=True,
        face_sums=True,
        multi_capture=False,
        rank_priority=True,
        capture_optional=False,
        tabla_points="fixed",
        jack_sweep_tabla="same",
        last_play_tabla=False,
        leftover_to="last_capturer",
        pisti_bonus=0,
        card_points={**each_of("A", 1), "TD": 2, "2S": 1},
        most_cards=3,
        most_cards_tie="none",
        most_suit=((1, 1),),
        target=51,
    ),
    "pisti": dict(
        hand_size=4,
        table_size=4,
        initial_table_jacks="keep",
        ace_values=(1,),
        jack="sweep",
        queen=12,
        king=13,
        sums=False,
        face_sums=False,
        multi_capture=False,
        rank_priority=True,
        capture_optional=False,
        tabla_points="none",
        jack_sweep_tabla="none",
        last_play_tabla=False,
        leftover_to="last_capturer",
        pisti_bonus=10,
        card_points={**each_of("AJ", 1), "TD": 3, "2C": 2},
        most_cards=3,
        most_cards_tie="none",
        most_suit=(),
        target=151,
    ),
}


def test_the_five_presets_and_the_default() -> None:
    assert list(PRESETS) == ["tablic", "tablanette-1939", "tablic-pagat", "tablanette-ro", "pisti"]
    assert DEFAULT_PRESET == "tablic"
    assert Rules.preset() == Rules.preset("tablic", players=2)
    assert {name: spec.players for name, spec in PRESETS.items()} == ALLOWED_PLAYERS


@pytest.mark.parametrize("name", list(EXPECTED))
def test_preset_parameters_match_the_rules_table(name: str) -> None:
    rules = Rules.preset(name)
    for param, want in EXPECTED[name].items():
        got = card_points(rules) if param == "card_points" else getattr(rules, param)
        assert got == want, f"{name}.{param}"
    assert rules.players == 2
    assert rules.partnerships is False
    assert rules.deals == 0
    assert rules.preset_name == name


@pytest.mark.parametrize(("name", "players"), PRESET_PLAYERS)
def test_every_preset_resolves_for_each_allowed_player_count(name: str, players: int) -> None:
    rules = Rules.preset(name, players=players)
    rules.validate()
    assert rules.players == players
    assert rules.team_count == len(rules.teams)
    assert sorted(s for team in rules.teams for s in team) == list(range(players))
    assert Rules.from_record(rules.to_record(), players=players) == rules


@pytest.mark.parametrize(
    ("name", "players"),
    [(n, p) for n, allowed in ALLOWED_PLAYERS.items() for p in (1, 2, 3, 4, 5) if p not in allowed],
)
def test_disallowed_player_counts_are_refused_clearly(name: str, players: int) -> None:
    with pytest.raises(InvalidRulesError) as info:
        Rules.preset(name, players=players)
    message = str(info.value)
    assert repr(name) in message
    assert f"not {players}" in message
    for p in ALLOWED_PLAYERS[name]:
        assert str(p) in message


def test_unknown_preset_is_refused_with_the_list() -> None:
    with pytest.raises(InvalidRulesError, match="unknown preset 'tablut'") as info:
        Rules.preset("tablut")
    for name in PRESETS:
        assert name in str(info.value)


def test_1939_with_three_players_deals_four_cards() -> None:
    assert Rules.preset("tablanette-1939", players=2).hand_size == 6
    assert Rules.preset("tablanette-1939", players=3).hand_size == 4
    # Changing the player count re-resolves the per-count default.
    assert Rules.preset("tablanette-1939").with_overrides({"players": 3}).hand_size == 4


@pytest.mark.parametrize("name", ["tablic", "tablic-pagat"])
def test_four_player_tablic_defaults_to_partnerships(name: str) -> None:
    rules = Rules.preset(name, players=4)
    assert rules.partnerships is True
    assert rules.teams == ((0, 2), (1, 3))
    assert rules.team_count == 2
    assert [rules.team_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert rules.to_record() == {"preset": name}


@pytest.mark.parametrize("name", ["tablanette-ro", "pisti"])
def test_four_player_romanian_rules_play_each_for_themselves(name: str) -> None:
    rules = Rules.preset(name, players=4)
    assert rules.partnerships is False
    assert rules.teams == ((0,), (1,), (2,), (3,))
    partners = Rules.preset(name, players=4, partnerships=True)
    assert partners.teams == ((0, 2), (1, 3))


def test_partnerships_need_four_players() -> None:
    with pytest.raises(InvalidRulesError, match="partnerships need players=4"):
        Rules.preset("tablic", players=2, partnerships=True)


@pytest.mark.parametrize(
    ("text", "param", "value"),
    [
        ("target=51", "target", 51),
        ("ace_values=[1,14]", "ace_values", (1, 14)),
        ("ace_values=[1, 11]", "ace_values", (1, 11)),
        ("jack=12", "jack", 12),
        ("jack=sweep", "jack", "sweep"),
        ("queen=13", "queen", 13),
        ("multi_capture=true", "multi_capture", True),
        ("capture_optional=false", "capture_optional", False),
        ("last_play_tabla=yes", "last_play_tabla", True),
        ("tabla_points=card_value", "tabla_points", "card_value"),
        ("jack_sweep_tabla=one", "jack_sweep_tabla", "one"),
        ("leftover_to=dealer", "leftover_to", "dealer"),
        ("most_cards_tie=all_tied", "most_cards_tie", "all_tied"),
        ("timeout_action=forfeit", "timeout_action", "forfeit"),
        ("pisti_bonus=10", "pisti_bonus", 10),
        ("deals=3", "deals", 3),
        ('most_suit={"D": 1}', "most_suit", ((1, 1),)),
        ('card_points={"TD":3}', "card_points", ((Card.parse("TD"), 3),)),
        ('card_points={"10d": 2, "2c": 1}', "card_points", ((4, 1), (Card.parse("TD"), 2))),
    ],
)
def test_overrides_from_command_line_strings(text: str, param: str, value: Any) -> None:
    name, raw = parse_override(text)
    assert name == param
    base = Rules.preset("tablic")
    rules = base.with_overrides({name: raw})
    assert getattr(rules, param) == value
    # Only the changed parameter differs from the preset (none if it is the preset's own value).
    assert set(rules.overrides()) == ({param} if getattr(base, param) != value else set())
    assert Rules.from_record(rules.to_record(), players=2) == rules


def test_overrides_accept_python_values_too() -> None:
    rules = Rules.preset("tablic", target=51, ace_values=[1, 14], jack=12, card_points={"TD": 3})
    assert (rules.target, rules.ace_values, rules.jack) == (51, (1, 14), 12)
    assert card_points(rules) == {"TD": 3}
    assert rules.rank_values(0) == (1, 14)
    assert rules.rank_values(10) == (12,)


def test_card_points_override_replaces_the_whole_map() -> None:
    rules = Rules.preset("tablic").with_overrides({"card_points": '{"TD":3}'})
    assert rules.points_of(Card.parse("TD")) == 3
    assert rules.points_of(Card.parse("2C")) == 0
    assert rules.points_of(Card.parse("AS")) == 0


@pytest.mark.parametrize("text", ["target", "=5", "", "  =x"])
def test_malformed_override_text(text: str) -> None:
    with pytest.raises(InvalidRulesError, match="name=value"):
        parse_override(text)


@pytest.mark.parametrize(
    ("param", "raw"),
    [
        ("target", "abc"),
        ("target", "0"),
        ("target", "51.5"),
        ("target", True),
        ("players", "5"),
        ("hand_size", "0"),
        ("ace_values", "[]"),
        ("ace_values", "[1, 0]"),
        ("ace_values", "one"),
        ("ace_values", "[true]"),
        ("jack", "queen"),
        ("jack", "0"),
        ("jack", True),
        ("queen", "-1"),
        ("sums", "maybe"),
        ("sums", 1),
        ("multi_capture", "2"),
        ("tabla_points", "double"),
        ("jack_sweep_tabla", "two"),
        ("leftover_to", "winner"),
        ("most_cards_tie", "split"),
        ("timeout_action", "pass"),
        ("card_points", "[1, 2]"),
        ("card_points", '{"TD": "three"}'),
        ("card_points", '{"TD": true}'),
        ("most_suit", '{"D": 1.5}'),
        ("most_suit", "D"),
        ("move_time_ms", "0"),
    ],
)
def test_bad_values_name_the_parameter_and_value(param: str, raw: Any) -> None:
    with pytest.raises(InvalidRulesError) as info:
        Rules.preset("tablic").with_overrides({param: raw})
    message = str(info.value)
    assert f"rule {param}={raw!r}" in message
    assert "expected" in message


@pytest.mark.parametrize(
    ("param", "raw", "culprit"),
    [("card_points", '{"XD": 3}', "'XD'"), ("most_suit", '{"X": 1}', "'X'")],
)
def test_bad_map_keys_name_the_parameter_and_the_key(param: str, raw: str, culprit: str) -> None:
    with pytest.raises(InvalidRulesError) as info:
        Rules.preset("tablic").with_overrides({param: raw})
    assert param in str(info.value)
    assert culprit in str(info.value)


@pytest.mark.parametrize("bad", ["trget", "Target", "preset_name", "wild_jack"])
def test_unknown_parameter_names_are_refused_by_name(bad: str) -> None:
    with pytest.raises(InvalidRulesError) as info:
        Rules.preset("tablic").with_overrides({bad: "1"})
    assert f"unknown rule parameter {bad!r}" in str(info.value)
    assert "target" in str(info.value)


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"ace_values": "[1,1]"}, "ace_values"),
        ({"table_size": "5"}, "table_size=5"),
        ({"hand_size": "25"}, "hand_size=25"),
    ],
)
def test_unplayable_combinations_are_refused(overrides: dict[str, str], needle: str) -> None:
    with pytest.raises(InvalidRulesError, match=needle):
        Rules.preset("tablic").with_overrides(overrides)


def test_parameter_names_are_those_of_rules_md() -> None:
    assert parameter_names() == (
        "players",
        "partnerships",
        "hand_size",
        "table_size",
        "initial_table_jacks",
        "ace_values",
        "jack",
        "queen",
        "king",
        "sums",
        "face_sums",
        "multi_capture",
        "rank_priority",
        "capture_optional",
        "tabla_points",
        "jack_sweep_tabla",
        "last_play_tabla",
        "leftover_to",
        "pisti_bonus",
        "card_points",
        "most_cards",
        "most_cards_tie",
        "most_suit",
        "target",
        "deals",
        "move_time_ms",
        "timeout_action",
    )


def test_record_form_holds_only_differences_and_round_trips() -> None:
    rules = Rules.preset("tablic").with_overrides({"target": "51", "ace_values": "[1,14]"})
    assert rules.to_record() == {"preset": "tablic", "ace_values": [1, 14], "target": 51}
    assert Rules.from_record(rules.to_record(), players=2) == rules
    assert Rules.preset("pisti").to_record() == {"preset": "pisti"}
    # A record may omit the preset (the default) and may repeat the player count.
    assert Rules.from_record({}, players=3) == Rules.preset("tablic", players=3)
    assert Rules.from_record({"preset": "pisti", "players": 2}, players=4) == Rules.preset("pisti", players=4)


@pytest.mark.parametrize(("name", "players"), PRESET_PLAYERS)
def test_every_parameter_override_round_trips_through_the_record(name: str, players: int) -> None:
    rules = Rules.preset(name, players=players).with_overrides(
        {
            "ace_values": "[1,14]",
            "jack": "11",
            "queen": "13",
            "king": "14",
            "sums": "true",
            "face_sums": "true",
            "multi_capture": "true",
            "rank_priority": "false",
            "capture_optional": "true",
            "tabla_points": "card_value",
            "jack_sweep_tabla": "one",
            "last_play_tabla": "true",
            "leftover_to": "dealer",
            "pisti_bonus": "7",
            "card_points": '{"TD": 5, "AS": -1}',
            "most_cards": "2",
            "most_cards_tie": "all_tied",
            "most_suit": '{"S": 2, "H": 1}',
            "target": "77",
            "deals": "4",
            "move_time_ms": "500",
            "timeout_action": "forfeit",
        }
    )
    record = rules.to_record()
    assert record["preset"] == name
    assert "players" not in record
    again = Rules.from_record(record, players=players)
    assert again == rules
    assert again.to_dict() == rules.to_dict()
    assert repr(again) == repr(rules)


def test_from_record_refuses_a_non_object_and_bad_contents() -> None:
    with pytest.raises(InvalidRulesError, match="rules must be an object"):
        Rules.from_record(["tablic"], players=2)  # type: ignore[arg-type]
    with pytest.raises(InvalidRulesError, match="unknown preset"):
        Rules.from_record({"preset": "nope"}, players=2)
    with pytest.raises(InvalidRulesError, match="target"):
        Rules.from_record({"preset": "tablic", "target": -3}, players=2)


def test_rules_are_immutable_values() -> None:
    a = Rules.preset("tablic", target=51)
    b = Rules.preset("tablic").with_overrides({"target": "51"})
    assert a == b and hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.target = 3  # type: ignore[misc]
    assert Rules.preset("tablic").target == 101


def test_values_and_summability_per_preset() -> None:
    tablic = Rules.preset("tablic")
    assert [tablic.rank_values(r) for r in range(13)] == [(1,), *[(v,) for v in range(2, 11)], (), (12,), (13,)]
    assert [tablic.summable(r) for r in range(13)] == [True] * 10 + [False] * 3
    pagat = Rules.preset("tablic-pagat")
    assert pagat.rank_values(0) == (1, 11)
    assert [pagat.rank_values(r) for r in (10, 11, 12)] == [(12,), (13,), (14,)]
    assert all(pagat.summable(r) for r in range(13))
    pisti = Rules.preset("pisti")
    assert not any(pisti.summable(r) for r in range(13))
