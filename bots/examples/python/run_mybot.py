"""Connect MyBot to the arena: from your machine, or hosted by the arena (which sets these variables)."""

import logging
import os

from mybot import MyBot

from bots.sdk import BotClient

logging.basicConfig(level=logging.INFO)
BotClient(
    MyBot,
    os.environ.get("TABLANETTE_ADDRESS", "127.0.0.1:50051"),
    os.environ["TABLANETTE_TOKEN"],
    name=os.environ.get("TABLANETTE_BOT_NAME"),  # hosted: the version's name, e.g. mybot@3
    max_games=int(os.environ.get("TABLANETTE_MAX_GAMES", "4")),
).run_forever()
