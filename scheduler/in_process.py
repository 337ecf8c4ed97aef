"""Bots in this process as a match driver's transport: a game on one machine, timed as the arena times it.

:class:`InProcessTransport` answers :class:`engine_service.driver.MatchDriver`'s
``ask(seat, turn)`` with the seat's :class:`~bots.base.Bot`: the turn becomes the
bot's observation and clock exactly as the SDK makes them from the wire
(:func:`bots.turns.observation_of`), and the answer is what a replica would
answer (:class:`engine_service.driver.Answer`: a ``PlayResponse``'s fields, its
play left as the rules' own ``Play``, with no wire form to build and read
back). So ``tablanette match`` plays through the arena's one driver, rules and
time control, with no engine service between the bots.

What the arena does, done here:

- **the clock**: an answer that comes after the turn's time (its move time and
  any bank) is a timeout, whatever it says; its time is the move's ``used_ms``;
- **a bot's bug costs a move, not the game**: ``choose`` raising (a JSON-lines
  program that crashed, said nothing or wrote nonsense: :class:`bots.base.BotFault`)
  is answered with the engine's timeout play, as the SDK answers it, and kept
  as a fault with the bot's own reason to say at the end;
- **a bot that never answers** (``threaded`` seats: a program, an author's
  Python class) is waited for until its deadline only, on a thread of its own;
  the game goes on with a timeout, and the seat's next turn waits for that
  thread first (its time keeps running meanwhile).

A built-in bot is asked inline (no thread: its answers come in microseconds, and
a thread hop per move would cost more than the move).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bots.base import Bot, BotFault
from bots.turns import Clock, observation_of, takes_clock, turn_clock
from engine_service.driver import Answer
from engine_service.rules import Observation, Play, Rules
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb

PLAYED, TIMEOUT = dpb.PlayResponse.PLAYED, dpb.PlayResponse.TIMEOUT


@dataclass
class Seat:
    """One seat's bot, and what went wrong with it this match."""

    bot: Bot
    threaded: bool = False
    """Asked on a thread of its own and waited for until the deadline (a bot that may never answer)."""
    faults: list[str] = field(default_factory=list)
    """Why each answer the bot failed to give was replaced by the timeout play (its own words)."""
    quoted: dict[str, list[str]] = field(default_factory=dict)
    """For each reason among ``faults``, what the bot said the first time (:attr:`bots.base.BotFault.quoted`:
    raw, made printable by whoever shows it)."""
    clocked: bool = field(init=False)
    _calls: queue.SimpleQueue[tuple[Callable[[], Play], concurrent.futures.Future[Play]] | None] | None = field(
        default=None, init=False, repr=False
    )
    _pending: concurrent.futures.Future[Play] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.clocked = takes_clock(self.bot)

    def submit(self, call: Callable[[], Play]) -> concurrent.futures.Future[Play]:
        """Run ``call`` on the seat's thread (a daemon: one stuck in a bot never holds up the exit)."""
        if self._calls is None:
            self._calls = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(self._calls,), daemon=True, name=f"seat-{self.bot.name}").start()
        future: concurrent.futures.Future[Play] = concurrent.futures.Future()
        self._calls.put((call, future))
        self._pending = future
        return future

    def close(self) -> None:
        if self._calls is not None:
            self._calls.put(None)
            self._calls = None


async def _until(future: concurrent.futures.Future[Play], deadline: float) -> bool:
    """Whether ``future`` is done by ``deadline`` (monotonic). Its asyncio wrapper's outcome is always taken
    (an exception left unretrieved is logged from a finalizer, at any later moment: CPython 3.11's parser
    fails if that moment falls inside it, "AST constructor recursion depth mismatch")."""
    if future.done():
        return True
    wrapped = asyncio.wrap_future(future)
    wrapped.add_done_callback(lambda f: f.cancelled() or f.exception())
    await asyncio.wait({wrapped}, timeout=max(deadline - time.monotonic(), 0))
    return future.done()


def _serve(calls: queue.SimpleQueue[tuple[Callable[[], Play], concurrent.futures.Future[Play]] | None]) -> None:
    while (item := calls.get()) is not None:
        call, future = item
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(call())
            except BaseException as exc:
                future.set_exception(exc)


class InProcessTransport:
    """The driver's transport to bots in this process; see the module doc. :meth:`close` when done."""

    def __init__(
        self, rules: Rules, seats: Sequence[Seat | None], observe: Callable[[], Observation | None] | None = None
    ) -> None:
        """``seats``: each seat's bot; None for a seat whose bot is not in this process (another transport
        asks it: :class:`scheduler.local_games.Table`)."""
        if len(seats) != rules.players:
            raise ValueError(f"{len(seats)} bots for {rules.players} seats")
        self.rules = rules
        self.seats = list(seats)
        self.observe = observe
        """The driver's view of the seat asked (:attr:`engine_service.driver.MatchDriver.observation`):
        given, the turns come without their wire form (``wire``) and the seat's view is read from it."""
        self.wire = observe is None

    async def ask(self, seat: int, turn: apb.Turn) -> Answer:
        received = time.monotonic()
        s = self.seats[seat]
        if s is None:
            raise ValueError(f"seat {seat}'s bot is not in this process")
        clock = turn_clock(turn, received) if s.clocked else None
        obs = self.observe() if self.observe is not None else None
        if obs is None:
            obs = observation_of(turn, self.rules)
        deadline = received + turn.time_left_ms / 1000
        try:
            if s.threaded:
                play = await self._threaded(s, obs, clock, deadline)
            else:
                play = s.bot.choose(obs, clock=clock) if s.clocked else s.bot.choose(obs)  # type: ignore[call-arg]
        except TimeoutError:
            play = None
        except BotFault as exc:
            s.faults.append(exc.reason)
            if exc.quoted:
                s.quoted.setdefault(exc.reason, exc.quoted)
            play = obs.legal_plays[0]
        except Exception as exc:  # a bug in the bot costs a move, as over the wire (bots.sdk)
            s.faults.append(f"choose raised {type(exc).__name__}: {exc}")
            play = obs.legal_plays[0]
        used_ms = int((time.monotonic() - received) * 1000)
        if play is None or used_ms > turn.time_left_ms:
            return Answer(TIMEOUT, None, used_ms, used_ms)
        return Answer(PLAYED, play, used_ms, used_ms)

    async def _threaded(self, s: Seat, obs: Observation, clock: Clock | None, deadline: float) -> Play:
        """The seat's answer from its own thread, waited for until ``deadline`` (then TimeoutError)."""
        pending = s._pending
        if pending is not None and not await _until(pending, deadline):  # still on an earlier turn
            raise TimeoutError
        bot = s.bot
        future = s.submit((lambda: bot.choose(obs, clock=clock)) if s.clocked else (lambda: bot.choose(obs)))  # type: ignore[call-arg]
        if not await _until(future, deadline):
            raise TimeoutError
        return future.result()

    def close(self) -> None:
        """Let the seats' threads go (a thread still in ``choose`` finishes on its own, unwaited)."""
        for s in self.seats:
            if s is not None:
                s.close()
