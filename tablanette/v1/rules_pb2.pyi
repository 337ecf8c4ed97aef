from tablanette.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListPresetsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Preset(_message.Message):
    __slots__ = ("name", "allowed_players", "source", "rules")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    name: str
    allowed_players: _containers.RepeatedScalarFieldContainer[int]
    source: str
    rules: _game_pb2.Rules
    def __init__(self, name: _Optional[str] = ..., allowed_players: _Optional[_Iterable[int]] = ..., source: _Optional[str] = ..., rules: _Optional[_Union[_game_pb2.Rules, _Mapping]] = ...) -> None: ...

class ListPresetsResponse(_message.Message):
    __slots__ = ("presets",)
    PRESETS_FIELD_NUMBER: _ClassVar[int]
    presets: _containers.RepeatedCompositeFieldContainer[Preset]
    def __init__(self, presets: _Optional[_Iterable[_Union[Preset, _Mapping]]] = ...) -> None: ...

class Position(_message.Message):
    __slots__ = ("table", "hand", "last_play_of_deal")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    LAST_PLAY_OF_DEAL_FIELD_NUMBER: _ClassVar[int]
    table: _containers.RepeatedScalarFieldContainer[str]
    hand: _containers.RepeatedScalarFieldContainer[str]
    last_play_of_deal: bool
    def __init__(self, table: _Optional[_Iterable[str]] = ..., hand: _Optional[_Iterable[str]] = ..., last_play_of_deal: _Optional[bool] = ...) -> None: ...

class LegalPlaysRequest(_message.Message):
    __slots__ = ("rules", "position", "card")
    RULES_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    rules: _game_pb2.RulesSpec
    position: Position
    card: str
    def __init__(self, rules: _Optional[_Union[_game_pb2.RulesSpec, _Mapping]] = ..., position: _Optional[_Union[Position, _Mapping]] = ..., card: _Optional[str] = ...) -> None: ...

class LegalPlaysResponse(_message.Message):
    __slots__ = ("plays", "rules")
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    plays: _containers.RepeatedCompositeFieldContainer[_game_pb2.Play]
    rules: _game_pb2.Rules
    def __init__(self, plays: _Optional[_Iterable[_Union[_game_pb2.Play, _Mapping]]] = ..., rules: _Optional[_Union[_game_pb2.Rules, _Mapping]] = ...) -> None: ...

class ApplyPlayRequest(_message.Message):
    __slots__ = ("rules", "position", "play")
    RULES_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    rules: _game_pb2.RulesSpec
    position: Position
    play: _game_pb2.Play
    def __init__(self, rules: _Optional[_Union[_game_pb2.RulesSpec, _Mapping]] = ..., position: _Optional[_Union[Position, _Mapping]] = ..., play: _Optional[_Union[_game_pb2.Play, _Mapping]] = ...) -> None: ...

class ApplyPlayResponse(_message.Message):
    __slots__ = ("table", "hand", "taken", "bonus", "tabla")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    TABLA_FIELD_NUMBER: _ClassVar[int]
    table: _containers.RepeatedScalarFieldContainer[str]
    hand: _containers.RepeatedScalarFieldContainer[str]
    taken: _containers.RepeatedScalarFieldContainer[str]
    bonus: int
    tabla: bool
    def __init__(self, table: _Optional[_Iterable[str]] = ..., hand: _Optional[_Iterable[str]] = ..., taken: _Optional[_Iterable[str]] = ..., bonus: _Optional[int] = ..., tabla: _Optional[bool] = ...) -> None: ...

class ScoreDealRequest(_message.Message):
    __slots__ = ("rules", "piles", "bonus")
    RULES_FIELD_NUMBER: _ClassVar[int]
    PILES_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    rules: _game_pb2.RulesSpec
    piles: _containers.RepeatedCompositeFieldContainer[_game_pb2.CardList]
    bonus: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, rules: _Optional[_Union[_game_pb2.RulesSpec, _Mapping]] = ..., piles: _Optional[_Iterable[_Union[_game_pb2.CardList, _Mapping]]] = ..., bonus: _Optional[_Iterable[int]] = ...) -> None: ...

