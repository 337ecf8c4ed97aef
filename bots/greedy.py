"""The greedy bot: the play that banks the most points right now.

Among captures it takes the highest :func:`~bots.evaluate.immediate_value`;
when nothing is worth taking it trails the card that gives away least. With
``eps`` it plays a random legal play that often instead (a weaker greedy, for
testing the ladder on close pairs).
"""

from __future__ import annotations

import random

from engine_service.rules import Observation, Play

from .base import Bot
from .evaluate import immediate_value, trail_cost


class GreedyBot(Bot):
    name = "greedy"
    version = "1"

    def __init__(self, seed: int | str | None = None, eps: float = 0.0) -> None:
        if not 0 <= eps <= 1:
            raise ValueError(f"eps is a probability, got {eps}")
        self.eps = eps
        self.rng = random.Random(seed)

    def choose(self, observation: Observation) -> Play:
        if self.eps and self.rng.random() < self.eps:
            return observation.legal_plays[self.rng.randrange(len(observation.legal_plays))]
        rules = observation.rules
        last = observation.is_last_play_of_deal
        best = max(
            observation.legal_plays,
            key=lambda p: immediate_value(rules, observation.table, p, last) if p.mask else -trail_cost(rules, p),
        )
        return best
