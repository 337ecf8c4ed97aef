"""The bot of bots/README.md: take the capture with the most cards, else trail."""

from bots import Bot
from engine_service.rules import Observation, Play


class MyBot(Bot):
    name = "mybot"
    version = "0.1"

    def choose(self, observation: Observation) -> Play:
        return max(observation.legal_plays, key=lambda play: len(play.captured))
