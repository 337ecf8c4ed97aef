"""Bots that only answer: the cheapest client of the bot protocol, for bench/gateway.py.

Each bot opens its stream (grpc.aio, this process's one event loop), says Hello
(asking for the packed form of turns, unless ``--named``) and answers every
Turn at once with a random legal play (an index), without looking at the
observation: what a move costs the engine service with the bot's own work taken
away. Bot names and tokens come as NAME=TOKEN arguments; prints "ready" once
every bot is welcomed, then serves until killed.

Run: ``python bench/raw_bot.py --address 127.0.0.1:PORT NAME=TOKEN ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc


async def bot(address: str, name: str, token: str, welcomed: asyncio.Event, features: list[str]) -> None:
    async with grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        call = arena_pb2_grpc.BotGatewayStub(channel).Connect()
        hello = apb.Hello(token=token, bot_name=name, version="raw", max_games=4, features=features)
        await call.write(apb.BotMessage(hello=hello))
        async for msg in call:
            kind = msg.WhichOneof("kind")
            if kind == "welcome":
                welcomed.set()
            elif kind == "turn":
                turn = msg.turn
                index = random.randrange(len(turn.legal_cards) or len(turn.legal_plays) or 1)
                await call.write(
                    apb.BotMessage(play=apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, index=index))
                )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", required=True)
    parser.add_argument("--named", action="store_true", help="do not ask for the packed form: turns come named")
    parser.add_argument("bots", nargs="+", help="NAME=TOKEN")
    args = parser.parse_args()
    events = []
    tasks = []
    for spec in args.bots:
        name, _, token = spec.partition("=")
        events.append(asyncio.Event())
        features = [] if args.named else ["packed"]
        tasks.append(asyncio.create_task(bot(args.address, name, token, events[-1], features)))
    await asyncio.gather(*(e.wait() for e in events))
    print("ready", flush=True)
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main())
