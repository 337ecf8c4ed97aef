"""The random bot: a uniformly random legal play. The floor of the strength ladder."""

from __future__ import annotations

import random

from engine_service.rules import Observation, Play

from .base import Bot


class RandomBot(Bot):
    name = "random"
    version = "1"

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, observation: Observation) -> Play:
        plays = observation.legal_plays
        return plays[self.rng.randrange(len(plays))]
