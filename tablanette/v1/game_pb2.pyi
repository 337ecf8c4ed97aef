from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Rules(_message.Message):
    __slots__ = ("preset", "players", "partnerships", "hand_size", "table_size", "initial_table_jacks", "ace_values", "jack", "queen", "king", "sums", "face_sums", "multi_capture", "rank_priority", "capture_optional", "tabla_points", "jack_sweep_tabla", "last_play_tabla", "leftover_to", "pisti_bonus", "card_points", "most_cards", "most_cards_tie", "most_suit", "target", "deals", "move_time_ms", "timeout_action")
    class CardPointsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class MostSuitEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    PRESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PARTNERSHIPS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    TABLE_SIZE_FIELD_NUMBER: _ClassVar[int]
    INITIAL_TABLE_JACKS_FIELD_NUMBER: _ClassVar[int]
    ACE_VALUES_FIELD_NUMBER: _ClassVar[int]
    JACK_FIELD_NUMBER: _ClassVar[int]
    QUEEN_FIELD_NUMBER: _ClassVar[int]
    KING_FIELD_NUMBER: _ClassVar[int]
    SUMS_FIELD_NUMBER: _ClassVar[int]
    FACE_SUMS_FIELD_NUMBER: _ClassVar[int]
    MULTI_CAPTURE_FIELD_NUMBER: _ClassVar[int]
    RANK_PRIORITY_FIELD_NUMBER: _ClassVar[int]
    CAPTURE_OPTIONAL_FIELD_NUMBER: _ClassVar[int]
    TABLA_POINTS_FIELD_NUMBER: _ClassVar[int]
    JACK_SWEEP_TABLA_FIELD_NUMBER: _ClassVar[int]
    LAST_PLAY_TABLA_FIELD_NUMBER: _ClassVar[int]
    LEFTOVER_TO_FIELD_NUMBER: _ClassVar[int]
    PISTI_BONUS_FIELD_NUMBER: _ClassVar[int]
    CARD_POINTS_FIELD_NUMBER: _ClassVar[int]
    MOST_CARDS_FIELD_NUMBER: _ClassVar[int]
    MOST_CARDS_TIE_FIELD_NUMBER: _ClassVar[int]
    MOST_SUIT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_ACTION_FIELD_NUMBER: _ClassVar[int]
    preset: str
    players: int
    partnerships: bool
    hand_size: int
    table_size: int
    initial_table_jacks: str
    ace_values: _containers.RepeatedScalarFieldContainer[int]
    jack: str
    queen: int
    king: int
    sums: bool
    face_sums: bool
    multi_capture: bool
    rank_priority: bool
    capture_optional: bool
    tabla_points: str
    jack_sweep_tabla: str
    last_play_tabla: bool
    leftover_to: str
    pisti_bonus: int
    card_points: _containers.ScalarMap[str, int]
    most_cards: int
    most_cards_tie: str
    most_suit: _containers.ScalarMap[str, int]
    target: int
    deals: int
    move_time_ms: int
    timeout_action: str
    def __init__(self, preset: _Optional[str] = ..., players: _Optional[int] = ..., partnerships: _Optional[bool] = ..., hand_size: _Optional[int] = ..., table_size: _Optional[int] = ..., initial_table_jacks: _Optional[str] = ..., ace_values: _Optional[_Iterable[int]] = ..., jack: _Optional[str] = ..., queen: _Optional[int] = ..., king: _Optional[int] = ..., sums: _Optional[bool] = ..., face_sums: _Optional[bool] = ..., multi_capture: _Optional[bool] = ..., rank_priority: _Optional[bool] = ..., capture_optional: _Optional[bool] = ..., tabla_points: _Optional[str] = ..., jack_sweep_tabla: _Optional[str] = ..., last_play_tabla: _Optional[bool] = ..., leftover_to: _Optional[str] = ..., pisti_bonus: _Optional[int] = ..., card_points: _Optional[_Mapping[str, int]] = ..., most_cards: _Optional[int] = ..., most_cards_tie: _Optional[str] = ..., most_suit: _Optional[_Mapping[str, int]] = ..., target: _Optional[int] = ..., deals: _Optional[int] = ..., move_time_ms: _Optional[int] = ..., timeout_action: _Optional[str] = ...) -> None: ...

class RulesSpec(_message.Message):
    __slots__ = ("preset", "players", "overrides")
    class OverridesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PRESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    preset: str
    players: int
    overrides: _containers.ScalarMap[str, str]
    def __init__(self, preset: _Optional[str] = ..., players: _Optional[int] = ..., overrides: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("card", "captured")
    CARD_FIELD_NUMBER: _ClassVar[int]
    CAPTURED_FIELD_NUMBER: _ClassVar[int]
    card: str
    captured: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, card: _Optional[str] = ..., captured: _Optional[_Iterable[str]] = ...) -> None: ...

