"""One match, played by one driver: the turn loop, written once.

A :class:`MatchDriver` holds the match (the pure rules engine) and its time
control (:class:`engine_service.time_control.MatchClock`, the seats' banks); it
builds each turn, asks it through a :class:`Transport` (``ask(seat, turn) ->
answer``), applies the answer (:func:`apply_answer`: timeouts, illegal answers
and forfeits), and gives the record, each seat's conduct and each play's move
time. It knows nothing of gRPC, Celery or Redis; its transports do:

- a replica playing a match whose bots are all connected to it
  (:mod:`engine_service.local_match`) asks its own gateway;
- the match runner (:mod:`worker.match_runner`) asks whichever replica holds
  the bot (``Dispatch.RequestPlay``);
- ``tablanette match`` asks bots in its own process
  (:class:`scheduler.in_process.InProcessTransport`, answering with an :class:`Answer`)
  and, for gRPC programs, its local engine's gateway
  (:class:`scheduler.local_games.Table`).

A match is played by one driver at a time. A transport that cannot settle a turn
raises :class:`Handoff`: the driver stops before that turn, and a new driver
resumes the match from the answers given so far (they are the match, given the
seed), so a replica that dies mid-match costs no bot anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from engine_service.rules import (
    FinishedMatch,
    GameRecord,
    IllegalPlayError,
    Match,
    Observation,
    Play,
    Rules,
    finish,
    match_record,
)
from engine_service.time_control import MatchClock, TimeControl
from engine_service.turn_builder import TurnBuilder
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb


@dataclass(slots=True)
class Answer:
    """A seat's answer from a bot in this process, with no wire form: a ``PlayResponse``'s fields and
    meanings, its play the rules' own :class:`~engine_service.rules.Play` (for ``PLAYED``). Building the
    protobuf and reading it back would cost a bot in this process more than many of its moves."""

    outcome: int
    play: Play | None = None
    used_ms: int = 0
    elapsed_ms: int = 0
    rejected: int = 0


Response = dpb.PlayResponse | Answer
"""What a transport answers a turn with: from the wire, or from a bot in this process."""
Answered = Callable[[int, int, dpb.PlayResponse], None]
"""Told of each answer a driver applies: ``(turn_id, seat, response)`` (a transport over the wire's)."""
R = TypeVar("R", bound=Response)
R_co = TypeVar("R_co", bound=Response, covariant=True)


class Handoff(Exception):
    """A transport cannot settle this turn here (the bot is not connected here, or the store failed)."""


class Transport(Protocol[R_co]):
    """How a driver reaches the bot at a seat.

    A transport to bots in this process may say it needs no wire form (an attribute
    ``wire`` that is false): its turns then carry only their id and time, and it reads the seat's
    view from :attr:`MatchDriver.observation` (building and reading back the wire form would
    cost more than the move).
    """

    async def ask(self, seat: int, turn: apb.Turn) -> R_co:
        """The seat's answer to ``turn`` (PLAYED, TIMEOUT or DISCONNECTED); may raise :class:`Handoff`."""
        ...


@dataclass
class SeatConduct:
    """What the arena saw of one seat's behaviour."""

    moves: int = 0
    timeouts: int = 0
    illegal: int = 0
    auto: int = 0
    forfeit: bool = False


def apply_answer(
    match: Match, seat: int, resp: Response, conduct: SeatConduct, clock: MatchClock | None = None
) -> None:
    """Apply what the seat's bot did (and charge its time to ``clock``, the match's time banks).

    A timeout follows ``timeout_action`` (trail the lowest card, or forfeit); a
    bot still gone after the grace period forfeits. A play the engine refuses
    (a transport must never pass one) counts as an illegal answer and is treated
    as a timeout.
    """
    conduct.illegal += resp.rejected
    if clock is not None:
        clock.charge(seat, resp)
    if resp.outcome == dpb.PlayResponse.PLAYED:
        try:
            play = resp.play if isinstance(resp, Answer) else convert.play_from_pb(resp.play)
            if play is None:
                raise ValueError("a PLAYED answer without its play")
            match.play(play)
            conduct.moves += 1
            return
        except (IllegalPlayError, ValueError):
            conduct.illegal += 1
    if resp.outcome == dpb.PlayResponse.DISCONNECTED:
        conduct.forfeit = True
        match.forfeit(seat)
        return
    conduct.timeouts += 1
    if match.rules.timeout_action == "forfeit":
        conduct.forfeit = True
        match.forfeit(seat)
    else:
        conduct.auto += 1
        match.play(match.timeout_play(), auto=True)


class MatchDriver:
    """Plays one match to its end through a transport; see the module doc.

    ``answers``: the ``(seat, response)`` of every turn answered so far, in order
    (a driver resuming a match another driver began); each is applied again here.
    """

    def __init__(
        self,
        rules: Rules,
        seed: str,
        game_id: str,
        control: TimeControl,
        answers: Iterable[tuple[int, dpb.PlayResponse]] = (),
    ) -> None:
        self.game_id = game_id
        self.match = Match(rules, seed)
        self.clock = MatchClock(control.check(rules), rules.players)
        self.conduct = [SeatConduct() for _ in range(rules.players)]
        self.times: list[int] = []
        """Each play's move time in ms (the response's ``used_ms``), in play order."""
        self.turn_id = 0
        """The last turn answered."""
        self._turns = TurnBuilder(self.match, game_id)
        for seat, resp in answers:
            self.resume(seat, resp)

    @property
    def over(self) -> bool:
        return self.match.is_over

    def resume(self, seat: int, resp: dpb.PlayResponse) -> None:
        """Apply the next turn's answer as given before; ValueError if it is not that seat's turn."""
        if self.match.is_over:
            raise ValueError(f"game {self.game_id}: an answer for turn {self.turn_id + 1}, after the match ended")
        if seat != self.match.turn:
            raise ValueError(f"game {self.game_id}: turn {self.turn_id + 1} is seat {self.match.turn}'s, not {seat}'s")
        self._apply(seat, resp)

    async def play(self, transport: Transport[R], answered: Callable[[int, int, R], None] | None = None) -> None:
        """Ask and apply every turn left until the match is over; :class:`Handoff` stops before its turn."""
        match, turns, clock = self.match, self._turns, self.clock
        wire = getattr(transport, "wire", True)
        while not match.is_over:
            seat = match.turn
            resp = await transport.ask(seat, clock.set_turn(turns.turn(self.turn_id + 1, wire), seat))
            self._apply(seat, resp)
            if answered is not None:
                answered(self.turn_id, seat, resp)

    @property
    def observation(self) -> Observation | None:
        """The view of the seat being asked (its legal plays filled in); None before the first turn."""
        return self._turns.observation

    def record(self, players: Sequence[str]) -> GameRecord:
        """The finished match's record, ``players`` its seats' labels."""
        return match_record(self.match, players, self.game_id)

    def finished(self, players: Sequence[str]) -> FinishedMatch:
        """The finished match, made once: record, compact blob, move times and (on asking) luck, from the
        match this driver played or followed (``players``: its seats' labels)."""
        return finish(self.match, players, self.game_id, self.times)

    def _apply(self, seat: int, resp: Response) -> None:
        match = self.match
        deal, before = match.deal, len(match.deal.plays)
        apply_answer(match, seat, resp, self.conduct[seat], self.clock)
        self.turn_id += 1
        if match.deal is not deal or len(deal.plays) > before:
            self.times.append(max(int(resp.used_ms), 0))
