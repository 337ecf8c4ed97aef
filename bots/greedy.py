"""The greedy bot: the play that banks the most points right now.

Among captures it takes the highest :func:`~bots.evaluate.immediate_value`;
when nothing is worth taking it trails the card that gives away least.
"""

from __future__ import annotations

from engine_service.rules import Observation, Play

from .base import Bot
from .evaluate import immediate_value, trail_cost


class GreedyBot(Bot):
    name = "greedy"
    version = "1"

    def choose(self, observation: Observation) -> Play:
        rules = observation.rules
        last = observation.is_last_play_of_deal
        best = max(
            observation.legal_plays,
            key=lambda p: immediate_value(rules, observation.table, p, last) if p.mask else -trail_cost(rules, p),
        )
        return best
