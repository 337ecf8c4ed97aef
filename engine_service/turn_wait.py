"""A turn waiting on a bot: its deadline, its wait, and the bot's answers to it judged.

What the gateway does between sending a bot its turn and answering the runner:

- :func:`turn_window`: how long the turn waits, a pure function of the move time,
  the time control (a CPU-metered bot's wall cap) and the latency credit the bot's
  round trip earned; :func:`turn_message` is the turn as the bot receives it;
- :class:`PendingTurn`: the turn, and the bot's first legal answer to it;
- :func:`answer_close_or_timeout`: the wait, woken by whichever comes first;
- :func:`resolve` and :func:`rejected`: a ``PlayMove`` matched against the legal
  plays, or refused with a reason (never echoing what the arena could not have made).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from engine_service.connection import BotConnection
from engine_service.meters import Watch
from engine_service.rules import Play, TablanetteError
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import game_pb2 as gpb

GAME_ID_CHARS = 128
"""Game ids the arena makes are short; a PlayMove naming a longer one is refused without echoing it."""


def turn_window(move_time_s: float, credit_ms: int = 0, wall_cap_ms: int | None = None) -> float:
    """Seconds a turn waits for its answer: the move time and the bot's latency credit on the wall clock;
    on the CPU clock (``wall_cap_ms`` given: the bot is metered), the control's wall cap, never less than
    the move time (the CPU meter ends the turn sooner when the bot spends its time)."""
    if wall_cap_ms is not None:
        return max(wall_cap_ms / 1000, move_time_s)
    return move_time_s + credit_ms / 1000


def turn_message(
    turn: apb.Turn, packed: bool, wait_s: float, move_time_s: float, cpu: bool, credit_ms: int
) -> apb.ServerMessage:
    """``turn`` as its bot receives it: packed or with named plays, its deadline ``wait_s`` from now, its
    clock, and the latency credit it carries."""
    msg = apb.ServerMessage()  # the turn is written into it: a message put in a field is copied
    msg.turn.CopyFrom(turn if packed else convert.named_turn(turn))
    sending = msg.turn
    sending.deadline_unix_ms = int((time.time() + wait_s) * 1000)
    sending.time_left_ms = int(move_time_s * 1000)
    sending.clock = apb.CLOCK_CPU if cpu else apb.CLOCK_WALL
    if credit_ms:
        sending.latency_credit_ms = credit_ms
    return msg


@dataclass
class PendingTurn:
    """A turn waiting on a bot, with its legal plays in whichever form the runner sent them (packed
    numbers, or named plays). Most bots answer by index, so plays are named or parsed only on demand."""

    turn: apb.Turn
    play: gpb.Play | None = None
    """The bot's legal answer, once it came (the first answer stands)."""
    rejected: int = 0
    arena_fault: bool = False
    """The wait was held up by the replica's own store (Redis): a disconnect is then not the bot's fault."""
    waiter: asyncio.Future[None] | None = None
    """What the turn's wait is parked on (:func:`answer_close_or_timeout`): the answer wakes it directly."""
    answered_at: float = 0.0
    """When the answer arrived (monotonic): the bot's clock stops there, not when the wait wakes."""
    _legal: list[Play] | None = None

    def answered(self, play: gpb.Play) -> None:
        """The bot answered ``play`` (legal): wake the wait at once."""
        self.play = play
        self.answered_at = time.monotonic()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    @property
    def turn_id(self) -> int:
        return self.turn.turn_id

    @property
    def count(self) -> int:
        turn = self.turn
        return len(turn.legal_cards) if turn.HasField("packed") else len(turn.legal_plays)

    def play_at(self, index: int) -> gpb.Play:
        """Legal play ``index`` (in range) as the runner applies it."""
        turn = self.turn
        if turn.HasField("packed"):
            return convert.play_to_pb(convert.packed_play(turn.legal_cards[index], turn.legal_captured[index]))
        return turn.legal_plays[index]

    @property
    def legal(self) -> list[Play]:
        if self._legal is None:
            turn = self.turn
            if turn.HasField("packed"):
                pairs = zip(turn.legal_cards, turn.legal_captured, strict=True)
                self._legal = [convert.packed_play(c, m) for c, m in pairs]
            else:
                self._legal = [convert.play_from_pb(p) for p in turn.legal_plays]
        return self._legal


async def answer_close_or_timeout(
    conn: BotConnection, pending: PendingTurn, timeout: float, watch: Watch | None = None
) -> None:
    """Until the bot answers, its stream closes, ``timeout`` passes, or its CPU meter says its budget
    is spent or the meter went away (``watch``): whichever comes first.

    One future, which the answer sets itself (:meth:`PendingTurn.answered`: no callback in
    between, so no extra turn of the event loop), a timer and the stream's and meter's
    callbacks; no task per turn (this runs for every move).
    """
    loop = asyncio.get_running_loop()
    woken: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not woken.done():
            woken.set_result(None)

    pending.waiter = woken
    if watch is not None:
        watch.over.add_done_callback(wake)
        watch.final.add_done_callback(wake)
    timer = loop.call_later(timeout, wake)
    conn.waiting.add(woken)
    if conn.closed.is_set() or pending.play is not None:
        wake()
    try:
        await woken
    finally:
        timer.cancel()
        conn.waiting.discard(woken)
        pending.waiter = None
        if watch is not None:
            watch.over.remove_done_callback(wake)
            watch.final.remove_done_callback(wake)


def resolve(move: apb.PlayMove, pending: PendingTurn) -> tuple[gpb.Play | None, str]:
    """The legal play a PlayMove names, or ``None`` and the reason it is refused."""
    choice = move.WhichOneof("choice")
    count = pending.count
    if choice == "index":
        if 0 <= move.index < count:
            return pending.play_at(move.index), ""
        return None, f"index {move.index} is out of range: there are {count} legal plays (0..{count - 1})"
    if choice == "play":
        try:
            play = convert.play_from_pb(move.play)
        except TablanetteError as exc:
            return None, f"malformed play: {exc}"
        if play in pending.legal:
            return pending.play_at(pending.legal.index(play)), ""
        return None, f"illegal play {play}: the legal plays are {', '.join(str(p) for p in pending.legal)}"
    return None, "a PlayMove needs an index or a play"


def rejected(move: apb.PlayMove, reason: str) -> apb.ServerMessage:
    """A refusal of a move; its game id is echoed only if it is one the arena could have made."""
    game_id = move.game_id if len(move.game_id) <= GAME_ID_CHARS else ""
    return apb.ServerMessage(play_rejected=apb.PlayRejected(game_id=game_id, turn_id=move.turn_id, reason=reason))
