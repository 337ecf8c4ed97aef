"""A league's time control: one value, made from the league and passed whole to whoever plays its matches.

What a turn gives a bot and how its time is counted: the clock (``wall``, or
``cpu``: a hosted bot is charged the CPU time its sandbox uses,
:mod:`engine_service.meters`), the move time, the wall-clock cap of a turn on
the CPU clock, the latency credit (on the wall clock, the most an answer is
waited for beyond the move time, for the bot's measured round trip,
:mod:`engine_service.round_trips`) and each seat's time bank for a match
(:class:`MatchClock`). It travels over the wire as one ``TimeControl`` message
(``dispatch.proto``), never as loose fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from store.league_settings import CLOCKS
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb

if TYPE_CHECKING:
    from engine_service.rules import Rules
    from store.leagues import League

WALL_CAP_TIMES = 3
WALL_CAP_SLACK_MS = 2000
_MAX_MS = 2**31 - 1  # the wire's int32


def wall_cap_ms(move_time_ms: int, given: int = 0) -> int:
    """On the CPU clock, the wall-clock time a turn may take at most: ``given`` if set, else three
    times the move time and at least two seconds more than it (a bot waiting on nothing still ends)."""
    return given or max(WALL_CAP_TIMES * move_time_ms, move_time_ms + WALL_CAP_SLACK_MS)


@dataclass(frozen=True, slots=True)
class TimeControl:
    """How a match's turns are timed; see the module doc. Every field is checked when it is made."""

    move_time_ms: int
    clock: str = "wall"
    wall_cap_ms: int = 0
    """On the ``cpu`` clock, the wall-clock time a turn may take at most (0: :func:`wall_cap_ms`'s default)."""
    latency_credit_ms: int = 0
    time_bank_ms: int = 0

    def __post_init__(self) -> None:
        if self.clock not in CLOCKS:
            raise ValueError(f"unknown clock {self.clock!r}; one of: {', '.join(CLOCKS)}")
        if not 0 < self.move_time_ms <= _MAX_MS:
            raise ValueError(f"move time must be positive (and below 2^31 ms), not {self.move_time_ms} ms")
        for name in ("wall_cap_ms", "latency_credit_ms", "time_bank_ms"):
            value = getattr(self, name)
            if not 0 <= value <= _MAX_MS:
                raise ValueError(f"{name} must be between 0 and 2^31-1, not {value}")

    @classmethod
    def of_league(cls, league: League) -> TimeControl:
        """The time control of ``league``'s matches."""
        return cls(
            league.rules.move_time_ms, league.clock, league.wall_cap_ms, league.latency_credit_ms, league.time_bank_ms
        )

    @classmethod
    def of_rules(cls, rules: Rules) -> TimeControl:
        """The plain time control of ``rules``: its move time on the wall clock, no credit, no bank."""
        return cls(rules.move_time_ms)

    def check(self, rules: Rules) -> TimeControl:
        """This time control, for a match under ``rules``: ValueError if its move time is not theirs."""
        if self.move_time_ms != rules.move_time_ms:
            raise ValueError(f"a time control of {self.move_time_ms} ms a move for rules of {rules.move_time_ms} ms")
        return self

    @property
    def cpu(self) -> bool:
        return self.clock == "cpu"

    @property
    def turn_wall_cap_ms(self) -> int:
        """On the CPU clock, the wall-clock time a turn may take at most; 0 on the wall clock."""
        return wall_cap_ms(self.move_time_ms, self.wall_cap_ms) if self.cpu else 0

    def to_pb(self) -> dpb.TimeControl:
        return dpb.TimeControl(
            clock=apb.CLOCK_CPU if self.cpu else apb.CLOCK_WALL,
            move_time_ms=self.move_time_ms,
            wall_cap_ms=self.wall_cap_ms,
            latency_credit_ms=self.latency_credit_ms,
            time_bank_ms=self.time_bank_ms,
        )

    @classmethod
    def from_pb(cls, msg: dpb.TimeControl) -> TimeControl:
        """The time control a request carries; a bad one raises ValueError."""
        clock = apb.Clock.Name(msg.clock).removeprefix("CLOCK_").lower()
        return cls(msg.move_time_ms, clock, msg.wall_cap_ms, msg.latency_credit_ms, msg.time_bank_ms)


class Charged(Protocol):
    """What a turn's answer says of its time: a ``PlayResponse`` or the driver's in-process ``Answer``."""

    @property
    def outcome(self) -> int: ...

    @property
    def used_ms(self) -> int: ...


class MatchClock:
    """Each seat's time bank in one match: a reserve on top of the move time, as on a chess clock.

    A turn gives its bot the move time plus what is left of its bank
    (``time_left_ms``, with ``time_bank_ms`` saying how much of it is bank). What
    the turn cost the bot beyond the move time (the response's ``used_ms``: wall
    time less any latency credit, or CPU time) comes out of the bank; a missed
    deadline empties it. A bank of 0 (the default) leaves every turn at the move time.
    """

    __slots__ = ("banked", "banks", "move_time_ms")

    def __init__(self, control: TimeControl, seats: int) -> None:
        self.move_time_ms = control.move_time_ms
        self.banks = [control.time_bank_ms] * seats
        self.banked = control.time_bank_ms > 0

    def set_turn(self, turn: apb.Turn, seat: int) -> apb.Turn:
        """``turn`` (the seat's, built at the move time) with the seat's time: the move time and what is
        left of its bank. A match without banks leaves it as built (this runs every move)."""
        if self.banked:
            bank = self.banks[seat]
            turn.time_left_ms = self.move_time_ms + bank
            turn.time_bank_ms = bank
        return turn

    def charge(self, seat: int, resp: Charged) -> None:
        """Take what ``resp``'s turn used beyond the move time out of the seat's bank."""
        bank = self.banks[seat]
        if not bank:
            return
        if resp.outcome == dpb.PlayResponse.PLAYED:
            self.banks[seat] = max(bank - max(resp.used_ms - self.move_time_ms, 0), 0)
        elif resp.outcome == dpb.PlayResponse.TIMEOUT:
            self.banks[seat] = 0