class ScoreDealResponse(_message.Message):
    __slots__ = ("score",)
    SCORE_FIELD_NUMBER: _ClassVar[int]
    score: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, score: _Optional[_Iterable[int]] = ...) -> None: ...

class VerifyRecordRequest(_message.Message):
    __slots__ = ("record_json",)
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    record_json: str
    def __init__(self, record_json: _Optional[str] = ...) -> None: ...

class VerifyRecordResponse(_message.Message):
    __slots__ = ("ok", "error", "score")
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    error: str
    score: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, ok: _Optional[bool] = ..., error: _Optional[str] = ..., score: _Optional[_Iterable[int]] = ...) -> None: ...

class PossibleWorldsRequest(_message.Message):
    __slots__ = ("rules", "resolved", "observation", "packed", "k", "seed", "packed_worlds")
    RULES_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    PACKED_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    PACKED_WORLDS_FIELD_NUMBER: _ClassVar[int]
    rules: _game_pb2.RulesSpec
    resolved: _game_pb2.Rules
    observation: _game_pb2.Observation
    packed: _game_pb2.PackedObservation
    k: int
    seed: int
    packed_worlds: bool
    def __init__(self, rules: _Optional[_Union[_game_pb2.RulesSpec, _Mapping]] = ..., resolved: _Optional[_Union[_game_pb2.Rules, _Mapping]] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., packed: _Optional[_Union[_game_pb2.PackedObservation, _Mapping]] = ..., k: _Optional[int] = ..., seed: _Optional[int] = ..., packed_worlds: _Optional[bool] = ...) -> None: ...

class World(_message.Message):
    __slots__ = ("hands", "rounds", "stock", "hand_masks", "round_masks", "stock_mask")
    HANDS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    STOCK_FIELD_NUMBER: _ClassVar[int]
    HAND_MASKS_FIELD_NUMBER: _ClassVar[int]
    ROUND_MASKS_FIELD_NUMBER: _ClassVar[int]
    STOCK_MASK_FIELD_NUMBER: _ClassVar[int]
    hands: _containers.RepeatedCompositeFieldContainer[_game_pb2.CardList]
    rounds: _containers.RepeatedCompositeFieldContainer[WorldRound]
    stock: _containers.RepeatedScalarFieldContainer[str]
    hand_masks: _containers.RepeatedScalarFieldContainer[int]
    round_masks: _containers.RepeatedScalarFieldContainer[int]
    stock_mask: int
    def __init__(self, hands: _Optional[_Iterable[_Union[_game_pb2.CardList, _Mapping]]] = ..., rounds: _Optional[_Iterable[_Union[WorldRound, _Mapping]]] = ..., stock: _Optional[_Iterable[str]] = ..., hand_masks: _Optional[_Iterable[int]] = ..., round_masks: _Optional[_Iterable[int]] = ..., stock_mask: _Optional[int] = ...) -> None: ...

class WorldRound(_message.Message):
    __slots__ = ("hands",)
    HANDS_FIELD_NUMBER: _ClassVar[int]
    hands: _containers.RepeatedCompositeFieldContainer[_game_pb2.CardList]
    def __init__(self, hands: _Optional[_Iterable[_Union[_game_pb2.CardList, _Mapping]]] = ...) -> None: ...

class PossibleWorldsResponse(_message.Message):
    __slots__ = ("worlds", "first_table")
    WORLDS_FIELD_NUMBER: _ClassVar[int]
    FIRST_TABLE_FIELD_NUMBER: _ClassVar[int]
    worlds: _containers.RepeatedCompositeFieldContainer[World]
    first_table: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, worlds: _Optional[_Iterable[_Union[World, _Mapping]]] = ..., first_table: _Optional[_Iterable[str]] = ...) -> None: ...
