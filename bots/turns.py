"""A turn as its bot sees it: the observation and the clock the SDK gives ``choose``.

The wire's turn (packed, or with named plays) becomes the seat's
:class:`~engine_service.rules.Observation` (:func:`observation_of`) and the time
it gives the bot a :class:`Clock` (:func:`turn_clock`). The gRPC client
(:mod:`bots.sdk`), the in-process transport of ``tablanette match``
(:mod:`scheduler.in_process`) and the JSON-lines bridge (:mod:`programs.bridge`) all make
them here, so a bot sees the same turn however it is asked. Nothing here opens a
connection (no gRPC).
"""

from __future__ import annotations

import inspect
import time

from engine_service.rules import Observation, Rules
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb

from .base import Bot


class Clock:
    """The time left for one turn, counted from when the turn arrived.

    Measured on this machine's monotonic clock from the turn's ``time_left_ms``, so a
    wrong wall clock on either side does not matter. The network's share of the
    deadline (the answer's way back) is not taken off: keep a margin.

    In a league on the CPU clock (``cpu``: the turn's ``clock`` is ``CLOCK_CPU``, a
    hosted bot), the time left is CPU time: counted on this process's CPU clock,
    so time spent waiting for a core is not counted, as the arena does not count it;
    ``cap_ms`` is then the wall-clock time the turn may take at most.

    In a league with a time bank, ``bank`` (seconds) is the part of ``budget`` that
    is this bot's reserve for the rest of the match: what a turn uses beyond
    ``budget - bank`` comes out of it. A bot that means to keep its reserve plans
    on ``budget - bank``. In a league that credits latency, the arena's deadline is
    later than this one by the bot's round trip, so the answer's way back is covered.
    """

    __slots__ = ("bank", "budget", "cpu", "deadline", "wall_deadline")

    def __init__(
        self, time_left_ms: int, received: float | None = None, cpu: bool = False, cap_ms: int = 0, bank_ms: int = 0
    ) -> None:
        start = time.monotonic() if received is None else received
        self.cpu = cpu
        self.budget = max(time_left_ms, 0) / 1000
        self.bank = min(max(bank_ms, 0) / 1000, self.budget)
        self.deadline = (time.process_time() if cpu else start) + self.budget
        self.wall_deadline = start + max(self.budget, cap_ms / 1000 if cpu else 0.0)

    def remaining(self) -> float:
        """Seconds left before this turn's deadline (0 once it has passed)."""
        return max(0.0, self.deadline - (time.process_time() if self.cpu else time.monotonic()))

    def wall_remaining(self) -> float:
        """Wall-clock seconds before the turn ends whatever is done: the deadline on the wall clock, the
        wall-clock cap on the CPU clock (for a bot that waits on another process, as the bridge does)."""
        return max(0.0, self.wall_deadline - time.monotonic())

    def __repr__(self) -> str:
        return f"Clock(remaining={self.remaining():.3f}s)"


def turn_clock(turn: apb.Turn, received: float) -> Clock:
    """The time a turn gives its bot, counted from ``received`` (monotonic): see :class:`Clock`."""
    if turn.clock != apb.CLOCK_CPU:
        return Clock(turn.time_left_ms, received, bank_ms=turn.time_bank_ms)
    cap_ms = int(turn.deadline_unix_ms - time.time() * 1000)
    return Clock(turn.time_left_ms, received, cpu=True, cap_ms=cap_ms, bank_ms=turn.time_bank_ms)


def takes_clock(bot: Bot) -> bool:
    """Whether ``bot.choose`` accepts a ``clock`` argument."""
    try:
        return "clock" in inspect.signature(bot.choose).parameters
    except (TypeError, ValueError):
        return False


def observation_of(turn: apb.Turn, rules: Rules) -> Observation:
    """The turn's observation, from whichever form the server sent (packed, or named)."""
    if turn.HasField("packed"):
        return convert.observation_from_packed(turn.packed, rules, turn.legal_cards, turn.legal_captured)
    return convert.observation_from_pb(turn.observation, rules, list(turn.legal_plays))
