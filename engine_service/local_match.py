"""A match played on the replica its bots are connected to: one gRPC hop per move, not two.

When the session registry puts every bot of a match on one replica, the match
runner asks that replica to play it (``Dispatch.PlayMatch``) instead of calling
``RequestPlay`` for every move. The replica plays it with the one
:class:`~engine_service.driver.MatchDriver`, whose transport here is the
gateway's own :meth:`~engine_service.gateway.Gateway.ask` (``RequestPlay`` in its
parts), and sends each answer as an event, in batches: whatever happened within
:data:`BATCH_WINDOW_S` of a first event goes in one message (a write per move
would cost as much as the move). The runner's own driver follows the answers (each
applied once there); a match played to its end here ends with a :class:`MatchEnd`
event (the record, each seat's conduct, the move times), whose record the runner
checks against the match its driver made of the same answers, and is announced
here too (each bot's GameOver).

Anything this replica cannot settle alone is handed back: a bot that is not (or
no longer) connected here, or a turn during which the replica could not reach
its store. The last event is then a handoff naming the turn, and the runner's
driver plays on from the answers so far, asking each turn with the grace period,
the search for the bot on other replicas, and the arena-fault rules. If this
replica dies mid-match, the runner's stream breaks and it plays on the same way
from the last event it received: at most a batch of turns is asked again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from engine_service.driver import Handoff, MatchDriver
from engine_service.rules import Match, dumps
from engine_service.time_control import TimeControl
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb

if TYPE_CHECKING:
    from engine_service.gateway import Gateway

HANDOFF_GRACE_MS = 1
"""Grace a turn asked here gets: a bot that drops is handed back at once (the runner gives it the whole grace)."""
BATCH_WINDOW_S = 0.02
"""How long the turns after a first event may join its batch: the runner learns of them about this much later."""


def play_streamed(gateway: Gateway, req: dpb.PlayMatchRequest) -> AsyncIterator[dpb.MatchEvents]:
    """The events of ``req``'s match, in batches, played here until it is over or a turn is handed back.

    The match is played by a task of its own, so batching never holds up a
    turn; a bad request (a ValueError) is raised once the events before it are out.
    """
    queue: asyncio.Queue[dpb.MatchEvent | None] = asyncio.Queue()
    return batched(queue, lambda: _play(gateway, req, queue))


async def batched(
    queue: asyncio.Queue[dpb.MatchEvent | None], play: Callable[[], Coroutine[Any, Any, None]]
) -> AsyncIterator[dpb.MatchEvents]:
    """The events a task running ``play()`` puts in ``queue`` (a None after its last), in batches: a first
    event and whatever follows within :data:`BATCH_WINDOW_S`; the task's error, if any, once its events are
    out. The task starts with the first read and is cancelled if the reader stops early."""
    producer = asyncio.create_task(play())
    try:
        over = False
        while not over and (first := await queue.get()) is not None:
            batch = dpb.MatchEvents(events=[first])
            await asyncio.wait({producer}, timeout=BATCH_WINDOW_S)  # the last batch goes as soon as the match ends
            while not queue.empty():
                event = queue.get_nowait()
                if event is None:
                    over = True
                    break
                batch.events.append(event)
            yield batch
        await producer
    finally:
        producer.cancel()


class LocalTransport:
    """The driver's transport on the replica holding every bot: this gateway, handing back what it cannot settle."""

    def __init__(self, gateway: Gateway, bots: list[str], game: apb.GameStarted, control: TimeControl) -> None:
        self.gateway, self.bots, self.control = gateway, bots, control
        self.games = []
        for seat in range(len(bots)):
            seated = apb.GameStarted()
            seated.CopyFrom(game)
            seated.seat = seat
            self.games.append(seated)

    async def ask(self, seat: int, turn: apb.Turn) -> dpb.PlayResponse:
        bot = self.bots[seat]
        if self.gateway.local_session(bot) is None:
            raise Handoff(f"bot {bot!r} is not connected here")
        resp = await self.gateway.ask(bot, self.games[seat], turn, HANDOFF_GRACE_MS, self.control)
        if resp.arena_fault:
            raise Handoff("could not reach its store")
        if resp.outcome == dpb.PlayResponse.DISCONNECTED:
            raise Handoff(f"bot {bot!r} disconnected")
        return resp


async def _play(gateway: Gateway, req: dpb.PlayMatchRequest, queue: asyncio.Queue[dpb.MatchEvent | None]) -> None:
    try:
        rules = convert.rules_from_pb(req.game.rules)
        bots = list(req.bots)
        if len(bots) != rules.players:
            raise ValueError(f"{len(bots)} bots for {rules.players} seats")
        has_control = req.HasField("time_control")
        control = TimeControl.from_pb(req.time_control) if has_control else TimeControl.of_rules(rules)
        driver = MatchDriver(rules, req.seed, req.game.game_id, control)

        def answered(turn_id: int, seat: int, resp: dpb.PlayResponse) -> None:
            queue.put_nowait(dpb.MatchEvent(turn_id=turn_id, seat=seat, response=resp))

        try:
            await driver.play(LocalTransport(gateway, bots, req.game, control), answered)
        except Handoff as handoff:
            event = dpb.MatchEvent(turn_id=driver.turn_id + 1, seat=driver.match.turn, handoff=True)
            event.reason = str(handoff)
            queue.put_nowait(event)
            return
        queue.put_nowait(dpb.MatchEvent(turn_id=driver.turn_id + 1, end=_end(driver, list(req.game.players))))
        await announce(gateway, driver.match, driver.game_id, list(enumerate(bots)))
    finally:
        queue.put_nowait(None)


def _end(driver: MatchDriver, players: list[str]) -> dpb.MatchEnd:
    return dpb.MatchEnd(
        record=dumps(driver.record(players)),  # as the runner writes it: one string to compare
        conduct=[dpb.Conduct(**asdict(c)) for c in driver.conduct],
        times_ms=driver.times,
    )


async def announce(gateway: Gateway, match: Match, game_id: str, seats: Sequence[tuple[int, str]]) -> None:
    """A match played to its end on this gateway: tell each ``(seat, bot)`` now (a bot gone by now misses it:
    the record is what counts)."""
    assert match.result is not None
    result = convert.result_to_pb(match.result, match.totals)
    for seat, bot in seats:
        over = apb.GameOver(game_id=game_id, result=result, record_id=game_id, seat=seat)
        await gateway.end_game(dpb.EndGameRequest(bot_name=bot, game_over=over))
