"""Rule parameters and the five named presets of docs/rules.md.

A :class:`Rules` is an immutable value: every parameter of docs/rules.md plus the
name of the preset it started from. Build one with :meth:`Rules.preset` and
change any parameter with :meth:`Rules.with_overrides` (values may be Python
values or the strings a command line gives); every change is validated and a bad
one raises :class:`InvalidRulesError` naming the parameter and the value.

>>> r = Rules.preset("tablic", players=4)
>>> r.partnerships, r.hand_size, r.target
(True, 6, 101)
>>> r = Rules.preset("tablic").with_overrides({"target": "51", "ace_values": "[1,14]"})
>>> r.to_record()
{'preset': 'tablic', 'ace_values': [1, 14], 'target': 51}
>>> Rules.from_record(r.to_record(), players=2) == r
True
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import bounded_json
from .cards import ACE, CARDS, JACK, KING, QUEEN, SUITS, card_index
from .errors import InvalidCardError, InvalidRulesError
from .presets import PRESETS

DEFAULT_PRESET = "tablic"

_CHOICES: dict[str, tuple[str, ...]] = {
    "initial_table_jacks": ("keep", "replace"),
    "tabla_points": ("fixed", "card_value", "total_value", "none"),
    "jack_sweep_tabla": ("same", "one", "none"),
    "leftover_to": ("last_capturer", "dealer"),
    "most_cards_tie": ("none", "all_tied"),
    "timeout_action": ("trail_lowest", "forfeit"),
}
_BOOLS = (
    "partnerships",
    "sums",
    "face_sums",
    "multi_capture",
    "rank_priority",
    "capture_optional",
    "last_play_tabla",
)
# Integer parameters and their inclusive ranges.
_INTS: dict[str, tuple[int, int]] = {
    "players": (2, 4),
    "hand_size": (1, 26),
    "table_size": (0, 26),
    "queen": (1, 30),
    "king": (1, 30),
    "pisti_bonus": (0, 1000),
    "most_cards": (0, 1000),
    "target": (1, 100_000),
    "deals": (0, 10_000),
    "move_time_ms": (1, 3_600_000),
}


@dataclass(frozen=True)
class Rules:
    """Every rule parameter of docs/rules.md (see there for their meaning).

    ``deals`` is the one addition: 0 plays to ``target``; a positive number
    plays exactly that many deals (record reason ``deals``).
    """

    preset_name: str = DEFAULT_PRESET
    players: int = 2
    partnerships: bool = False
    hand_size: int = 6
    table_size: int = 4
    initial_table_jacks: str = "replace"
    ace_values: tuple[int, ...] = (1,)
    jack: str | int = "sweep"
    queen: int = 12
    king: int = 13
    sums: bool = True
    face_sums: bool = False
    multi_capture: bool = False
    rank_priority: bool = False
    capture_optional: bool = True
    tabla_points: str = "fixed"
    jack_sweep_tabla: str = "same"
    last_play_tabla: bool = False
    leftover_to: str = "last_capturer"
    pisti_bonus: int = 0
    card_points: tuple[tuple[int, int], ...] = field(default=())
    most_cards: int = 3
    most_cards_tie: str = "none"
    most_suit: tuple[tuple[int, int], ...] = field(default=())
    target: int = 101
    deals: int = 0
    move_time_ms: int = 2000
    timeout_action: str = "trail_lowest"

    # ----------------------------------------------------------------- build

    @classmethod
    def preset(cls, name: str = DEFAULT_PRESET, players: int = 2, **overrides: Any) -> Rules:
        """The named preset for ``players`` seats, with optional overrides."""
        if name not in PRESETS:
            raise InvalidRulesError(f"unknown preset {name!r}; the presets are {', '.join(PRESETS)}")
        spec = PRESETS[name]
        if players not in spec.players:
            counts = " or ".join(str(p) for p in spec.players)
            raise InvalidRulesError(f"preset {name!r} is played by {counts} players, not {players}")
        params = dict(spec.params)
        params.update(spec.per_players.get(players, {}))
        base = cls(preset_name=name, players=players, **params)
        base.validate()
        return base.with_overrides(overrides) if overrides else base

    def with_overrides(self, overrides: Mapping[str, Any]) -> Rules:
        """A copy with some parameters changed; values may be strings (parsed as JSON).

        Changing ``players`` re-resolves the preset for the new count (so
        per-count defaults such as the 1939 three-player hand follow) and keeps
        every other override.
        """
        changes = {name: _coerce(name, raw) for name, raw in overrides.items()}
        players = changes.pop("players", self.players)
        if players != self.players:
            kept = {k: _coerce(k, v) for k, v in self.overrides().items()}
            return Rules.preset(self.preset_name, players=players)._replace_checked({**kept, **changes})
        return self._replace_checked(changes)

    def _replace_checked(self, changes: Mapping[str, Any]) -> Rules:
        rules = dataclasses.replace(self, **changes)
        rules.validate()
        return rules

    def validate(self) -> None:
        """Raise :class:`InvalidRulesError` if the parameters do not make a playable game."""
        if self.partnerships and self.players != 4:
            raise InvalidRulesError("partnerships need players=4")
        left = 52 - self.table_size
        if left % self.players:
            raise InvalidRulesError(
                f"table_size={self.table_size} leaves {left} cards, which {self.players} players cannot split evenly"
            )
        if self.hand_size * self.players > left:
            raise InvalidRulesError(
                f"hand_size={self.hand_size} for {self.players} players needs "
                f"{self.hand_size * self.players} cards but only {left} are left after the table"
            )
        if not self.ace_values or len(set(self.ace_values)) != len(self.ace_values):
            raise InvalidRulesError(f"ace_values must be distinct values, got {list(self.ace_values)}")

    # --------------------------------------------------------------- queries

    @property
    def teams(self) -> tuple[tuple[int, ...], ...]:
        """Seats per side: ((0, 2), (1, 3)) with partnerships, else one seat each."""
        if self.partnerships:
            return ((0, 2), (1, 3))
        return tuple((s,) for s in range(self.players))

    @property
    def team_count(self) -> int:
        return 2 if self.partnerships else self.players

    def team_of(self, seat: int) -> int:
        return seat % 2 if self.partnerships else seat

    @property
    def jack_sweeps(self) -> bool:
        return self.jack == "sweep"

    def rank_values(self, rank: int) -> tuple[int, ...]:
        """The numeric values a card of ``rank`` may take (empty for a sweeping Jack)."""
        if rank == ACE:
            return self.ace_values
        if rank == JACK:
            return () if self.jack == "sweep" else (int(self.jack),)
        if rank == QUEEN:
            return (self.queen,)
        if rank == KING:
            return (self.king,)
        return (rank + 1,)

    def summable(self, rank: int) -> bool:
        """Whether a card of ``rank`` captures by sum and counts inside sums."""
        if not self.sums:
            return False
        if rank in (JACK, QUEEN, KING):
            return self.face_sums and bool(self.rank_values(rank))
        return True

    def points_of(self, card: int) -> int:
        return self._card_points_table[card]

    @property
    def _card_points_table(self) -> tuple[int, ...]:
        table = self.__dict__.get("_cpt")
        if table is None:
            pts = [0] * 52
            for c, p in self.card_points:
                pts[c] = p
            table = tuple(pts)
            object.__setattr__(self, "_cpt", table)
        return table

    # ------------------------------------------------------------ serialise

    def to_dict(self) -> dict[str, Any]:
        """Every parameter in its JSON form (names as in docs/rules.md)."""
        out: dict[str, Any] = {"preset": self.preset_name}
        for f in dataclasses.fields(self):
            if f.name != "preset_name":
                out[f.name] = _to_json(f.name, getattr(self, f.name))
        return out

    def overrides(self) -> dict[str, Any]:
        """Parameters that differ from the preset for the same player count (JSON form)."""
        base = Rules.preset(self.preset_name, players=self.players)
        return {
            f.name: _to_json(f.name, getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in ("preset_name", "players") and getattr(self, f.name) != getattr(base, f.name)
        }

    def to_record(self) -> dict[str, Any]:
        """The record form: the preset name plus every parameter that differs from it."""
        return {"preset": self.preset_name, **self.overrides()}

    @classmethod
    def from_record(cls, data: Mapping[str, Any], players: int) -> Rules:
        """Resolve a record's ``rules`` object for ``players`` seats: preset, then overrides."""
        if not isinstance(data, Mapping):
            raise InvalidRulesError(f"rules must be an object, got {data!r}")
        rest = dict(data)
        name = rest.pop("preset", DEFAULT_PRESET)
        rest.pop("players", None)
        base = cls.preset(name, players=players)
        return base.with_overrides(rest) if rest else base

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.overrides().items())
        return f"Rules.preset({self.preset_name!r}, players={self.players}{', ' if args else ''}{args})"


