"""The engine service's own work per move, with gRPC taken away, beside the same loop building turns from scratch.

bench/gateway.py times a move through real processes; on a 2-core machine that
mixes the engine's work with scheduling, and its ratios move by 20% from run to
run. This isolates the part the engine's code decides. One process plays whole
matches (preset ``tablic``, to 101 points) the way a replica plays a match whose
bots it holds (:func:`engine_service.local_match.play_streamed` and the real
:class:`~engine_service.gateway.Gateway`), but each bot's stream is replaced by
a task that takes the turn off the stream's outbox and answers it at once with a
random legal index through the gateway's own ``_on_play``, as the stream reader
does. What is left is everything a replica does for a move except gRPC: build
the turn, send it, match the answer to it, check and apply it, and batch the
event for the runner.

Times are this process's CPU time (``time.process_time``), so that another
process taking the core for a while does not count. Printed, from the same run,
in alternating blocks (medians kept):

- **turns built incrementally**: the code as it is (:class:`engine_service.turn_builder.TurnBuilder`);
- **turns built from scratch**: the same loop with every turn packed from the
  seat's whole observation (:func:`engine_service.turn_builder.turn_message`), as before
  the builder existed;
- **turn building alone**, both ways, over every turn of the same matches.

Run: ``python bench/hot_path.py [--quick] [--json]`` (no services needed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import ArenaSettings  # noqa: E402
from engine_service import driver, local_match  # noqa: E402
from engine_service.connection import BotConnection  # noqa: E402
from engine_service.gateway import Gateway  # noqa: E402
from engine_service.rules import Match, Rules  # noqa: E402
from engine_service.turn_builder import TurnBuilder, game_started, turn_message  # noqa: E402
from store.sessions import SessionEntry  # noqa: E402
from tablanette.v1 import arena_pb2 as apb  # noqa: E402
from tablanette.v1 import dispatch_pb2 as dpb  # noqa: E402

RULES = Rules.preset("tablic")
BOTS = ("a", "b")


class FromScratch:
    """A stand-in for TurnBuilder that packs every turn afresh (the way before it)."""

    def __init__(self, match: Match, game_id: str) -> None:
        self.match, self.game_id = match, game_id

    def turn(self, turn_id: int, wire: bool = True) -> apb.Turn:
        """Every turn on the wire (a replica's transport asks for them so): ``wire`` is always true here."""
        assert wire, "the bench's transport is the gateway's: its turns go on the wire"
        return turn_message(self.match, self.game_id, turn_id)


async def answer(gateway: Gateway, conn: BotConnection, pick: random.Random) -> None:
    """The bot's side of a stream: every turn answered at once with a random legal index."""
    while (msg := await conn.outbox.get()) is not None:
        if msg.WhichOneof("kind") == "turn":
            turn = msg.turn
            move = apb.PlayMove(game_id=turn.game_id, turn_id=turn.turn_id, index=pick.randrange(len(turn.legal_cards)))
            gateway._on_play(conn, move)


async def play(matches: int, seed: int) -> tuple[float, int]:
    """CPU seconds and moves for ``matches`` whole matches played on a gateway whose bots answer in-process."""
    # No store, no admission: no stream ever connects here.
    gateway = Gateway(ArenaSettings(), None, None, None)  # type: ignore[arg-type,call-arg]
    pick = random.Random(seed)
    answering = []
    for name in BOTS:
        conn = BotConnection(SessionEntry(bot=name, replica="here", session_id=name, version="", max_games=1))
        conn.packed = True
        gateway.connections[name] = conn
        answering.append(asyncio.create_task(answer(gateway, conn, pick)))
    moves = 0
    start = time.process_time()
    for i in range(matches):
        game = game_started(RULES, list(BOTS), f"bench/{seed}/{i}")
        req = dpb.PlayMatchRequest(game=game, seed=f"{seed}/{i}", bots=list(BOTS))
        async for batch in local_match.play_streamed(gateway, req):
            moves += sum(1 for event in batch.events if event.HasField("response"))
    elapsed = time.process_time() - start
    for task in answering:
        task.cancel()
    return elapsed, moves


def per_move(builder: type, matches: int, seed: int) -> float:
    """µs per move of :func:`play` with ``builder`` building the turns."""
    real = driver.TurnBuilder
    driver.TurnBuilder = builder  # type: ignore[misc]
    try:
        seconds, moves = asyncio.run(play(matches, seed))
    finally:
        driver.TurnBuilder = real  # type: ignore[misc]
    return seconds / moves * 1e6


def build_only(builder: type, matches: int, seed: int) -> float:
    """CPU µs per turn to build every turn of ``matches`` whole matches (random legal plays), and nothing else."""
    pick = random.Random(seed)
    spent = 0.0
    turns = 0
    for i in range(matches):
        match = Match(RULES, f"{seed}/{i}")
        builds = builder(match, "g")
        turn_id = 0
        while not match.is_over:
            turn_id += 1
            start = time.process_time()
            turn = builds.turn(turn_id)
            spent += time.process_time() - start
            turns += 1
            index = pick.randrange(len(turn.legal_cards))
            match.push(match.legal_plays()[index])
    return spent / turns * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    blocks, matches = (3, 2) if args.quick else (9, 6)

    per_move(TurnBuilder, 1, -1)  # warm-up: imports, caches
    runs: dict[str, list[float]] = {"move": [], "move_scratch": [], "build": [], "build_scratch": []}
    for block in range(blocks):
        order = [(TurnBuilder, ""), (FromScratch, "_scratch")]
        for builder, tag in order if block % 2 else order[::-1]:  # each goes first in every other block
            runs["move" + tag].append(per_move(builder, matches, block))
            runs["build" + tag].append(build_only(builder, matches, block))
    med = {k: statistics.median(v) for k, v in runs.items()}
    figures: dict[str, Any] = {
        "move_us": round(med["move"], 1),
        "move_from_scratch_us": round(med["move_scratch"], 1),
        "move_ratio": round(med["move"] / med["move_scratch"], 2),
        "turn_build_us": round(med["build"], 1),
        "turn_build_from_scratch_us": round(med["build_scratch"], 1),
        "turn_build_ratio": round(med["build"] / med["build_scratch"], 2),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"a replica's own work per move, no gRPC (whole tablic matches, medians of {blocks} blocks)")
    print(
        f"  move, turns built incrementally  {med['move']:7.1f} µs   "
        f"({figures['move_ratio']:.2f} × the same with turns built from scratch)"
    )
    print(f"  move, turns built from scratch   {med['move_scratch']:7.1f} µs")
    print(
        f"  turn building alone              {med['build']:7.1f} µs vs {med['build_scratch']:.1f} µs from scratch "
        f"({figures['turn_build_ratio']:.2f} ×)"
    )


if __name__ == "__main__":
    main()
