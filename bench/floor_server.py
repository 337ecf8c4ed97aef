"""The least a replica written in Python on grpc.aio can do for a move: the floor for bench/gateway.py.

It speaks the real bot protocol (``tablanette.v1.BotGateway/Connect``, the packed
form) and plays whole matches with the real rules engine and the engine's own
turn builder, but keeps nothing else of the engine service: no tokens or
admission, no session registry, no limits, no clocks or deadlines, no reconnects,
no runner to report to. Each bot's stream has what any server that talks to
several bots at once needs: a task reading it, and a queue its turns wait in.

``/bench.Floor/Play`` (raw bytes: the number of one-deal ``tablic`` matches, in
ASCII) plays that many matches between the first two bots connected and returns
the number of moves.

``/bench.Floor/PlayReported`` (raw bytes: a match's seed) plays one such match
and streams it to the caller as a replica streams a match to its runner
(``Dispatch.PlayMatch``): each answer an event, batched by the engine's own
:func:`~engine_service.local_match.batched`, the record last. It is the floor
of the arena's design rather than of a server: a runner that holds the answers
so far can play on from them if the replica dies, which is what lets a replica's
fault cost no bot anything.

Bots are those of bench/raw_bot.py; their tokens are not checked. Prints its
port on stdout, serves until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_service.local_match import batched
from engine_service.rules import Match, Rules, dumps, match_record
from engine_service.turn_builder import TurnBuilder
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc
from tablanette.v1 import dispatch_pb2 as dpb

RULES = Rules.preset("tablic", deals=1)
PLAYERS = ["floor-a", "floor-b"]
"""The labels of the two seats in a reported match's record."""


def reported_game_id(seed: str) -> str:
    return f"floor/{seed}"


class Seat:
    """One bot's stream: the turns waiting to be sent, and the answer awaited."""

    def __init__(self) -> None:
        self.outbox: asyncio.Queue[apb.ServerMessage] = asyncio.Queue()
        self.answer: asyncio.Future[int] | None = None


class Floor(arena_pb2_grpc.BotGatewayServicer):
    def __init__(self) -> None:
        self.seats: list[Seat] = []
        self.played = 0

    async def Connect(
        self, requests: AsyncIterator[apb.BotMessage], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[apb.ServerMessage]:
        it = requests.__aiter__()
        hello = (await it.__anext__()).hello
        seat = Seat()

        async def read() -> None:
            async for msg in it:
                if seat.answer is not None and not seat.answer.done():
                    seat.answer.set_result(msg.play.index)

        reader = asyncio.create_task(read())
        self.seats.append(seat)
        try:
            yield apb.ServerMessage(welcome=apb.Welcome(bot_name=hello.bot_name, features=["packed"]))
            while True:
                yield await seat.outbox.get()
        finally:
            reader.cancel()
            self.seats.remove(seat)

    async def play(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        """Play ``request`` (a number) matches between the first two bots; the moves played."""
        moves = 0
        for _ in range(int(request)):
            self.played += 1
            match = await self._match(f"floor/{self.played}", f"floor-{self.played}")
            moves += sum(len(d.plays) for d in match.deals)
        return str(moves).encode()

    async def play_reported(self, request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[dpb.MatchEvents]:
        """Play one match (``request``: its seed) between the first two bots, streamed as a replica streams a
        match to its runner."""
        seed = request.decode()
        game_id = reported_game_id(seed)
        queue: asyncio.Queue[dpb.MatchEvent | None] = asyncio.Queue()

        def answered(turn_id: int, seat: int, play: apb.Play) -> None:
            response = dpb.PlayResponse(outcome=dpb.PlayResponse.PLAYED, play=play)
            queue.put_nowait(dpb.MatchEvent(turn_id=turn_id, seat=seat, response=response))

        async def play() -> None:
            try:
                match = await self._match(seed, game_id, answered)
                end = dpb.MatchEnd(record=dumps(match_record(match, PLAYERS, game_id)))
                turns = sum(len(d.plays) for d in match.deals)
                queue.put_nowait(dpb.MatchEvent(turn_id=turns + 1, end=end))
            finally:
                queue.put_nowait(None)

        async with contextlib.aclosing(batched(queue, play)) as batches:  # grpc.aio iterates async generators
            async for batch in batches:
                yield batch

    async def _match(
        self, seed: str, game_id: str, answered: Callable[[int, int, apb.Play], None] | None = None
    ) -> Match:
        """One match between the first two bots (``answered``: told of each answer as it is applied)."""
        seats = self.seats[:2]
        loop = asyncio.get_running_loop()
        match = Match(RULES, seed)
        turns = TurnBuilder(match, game_id)
        turn_id = 0
        while not match.is_over:
            turn_id += 1
            at = match.turn
            seat = seats[at]
            msg = apb.ServerMessage()
            msg.turn.CopyFrom(turns.turn(turn_id))
            seat.answer = loop.create_future()
            seat.outbox.put_nowait(msg)
            index = await seat.answer
            play = convert.packed_play(msg.turn.legal_cards[index], msg.turn.legal_captured[index])
            match.play(play)
            if answered is not None:
                answered(turn_id, at, convert.play_to_pb(play))
        return match


async def main() -> None:
    floor = Floor()
    server = grpc.aio.server()
    arena_pb2_grpc.add_BotGatewayServicer_to_server(floor, server)
    play = grpc.unary_unary_rpc_method_handler(floor.play)
    reported = grpc.unary_stream_rpc_method_handler(
        floor.play_reported, response_serializer=dpb.MatchEvents.SerializeToString
    )
    handlers = {"Play": play, "PlayReported": reported}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Floor", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