# ------------------------------------------------------------------ parsing

_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(Rules) if f.name != "preset_name")


def parameter_names() -> tuple[str, ...]:
    """Every rule parameter name, in docs/rules.md order."""
    return _FIELD_NAMES


def parse_override(text: str) -> tuple[str, Any]:
    """Split a ``name=value`` command-line override; the value is parsed later."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise InvalidRulesError(f"rule override {text!r} must look like name=value, e.g. target=51")
    return name, value.strip()


MAX_OVERRIDE_CHARS = 4096
"""The longest rule override value parsed as JSON (every card's points, the longest, is under 700)."""


def _coerce(name: str, raw: Any) -> Any:
    """Turn a raw override (Python value or string) into the field's type, validated."""
    if name not in _FIELD_NAMES:
        raise InvalidRulesError(f"unknown rule parameter {name!r}; known parameters: {', '.join(_FIELD_NAMES)}")
    value = raw
    if isinstance(raw, str) and name not in _CHOICES and name != "jack":
        try:
            value = bounded_json.loads(raw, MAX_OVERRIDE_CHARS)
        except json.JSONDecodeError:
            value = raw
        except bounded_json.JSONLimitError as exc:
            raise InvalidRulesError(f"rule {name}: {exc}") from None
    if name == "jack" and isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
        value = int(raw)
    bad = InvalidRulesError(f"rule {name}={raw!r} is not valid: {_describe(name)}")
    if name in _BOOLS:
        if isinstance(value, str) and value.lower() in ("true", "yes", "on", "false", "no", "off"):
            value = value.lower() in ("true", "yes", "on")
        if not isinstance(value, bool):
            raise bad
        return value
    if name in _INTS:
        lo, hi = _INTS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise bad
        return value
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise bad
        return value
    if name == "jack":
        if value == "sweep" or (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 30):
            return value
        raise bad
    if name == "ace_values":
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if (
            not isinstance(value, (list, tuple))
            or not value
            or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 30 for v in value)
        ):
            raise bad
        return tuple(value)
    if name == "card_points":
        return _coerce_map(value, bad, _card_key)
    if name == "most_suit":
        return _coerce_map(value, bad, _suit_key)
    raise bad  # pragma: no cover - every field is handled above


