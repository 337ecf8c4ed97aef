from tablanette.v1 import arena_pb2 as _arena_pb2
from tablanette.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RelayedRequest(_message.Message):
    __slots__ = ("bot_name", "host", "port", "connection", "closed")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_FIELD_NUMBER: _ClassVar[int]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    host: str
    port: int
    connection: str
    closed: bool
    def __init__(self, bot_name: _Optional[str] = ..., host: _Optional[str] = ..., port: _Optional[int] = ..., connection: _Optional[str] = ..., closed: _Optional[bool] = ...) -> None: ...

class RelayedResponse(_message.Message):
    __slots__ = ("known", "keep_ms")
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    KEEP_MS_FIELD_NUMBER: _ClassVar[int]
    known: bool
    keep_ms: int
    def __init__(self, known: _Optional[bool] = ..., keep_ms: _Optional[int] = ...) -> None: ...

class MeterReport(_message.Message):
    __slots__ = ("claim", "release", "ask_id", "used_us", "over", "unknown")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    ASK_ID_FIELD_NUMBER: _ClassVar[int]
    USED_US_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    claim: _containers.RepeatedScalarFieldContainer[str]
    release: _containers.RepeatedScalarFieldContainer[str]
    ask_id: int
    used_us: int
    over: bool
    unknown: bool
    def __init__(self, claim: _Optional[_Iterable[str]] = ..., release: _Optional[_Iterable[str]] = ..., ask_id: _Optional[int] = ..., used_us: _Optional[int] = ..., over: _Optional[bool] = ..., unknown: _Optional[bool] = ...) -> None: ...

class MeterAsk(_message.Message):
    __slots__ = ("ask_id", "bot_name", "budget_us", "stop")
    ASK_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BUDGET_US_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    ask_id: int
    bot_name: str
    budget_us: int
    stop: bool
    def __init__(self, ask_id: _Optional[int] = ..., bot_name: _Optional[str] = ..., budget_us: _Optional[int] = ..., stop: _Optional[bool] = ...) -> None: ...

class PlayMatchRequest(_message.Message):
    __slots__ = ("game", "seed", "bots", "time_control")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    game: _arena_pb2.GameStarted
    seed: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    time_control: TimeControl
    def __init__(self, game: _Optional[_Union[_arena_pb2.GameStarted, _Mapping]] = ..., seed: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("clock", "move_time_ms", "wall_cap_ms", "latency_credit_ms", "time_bank_ms")
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    WALL_CAP_MS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_CREDIT_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    clock: _arena_pb2.Clock
    move_time_ms: int
    wall_cap_ms: int
    latency_credit_ms: int
    time_bank_ms: int
    def __init__(self, clock: _Optional[_Union[_arena_pb2.Clock, str]] = ..., move_time_ms: _Optional[int] = ..., wall_cap_ms: _Optional[int] = ..., latency_credit_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class MatchEvents(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[MatchEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[MatchEvent, _Mapping]]] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("turn_id", "seat", "response", "handoff", "reason", "end")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    HANDOFF_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    seat: int
    response: PlayResponse
    handoff: bool
    reason: str
    end: MatchEnd
    def __init__(self, turn_id: _Optional[int] = ..., seat: _Optional[int] = ..., response: _Optional[_Union[PlayResponse, _Mapping]] = ..., handoff: _Optional[bool] = ..., reason: _Optional[str] = ..., end: _Optional[_Union[MatchEnd, _Mapping]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("record", "conduct", "times_ms")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    CONDUCT_FIELD_NUMBER: _ClassVar[int]
    TIMES_MS_FIELD_NUMBER: _ClassVar[int]
    record: str
    conduct: _containers.RepeatedCompositeFieldContainer[Conduct]
    times_ms: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, record: _Optional[str] = ..., conduct: _Optional[_Iterable[_Union[Conduct, _Mapping]]] = ..., times_ms: _Optional[_Iterable[int]] = ...) -> None: ...

class Conduct(_message.Message):
    __slots__ = ("moves", "timeouts", "illegal", "auto", "forfeit")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_FIELD_NUMBER: _ClassVar[int]
    AUTO_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    moves: int
    timeouts: int
    illegal: int
    auto: int
    forfeit: bool
    def __init__(self, moves: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal: _Optional[int] = ..., auto: _Optional[int] = ..., forfeit: _Optional[bool] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("bot_name", "game", "turn", "grace_ms", "time_control")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    game: _arena_pb2.GameStarted
    turn: _arena_pb2.Turn
    grace_ms: int
    time_control: TimeControl
    def __init__(self, bot_name: _Optional[str] = ..., game: _Optional[_Union[_arena_pb2.GameStarted, _Mapping]] = ..., turn: _Optional[_Union[_arena_pb2.Turn, _Mapping]] = ..., grace_ms: _Optional[int] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("outcome", "play", "rejected", "elapsed_ms", "arena_fault", "cpu_metered", "cpu_us", "used_ms", "credit_ms")
    class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OUTCOME_UNSPECIFIED: _ClassVar[PlayResponse.Outcome]
        PLAYED: _ClassVar[PlayResponse.Outcome]
        TIMEOUT: _ClassVar[PlayResponse.Outcome]
        DISCONNECTED: _ClassVar[PlayResponse.Outcome]
    OUTCOME_UNSPECIFIED: PlayResponse.Outcome
    PLAYED: PlayResponse.Outcome
    TIMEOUT: PlayResponse.Outcome
    DISCONNECTED: PlayResponse.Outcome
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MS_FIELD_NUMBER: _ClassVar[int]
    ARENA_FAULT_FIELD_NUMBER: _ClassVar[int]
    CPU_METERED_FIELD_NUMBER: _ClassVar[int]
    CPU_US_FIELD_NUMBER: _ClassVar[int]
    USED_MS_FIELD_NUMBER: _ClassVar[int]
    CREDIT_MS_FIELD_NUMBER: _ClassVar[int]
    outcome: PlayResponse.Outcome
    play: _game_pb2.Play
    rejected: int
    elapsed_ms: int
    arena_fault: bool
    cpu_metered: bool
    cpu_us: int
    used_ms: int
    credit_ms: int
    def __init__(self, outcome: _Optional[_Union[PlayResponse.Outcome, str]] = ..., play: _Optional[_Union[_game_pb2.Play, _Mapping]] = ..., rejected: _Optional[int] = ..., elapsed_ms: _Optional[int] = ..., arena_fault: _Optional[bool] = ..., cpu_metered: _Optional[bool] = ..., cpu_us: _Optional[int] = ..., used_ms: _Optional[int] = ..., credit_ms: _Optional[int] = ...) -> None: ...

class EndGameRequest(_message.Message):
    __slots__ = ("bot_name", "game_over")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    game_over: _arena_pb2.GameOver
    def __init__(self, bot_name: _Optional[str] = ..., game_over: _Optional[_Union[_arena_pb2.GameOver, _Mapping]] = ...) -> None: ...

class EndGameResponse(_message.Message):
    __slots__ = ("delivered",)
    DELIVERED_FIELD_NUMBER: _ClassVar[int]
    delivered: bool
    def __init__(self, delivered: _Optional[bool] = ...) -> None: ...

class SessionLiveRequest(_message.Message):
    __slots__ = ("bot_name", "session_id")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    session_id: str
    def __init__(self, bot_name: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class SessionLiveResponse(_message.Message):
    __slots__ = ("live",)
    LIVE_FIELD_NUMBER: _ClassVar[int]
    live: bool
    def __init__(self, live: _Optional[bool] = ...) -> None: ...
