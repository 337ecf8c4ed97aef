"""The five presets: each named variant's parameters, the player counts it is played with, what changes with
the count, and where it comes from (docs/rules.md describes each). A preset is only data; :meth:`Rules.preset`
(:mod:`engine_service.rules.rules`) makes rules of it and checks them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cards import RANKS, Card


@dataclass(frozen=True)
class PresetSpec:
    """A preset: its parameters, allowed player counts, per-count changes, source."""

    name: str
    players: tuple[int, ...]
    params: Mapping[str, Any]
    per_players: Mapping[int, Mapping[str, Any]]
    source: str


def _points(spec: Mapping[str, int]) -> tuple[tuple[int, int], ...]:
    """Expand ``{"A": 1, "TD": 3}``: a rank letter alone means every card of that rank."""
    out: dict[int, int] = {}
    for key, pts in spec.items():
        if len(key) == 1:
            for s in range(4):
                out[RANKS.index(key) * 4 + s] = pts
        else:
            out[Card.parse(key)] = pts
    return tuple(sorted(out.items()))


_HONOURS_1939 = _points({"A": 1, "K": 1, "Q": 1, "J": 1, "T": 1, "TD": 2, "2C": 1})

PRESETS: dict[str, PresetSpec] = {
    "tablic": PresetSpec(
        "tablic",
        (2, 3, 4),
        dict(
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
            card_points=_points({"TD": 3, "2C": 2, "A": 1}),
            most_cards=3,
            most_cards_tie="none",
            most_suit=(),
            target=101,
        ),
        {4: {"partnerships": True}},
        "Tablanet / Serbian Tablić with the wild Jack (the default)",
    ),
    "tablanette-1939": PresetSpec(
        "tablanette-1939",
        (2, 3),
        dict(
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
            card_points=_HONOURS_1939,
            most_cards=3,
            most_cards_tie="none",
            most_suit=(),
            target=251,
        ),
        {3: {"hand_size": 4}},
        "Phillips & Westall 1939 Tablanette",
    ),
    "tablic-pagat": PresetSpec(
        "tablic-pagat",
        (2, 4),
        dict(
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
            card_points=_HONOURS_1939,
            most_cards=3,
            most_cards_tie="none",
            most_suit=(),
            target=101,
        ),
        {4: {"partnerships": True}},
        "McLeod's Tablić (numeric Jack, multiple captures)",
    ),
    "tablanette-ro": PresetSpec(
        "tablanette-ro",
        (2, 3, 4),
        dict(
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
            card_points=_points({"TD": 2, "2S": 1, "A": 1}),
            most_cards=3,
            most_cards_tie="none",
            most_suit=((1, 1),),
            target=51,
        ),
        {},
        "Romanian Tablanette (4-card deals)",
    ),
    "pisti": PresetSpec(
        "pisti",
        (2, 3, 4),
        dict(
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
            card_points=_points({"TD": 3, "2C": 2, "A": 1, "J": 1}),
            most_cards=3,
            most_cards_tie="none",
            most_suit=(),
            target=151,
        ),
        {},
        "Turkish Pişti bonus on the Romanian rules",
    ),
}
