"""Bots that only answer: the cheapest client of the bot protocol, for bench/gateway.py.

Each bot opens its stream (grpc.aio, this process's one event loop), says Hello
(asking for the packed form of turns, unless ``--named``) and answers every
Turn at once with a random legal play (an index), without looking at the
observation: what a move costs the engine service with the bot's own work taken
away. Bot names and tokens come as NAME=TOKEN arguments; prints "ready" once
every bot is welcomed, then serves until killed.

With ``--threads`` each bot is built as the Python SDK's threads mode is, with
nothing of the SDK: grpc's blocking API, each turn handed to a pool thread that
answers it, the answer handed to grpc's writer thread through a queue. The
least a Python bot that answers off the thread reading its stream pays for a
move; the SDK's threads mode against it is the SDK's own cost.

Run: ``python bench/raw_bot.py [--named] [--threads] --address 127.0.0.1:PORT NAME=TOKEN ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
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


def threaded_bot(address: str, name: str, token: str, welcomed: threading.Event, features: list[str]) -> None:
    """:func:`bot` on grpc's blocking API, answering each turn from a pool thread (see the module doc)."""
    outbox: queue.Queue[apb.BotMessage | None] = queue.Queue()
    pool = ThreadPoolExecutor(1)

    def answer(turn: apb.Turn) -> None:
        index = random.randrange(len(turn.legal_cards) or len(turn.legal_plays) or 1)
        outbox.put(apb.BotMessage(play=apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, index=index)))

    with grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        hello = apb.Hello(token=token, bot_name=name, version="raw", max_games=4, features=features)
        outbox.put(apb.BotMessage(hello=hello))
        for msg in arena_pb2_grpc.BotGatewayStub(channel).Connect(iter(outbox.get, None)):
            kind = msg.WhichOneof("kind")
            if kind == "welcome":
                welcomed.set()
            elif kind == "turn":
                pool.submit(answer, msg.turn)


def threaded_main(address: str, specs: list[str], features: list[str]) -> None:
    bots = []
    for spec in specs:
        name, _, token = spec.partition("=")
        welcomed = threading.Event()
        thread = threading.Thread(target=threaded_bot, args=(address, name, token, welcomed, features), daemon=True)
        thread.start()
        bots.append((thread, welcomed))
    for _, welcomed in bots:
        welcomed.wait()
    print("ready", flush=True)
    for thread, _ in bots:
        thread.join()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", required=True)
    parser.add_argument("--named", action="store_true", help="do not ask for the packed form: turns come named")
    parser.add_argument("--threads", action="store_true", help="answer from a pool thread, on grpc's blocking API")
    parser.add_argument("bots", nargs="+", help="NAME=TOKEN")
    args = parser.parse_args()
    if args.threads:
        return threaded_main(args.address, args.bots, [] if args.named else ["packed"])
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
