"""``python -m bots NAME --address HOST:PORT[,HOST:PORT...]``: run a built-in bot over gRPC.

The token comes from ``TABLANETTE_TOKEN`` (better than ``--token``: command-line
arguments are visible to every user in ``ps``).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import sys
import time

from engine_service.rules import Observation, Play

from .base import Bot
from .client_command import NO_TOKEN, run_until_stopped
from .registry import BUILTIN_BOTS, make_bot
from .sdk import BotClient


class Thinking(Bot):
    """Wraps a bot and waits before each answer: a slow bot for tests and demos."""

    def __init__(self, inner: Bot, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds
        self.name, self.version = inner.name, inner.version

    def choose(self, observation: Observation) -> Play:
        time.sleep(self.seconds)
        return self.inner.choose(observation)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bots", description=__doc__)
    parser.add_argument(
        "bot", help=f"a built-in bot ({', '.join(BUILTIN_BOTS)}), with parameters if any, e.g. greedy:eps=0.05"
    )
    parser.add_argument(
        "--address",
        default=os.environ.get("TABLANETTE_ADDRESS", "127.0.0.1:50051"),
        help="engine service replicas, comma-separated (env TABLANETTE_ADDRESS)",
    )
    parser.add_argument("--token", default=os.environ.get("TABLANETTE_TOKEN"), help="prefer env TABLANETTE_TOKEN")
    parser.add_argument("--name", help="registered bot name (default: the built-in name)")
    parser.add_argument("--max-games", type=int, default=4)
    parser.add_argument("--seed", default=None)
    parser.add_argument("--ca", help="CA certificate file for TLS")
    parser.add_argument("--think-ms", type=int, default=0, help="wait this long before each answer (testing)")
    parser.add_argument(
        "--inline",
        action="store_true",
        help="answer each turn on the thread reading the stream: faster, but one game at a time (bots.sdk)",
    )
    args = parser.parse_args(argv)
    return run_builtin(
        args.bot, args.address, args.token, args.name, args.max_games, args.seed, args.ca, args.think_ms, args.inline
    )


def run_builtin(
    bot: str,
    address: str,
    token: str | None,
    name: str | None,
    max_games: int = 4,
    seed: str | None = None,
    ca: str | None = None,
    think_ms: int = 0,
    inline: bool = False,
) -> int:
    if not token:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    tls = open(ca, "rb").read() if ca else None  # noqa: SIM115
    try:
        make_bot(bot, seed)  # a bad spec is an error now, not in a game
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    games = itertools.count()

    def new_player() -> Bot:
        """Each game its own bot (seeded per game when --seed is given)."""
        player = make_bot(bot, f"{seed}/{next(games)}" if seed is not None else None)
        return Thinking(player, think_ms / 1000) if think_ms else player

    client = BotClient(new_player, address, token, name=name, max_games=max_games, tls_ca=tls, inline=inline)
    return run_until_stopped(client, bot)


if __name__ == "__main__":
    sys.exit(main())
