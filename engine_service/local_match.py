"""A match played on the replica its bots are connected to: one gRPC hop per move, not two.

When the session registry puts every bot of a match on one replica, the match
runner asks that replica to play it (``Dispatch.PlayMatch``) instead of calling
``RequestPlay`` for every move. The replica runs the same loop the runner would:
the turn built with :class:`engine_service.turns.TurnBuilder`, asked with the
gateway's own :meth:`~engine_service.gateway.Gateway.ask` (``RequestPlay`` in its parts), applied with
:func:`engine_service.turns.apply_response` (which also keeps the seats' time banks), and sends one event per turn,
in batches: whatever happened within :data:`BATCH_WINDOW_S` of a first event goes
in one message (a write per move would cost as much as the move).
The runner applies each event to its own copy of the match, so it stays the
authority on the result.

A match played to its end here is announced here too (each bot's GameOver),
so the runner has nothing left to send. Anything this replica cannot settle
alone is handed back: a bot that is not (or
no longer) connected here, or a turn during which the replica could not reach
its store. The last event is then a handoff naming the turn, and the runner
asks that turn itself, with the grace period, the search for the bot on other
replicas, and the arena-fault rules it applies to every turn. If this replica
dies mid-match, the runner's stream breaks and it goes on the same way from the
last event it received: at most a batch of turns is asked again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from engine_service import convert
from engine_service.rules import Match
from engine_service.time_control import MatchClock, TimeControl
from engine_service.turns import Outcome, SeatConduct, TurnBuilder, apply_response
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb

if TYPE_CHECKING:
    from engine_service.gateway import Gateway

HANDOFF_GRACE_MS = 1
"""Grace a turn asked here gets: a bot that drops is handed back at once (the runner gives it the whole grace)."""
BATCH_WINDOW_S = 0.02
"""How long the turns after a first event may join its batch: the runner's copy lags by about this much."""


async def play_match(gateway: Gateway, req: dpb.PlayMatchRequest) -> AsyncIterator[dpb.MatchEvents]:
    """The events of ``req``'s match, in batches, played here until it is over or a turn is handed back.

    The match is played by a task of its own, so batching never holds up a
    turn; a bad request (a ValueError) is raised once the events before it are out.
    """
    queue: asyncio.Queue[dpb.MatchEvent | None] = asyncio.Queue()

    async def produce() -> None:
        try:
            async for event in _events(gateway, req):
                queue.put_nowait(event)
        finally:
            queue.put_nowait(None)

    producer = asyncio.create_task(produce())
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


async def _events(gateway: Gateway, req: dpb.PlayMatchRequest) -> AsyncIterator[dpb.MatchEvent]:
    rules = convert.rules_from_pb(req.game.rules)
    match = Match(rules, req.seed)
    bots = list(req.bots)
    if len(bots) != rules.players:
        raise ValueError(f"{len(bots)} bots for {rules.players} seats")
    has_control = req.HasField("time_control")
    control = TimeControl.from_pb(req.time_control).check(rules) if has_control else TimeControl.of_rules(rules)
    games = []
    for seat in range(rules.players):
        game = apb.GameStarted()
        game.CopyFrom(req.game)
        game.seat = seat
        games.append(game)
    conduct = [SeatConduct() for _ in bots]
    turns = TurnBuilder(match, req.game.game_id)
    clock = MatchClock(control, rules.players)
    turn_id = 0
    while not match.is_over:
        seat = match.turn
        turn_id += 1
        bot = bots[seat]
        if gateway.local_session(bot) is None:
            yield dpb.MatchEvent(turn_id=turn_id, seat=seat, handoff=True, reason=f"bot {bot!r} is not connected here")
            return
        turn = clock.set_turn(turns.turn(turn_id), seat)
        resp = await gateway.ask(bot, games[seat], turn, HANDOFF_GRACE_MS, control)
        if resp.outcome == Outcome.DISCONNECTED or resp.arena_fault:
            why = "could not reach its store" if resp.arena_fault else f"bot {bot!r} disconnected"
            yield dpb.MatchEvent(turn_id=turn_id, seat=seat, handoff=True, reason=why)
            return
        apply_response(match, seat, resp, conduct[seat], clock)
        yield dpb.MatchEvent(turn_id=turn_id, seat=seat, response=resp)
    assert match.result is not None
    result = convert.result_to_pb(match.result, match.totals)  # played to the end here: tell the bots now
    for seat, bot in enumerate(bots):
        over = apb.GameOver(game_id=req.game.game_id, result=result, record_id=req.game.game_id, seat=seat)
        await gateway.end_game(dpb.EndGameRequest(bot_name=bot, game_over=over))