class PlayRecord(_message.Message):
    __slots__ = ("seat", "card", "captured", "bonus", "auto")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CAPTURED_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    AUTO_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    captured: _containers.RepeatedScalarFieldContainer[str]
    bonus: int
    auto: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., captured: _Optional[_Iterable[str]] = ..., bonus: _Optional[int] = ..., auto: _Optional[bool] = ...) -> None: ...

class CardList(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cards: _Optional[_Iterable[str]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "team", "turn", "deal_index", "dealer", "round", "rounds_left", "hand", "table", "piles", "hand_counts", "plays", "deal_bonus", "scores", "unseen", "stock_count")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    DEAL_INDEX_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    PILES_FIELD_NUMBER: _ClassVar[int]
    HAND_COUNTS_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    DEAL_BONUS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    UNSEEN_FIELD_NUMBER: _ClassVar[int]
    STOCK_COUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    team: int
    turn: int
    deal_index: int
    dealer: int
    round: int
    rounds_left: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    table: _containers.RepeatedScalarFieldContainer[str]
    piles: _containers.RepeatedCompositeFieldContainer[CardList]
    hand_counts: _containers.RepeatedScalarFieldContainer[int]
    plays: _containers.RepeatedCompositeFieldContainer[PlayRecord]
    deal_bonus: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    unseen: _containers.RepeatedScalarFieldContainer[str]
    stock_count: int
    def __init__(self, seat: _Optional[int] = ..., team: _Optional[int] = ..., turn: _Optional[int] = ..., deal_index: _Optional[int] = ..., dealer: _Optional[int] = ..., round: _Optional[int] = ..., rounds_left: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., table: _Optional[_Iterable[str]] = ..., piles: _Optional[_Iterable[_Union[CardList, _Mapping]]] = ..., hand_counts: _Optional[_Iterable[int]] = ..., plays: _Optional[_Iterable[_Union[PlayRecord, _Mapping]]] = ..., deal_bonus: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., unseen: _Optional[_Iterable[str]] = ..., stock_count: _Optional[int] = ...) -> None: ...

class PackedObservation(_message.Message):
    __slots__ = ("seat", "team", "turn", "deal_index", "dealer", "round", "rounds_left", "hand", "table", "piles", "hand_counts", "play_seats", "play_cards", "play_captured", "play_bonus", "play_auto", "deal_bonus", "scores", "unseen", "stock_count")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    DEAL_INDEX_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    PILES_FIELD_NUMBER: _ClassVar[int]
    HAND_COUNTS_FIELD_NUMBER: _ClassVar[int]
    PLAY_SEATS_FIELD_NUMBER: _ClassVar[int]
    PLAY_CARDS_FIELD_NUMBER: _ClassVar[int]
    PLAY_CAPTURED_FIELD_NUMBER: _ClassVar[int]
    PLAY_BONUS_FIELD_NUMBER: _ClassVar[int]
    PLAY_AUTO_FIELD_NUMBER: _ClassVar[int]
    DEAL_BONUS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    UNSEEN_FIELD_NUMBER: _ClassVar[int]
    STOCK_COUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    team: int
    turn: int
    deal_index: int
    dealer: int
    round: int
    rounds_left: int
    hand: int
    table: int
    piles: _containers.RepeatedScalarFieldContainer[int]
    hand_counts: _containers.RepeatedScalarFieldContainer[int]
    play_seats: _containers.RepeatedScalarFieldContainer[int]
    play_cards: _containers.RepeatedScalarFieldContainer[int]
    play_captured: _containers.RepeatedScalarFieldContainer[int]
    play_bonus: _containers.RepeatedScalarFieldContainer[int]
    play_auto: _containers.RepeatedScalarFieldContainer[bool]
    deal_bonus: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    unseen: int
    stock_count: int
    def __init__(self, seat: _Optional[int] = ..., team: _Optional[int] = ..., turn: _Optional[int] = ..., deal_index: _Optional[int] = ..., dealer: _Optional[int] = ..., round: _Optional[int] = ..., rounds_left: _Optional[int] = ..., hand: _Optional[int] = ..., table: _Optional[int] = ..., piles: _Optional[_Iterable[int]] = ..., hand_counts: _Optional[_Iterable[int]] = ..., play_seats: _Optional[_Iterable[int]] = ..., play_cards: _Optional[_Iterable[int]] = ..., play_captured: _Optional[_Iterable[int]] = ..., play_bonus: _Optional[_Iterable[int]] = ..., play_auto: _Optional[_Iterable[bool]] = ..., deal_bonus: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., unseen: _Optional[int] = ..., stock_count: _Optional[int] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("winner", "reason", "forfeit_seat", "score")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_SEAT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    winner: int
    reason: str
    forfeit_seat: int
    score: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, winner: _Optional[int] = ..., reason: _Optional[str] = ..., forfeit_seat: _Optional[int] = ..., score: _Optional[_Iterable[int]] = ...) -> None: ...
