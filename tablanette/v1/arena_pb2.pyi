from tablanette.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Clock(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOCK_WALL: _ClassVar[Clock]
    CLOCK_CPU: _ClassVar[Clock]
CLOCK_WALL: Clock
CLOCK_CPU: Clock

class BotMessage(_message.Message):
    __slots__ = ("hello", "play", "keepalive")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    KEEPALIVE_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    play: PlayMove
    keepalive: Keepalive
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., play: _Optional[_Union[PlayMove, _Mapping]] = ..., keepalive: _Optional[_Union[Keepalive, _Mapping]] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("welcome", "game_started", "turn", "play_rejected", "game_over", "keepalive")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    GAME_STARTED_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    PLAY_REJECTED_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    KEEPALIVE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    game_started: GameStarted
    turn: Turn
    play_rejected: PlayRejected
    game_over: GameOver
    keepalive: Keepalive
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., game_started: _Optional[_Union[GameStarted, _Mapping]] = ..., turn: _Optional[_Union[Turn, _Mapping]] = ..., play_rejected: _Optional[_Union[PlayRejected, _Mapping]] = ..., game_over: _Optional[_Union[GameOver, _Mapping]] = ..., keepalive: _Optional[_Union[Keepalive, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "bot_name", "version", "max_games", "features")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_GAMES_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    token: str
    bot_name: str
    version: str
    max_games: int
    features: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, token: _Optional[str] = ..., bot_name: _Optional[str] = ..., version: _Optional[str] = ..., max_games: _Optional[int] = ..., features: _Optional[_Iterable[str]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("session_id", "bot_name", "server_version", "keepalive_ms", "grace_ms", "features")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    KEEPALIVE_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    bot_name: str
    server_version: str
    keepalive_ms: int
    grace_ms: int
    features: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., server_version: _Optional[str] = ..., keepalive_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ..., features: _Optional[_Iterable[str]] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("game_id", "seat", "players", "rules", "teams")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TEAMS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    players: _containers.RepeatedScalarFieldContainer[str]
    rules: _game_pb2.Rules
    teams: _containers.RepeatedCompositeFieldContainer[Team]
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[_game_pb2.Rules, _Mapping]] = ..., teams: _Optional[_Iterable[_Union[Team, _Mapping]]] = ...) -> None: ...

class Team(_message.Message):
    __slots__ = ("seats",)
    SEATS_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seats: _Optional[_Iterable[int]] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ("game_id", "turn_id", "observation", "legal_plays", "deadline_unix_ms", "time_left_ms", "clock", "packed", "legal_cards", "legal_captured", "time_bank_ms", "latency_credit_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_PLAYS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    PACKED_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CAPTURED_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_CREDIT_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    turn_id: int
    observation: _game_pb2.Observation
    legal_plays: _containers.RepeatedCompositeFieldContainer[_game_pb2.Play]
    deadline_unix_ms: int
    time_left_ms: int
    clock: Clock
    packed: _game_pb2.PackedObservation
    legal_cards: _containers.RepeatedScalarFieldContainer[int]
    legal_captured: _containers.RepeatedScalarFieldContainer[int]
    time_bank_ms: int
    latency_credit_ms: int
    def __init__(self, game_id: _Optional[str] = ..., turn_id: _Optional[int] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., legal_plays: _Optional[_Iterable[_Union[_game_pb2.Play, _Mapping]]] = ..., deadline_unix_ms: _Optional[int] = ..., time_left_ms: _Optional[int] = ..., clock: _Optional[_Union[Clock, str]] = ..., packed: _Optional[_Union[_game_pb2.PackedObservation, _Mapping]] = ..., legal_cards: _Optional[_Iterable[int]] = ..., legal_captured: _Optional[_Iterable[int]] = ..., time_bank_ms: _Optional[int] = ..., latency_credit_ms: _Optional[int] = ...) -> None: ...

class PlayMove(_message.Message):
    __slots__ = ("game_id", "turn_id", "index", "play")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    turn_id: int
    index: int
    play: _game_pb2.Play
    def __init__(self, game_id: _Optional[str] = ..., turn_id: _Optional[int] = ..., index: _Optional[int] = ..., play: _Optional[_Union[_game_pb2.Play, _Mapping]] = ...) -> None: ...

class PlayRejected(_message.Message):
    __slots__ = ("game_id", "turn_id", "reason")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    turn_id: int
    reason: str
    def __init__(self, game_id: _Optional[str] = ..., turn_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class GameOver(_message.Message):
    __slots__ = ("game_id", "result", "record_id", "seat")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RECORD_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    result: _game_pb2.MatchResult
    record_id: str
    seat: int
    def __init__(self, game_id: _Optional[str] = ..., result: _Optional[_Union[_game_pb2.MatchResult, _Mapping]] = ..., record_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class Keepalive(_message.Message):
    __slots__ = ("unix_ms", "echo")
    UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ECHO_FIELD_NUMBER: _ClassVar[int]
    unix_ms: int
    echo: int
    def __init__(self, unix_ms: _Optional[int] = ..., echo: _Optional[int] = ...) -> None: ...