def _coerce_map(value: Any, bad: InvalidRulesError, key: Any) -> tuple[tuple[int, int], ...]:
    if isinstance(value, tuple):
        value = dict(value)
    if not isinstance(value, Mapping):
        raise bad
    out: dict[int, int] = {}
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, int) or not -1000 <= v <= 1000:
            raise bad
        try:
            idx = key(k)
        except (InvalidCardError, InvalidRulesError) as exc:
            raise InvalidRulesError(f"{bad}: {exc}") from None
        if v:
            out[idx] = v
    return tuple(sorted(out.items()))


def _card_key(k: Any) -> int:
    return int(k) if isinstance(k, int) and not isinstance(k, bool) and 0 <= k < 52 else card_index(k)


def _suit_key(k: Any) -> int:
    if isinstance(k, int) and not isinstance(k, bool) and 0 <= k < 4:
        return k
    if isinstance(k, str) and k.strip().upper() in SUITS and k.strip():
        return SUITS.index(k.strip().upper())
    raise InvalidRulesError(f"{k!r} is not a suit (C D H S)")


def _describe(name: str) -> str:
    if name in _BOOLS:
        return "expected true or false"
    if name in _INTS:
        lo, hi = _INTS[name]
        return f"expected a whole number from {lo} to {hi}"
    if name in _CHOICES:
        return "expected one of " + ", ".join(_CHOICES[name])
    return {
        "jack": "expected 'sweep' or a number",
        "ace_values": "expected a list of values such as [1], [1,11] or [1,14]",
        "card_points": 'expected a map of card to points such as {"TD": 3, "2C": 2}',
        "most_suit": 'expected a map of suit to points such as {"D": 1}',
    }[name]


def _to_json(name: str, value: Any) -> Any:
    if name == "ace_values":
        return list(value)
    if name == "card_points":
        return {str(CARDS[c]): p for c, p in value}
    if name == "most_suit":
        return {SUITS[s]: p for s, p in value}
    return value


# ------------------------------------------------------------------ presets
