"""The least a replica written in Python on grpc.aio can do for a move: the floor for bench/gateway.py.

It speaks the real bot protocol (``tablanette.v1.BotGateway/Connect``, the packed
form) and plays whole matches with the real rules engine and the engine's own
turn builder, but keeps nothing else of the engine service: no tokens or
admission, no session registry, no limits, no clocks or deadlines, no reconnects,
no runner to report to. Each bot's stream has what any server that talks to
several bots at once needs: a task reading it, and a queue its turns wait in.

``/bench.Floor/Play`` (raw bytes: the number of one-deal ``tablic`` matches, in
ASCII) plays that many matches between the first two bots connected and returns
the number of moves. Bots are those of bench/raw_bot.py; their tokens are not
checked. Prints its port on stdout, serves until killed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_service import convert
from engine_service.rules import Match, Rules
from engine_service.turn_builder import TurnBuilder
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc

RULES = Rules.preset("tablic", deals=1)
PLAY = "/bench.Floor/Play"


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
        seats = self.seats[:2]
        loop = asyncio.get_running_loop()
        moves = 0
        for _ in range(int(request)):
            self.played += 1
            match = Match(RULES, f"floor/{self.played}")
            turns = TurnBuilder(match, f"floor-{self.played}")
            turn_id = 0
            while not match.is_over:
                turn_id += 1
                seat = seats[match.turn]
                msg = apb.ServerMessage()
                msg.turn.CopyFrom(turns.turn(turn_id))
                seat.answer = loop.create_future()
                seat.outbox.put_nowait(msg)
                index = await seat.answer
                match.play(convert.packed_play(msg.turn.legal_cards[index], msg.turn.legal_captured[index]))
                moves += 1
        return str(moves).encode()


async def main() -> None:
    floor = Floor()
    server = grpc.aio.server()
    arena_pb2_grpc.add_BotGatewayServicer_to_server(floor, server)
    play = grpc.unary_unary_rpc_method_handler(floor.play)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Floor", {"Play": play}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
