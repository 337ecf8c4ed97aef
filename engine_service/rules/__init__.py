"""The pure Tablanette rules engine: no I/O, no services, deterministic.

Everything a bot, a match runner or a verifier needs::

    >>> from engine_service.rules import Rules, Match, Card, Play
    >>> rules = Rules.preset("tablic-pagat")
    >>> m = Match(rules, seed="readme")
    >>> len(m.legal_plays()) > 0
    True

Cards are ``int`` numbers (``rank * 4 + suit``) with canonical names; card sets
are bitmasks. docs/rules.md explains every parameter and docs/records.md the
record format.
"""

from .captures import Capture, CaptureFinder
from .cards import CARDS, FULL_DECK, Card, card_names, cards_of, format_cards, iter_mask, mask_of, parse_cards
from .deal import DealState, PlayRecord, finder_for, plays_for_card, score_piles, sweep_bonus
from .errors import (
    GameOverError,
    IllegalPlayError,
    IllegalPositionError,
    InvalidCardError,
    InvalidRulesError,
    LuckError,
    RecordError,
    TablanetteError,
    TooManyPlaysError,
)
from .finished import FinishedMatch, finish
from .luck import DEFAULT_SAMPLES, SCALE, LuckEvent, MatchLuck, luck_of_match, luck_of_record, margins
from .match import FinishedDeal, Match, MatchResult
from .observation import Observation
from .play import Play
from .presets import PRESETS
from .record import dumps, loads, match_record, read_records, verify_record, write_records
from .record_schema import FORMAT, DealEntry, GameRecord, Leftover, PlayEntry, ResultEntry, parse_record
from .rules import DEFAULT_PRESET, Rules, parameter_names, parse_override
from .shuffle import DealLayout, deal_layout, layout_of_deck, round_sizes, shuffled_deck
from .value import check_position, position_value

__all__ = [
    "CARDS",
    "DEFAULT_PRESET",
    "DEFAULT_SAMPLES",
    "FORMAT",
    "FULL_DECK",
    "PRESETS",
    "SCALE",
    "Capture",
    "CaptureFinder",
    "Card",
    "DealEntry",
    "DealLayout",
    "DealState",
    "FinishedDeal",
    "FinishedMatch",
    "GameOverError",
    "GameRecord",
    "IllegalPlayError",
    "IllegalPositionError",
    "InvalidCardError",
    "InvalidRulesError",
    "Leftover",
    "LuckError",
    "LuckEvent",
    "Match",
    "MatchLuck",
    "MatchResult",
    "Observation",
    "Play",
    "PlayEntry",
    "PlayRecord",
    "RecordError",
    "ResultEntry",
    "Rules",
    "TablanetteError",
    "TooManyPlaysError",
    "card_names",
    "cards_of",
    "check_position",
    "deal_layout",
    "dumps",
    "finder_for",
    "finish",
    "format_cards",
    "iter_mask",
    "layout_of_deck",
    "loads",
    "luck_of_match",
    "luck_of_record",
    "margins",
    "mask_of",
    "match_record",
    "parameter_names",
    "parse_cards",
    "parse_override",
    "parse_record",
    "plays_for_card",
    "position_value",
    "read_records",
    "round_sizes",
    "score_piles",
    "shuffled_deck",
    "sweep_bonus",
    "verify_record",
    "write_records",
]
