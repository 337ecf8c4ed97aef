"""The expert bot: sampling with rollouts over the worlds the seat cannot tell apart (PIMC).

For each turn it draws worlds (:class:`~engine_service.rules.worlds.WorldSampler`:
the unseen cards dealt as the shuffle deals them, given all the seat has seen),
and in each world plays every legal play and rolls the deal out to its end with
the engine's fast greedy policy for every seat. A rollout is scored as the deal
scores it (card points, tablas, the most-cards award and the leftover to the
last capturer), its own side's points minus the others' mean. Every play is
rolled out on the same worlds, so the comparison between plays is not blurred by
the luck of the draw; the play with the best mean wins.

It thinks for as long as its clock allows: at most ``ms`` milliseconds a move,
and never more than ``share`` of the time the turn has left (less the time bank
it keeps in reserve), checking the clock between worlds. With one legal play it
answers at once. Without a clock (in-process self-play) it samples a fixed
number of worlds, so the same seed and observation give the same play.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine_service.rules import DealState, Observation, Play, Rules
from engine_service.rules.value import greedy_play, tables_for
from engine_service.rules.worlds import WorldSampler

from .base import Bot

if TYPE_CHECKING:
    from .sdk import Clock

NO_CLOCK_WORLDS = 24
"""Worlds a move samples when it is given no clock and no ``worlds`` cap."""


class ExpertBot(Bot):
    name = "expert"
    version = "1"

    def __init__(
        self,
        seed: int | str | None = None,
        ms: int = 150,
        worlds: int = 0,
        share: float = 0.25,
        eps: float = 0.0,
    ) -> None:
        if ms < 1:
            raise ValueError(f"ms is the most a move may think (milliseconds, >= 1), got {ms}")
        if worlds < 0:
            raise ValueError(f"worlds is a cap on the worlds a move samples (0: none), got {worlds}")
        if not 0 < share <= 1:
            raise ValueError(f"share is the part of the turn's time left a move may use (0 < share <= 1), got {share}")
        if not 0 <= eps <= 1:
            raise ValueError(f"eps is a probability, got {eps}")
        self.rng = random.Random(seed)
        self.ms = ms
        self.worlds = worlds
        self.share = share
        self.eps = eps
        self.last_worlds = 0
        """How many worlds the last move sampled (0 when it had one play or played at random)."""

    def choose(self, observation: Observation, clock: Clock | None = None) -> Play:
        plays = observation.legal_plays
        self.last_worlds = 0
        if len(plays) == 1:
            return plays[0]
        if self.eps and self.rng.random() < self.eps:
            return plays[self.rng.randrange(len(plays))]
        cap = self.worlds or (0 if clock is not None else NO_CLOCK_WORLDS)
        stop = None
        if clock is not None:
            left = clock.remaining()
            spare = left - clock.bank if left > clock.bank else left
            stop = left - min(self.ms / 1000, self.share * spare)
        totals = self._search(observation, plays, cap, clock, stop)
        best = max(range(len(plays)), key=totals.__getitem__)
        return plays[best]

    def _search(
        self, obs: Observation, plays: Sequence[Play], cap: int, clock: Clock | None, stop: float | None
    ) -> list[float]:
        """Each play's summed rollout value over the worlds drawn (until ``cap`` worlds or the clock's ``stop``)."""
        rules = obs.rules
        sampler = WorldSampler(obs)
        rng = self.rng
        team = rules.team_of(obs.seat)
        totals = [0.0] * len(plays)
        n = 0
        while not cap or n < cap:
            if clock is not None and stop is not None and clock.remaining() <= stop and n:
                break
            state = sampler.state(sampler.sample(rng))
            for i, play in enumerate(plays):
                s = state.copy()
                s.push(play.card, play.mask)
                totals[i] += rollout(rules, s, team)
            n += 1
        self.last_worlds = n
        return totals


def rollout(rules: Rules, state: DealState, team: int) -> float:
    """Play ``state`` out to the deal's end with the greedy policy: ``team``'s points minus the others' mean."""
    tables = tables_for(rules)
    while not state.over:
        card, mask = greedy_play(state, tables)
        state.push(card, mask)
    score = state.score()
    others = (sum(score) - score[team]) / (len(score) - 1)
    return score[team] - others
