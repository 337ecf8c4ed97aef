"""The expert bot: sampling with rollouts over the worlds the seat cannot tell apart (PIMC).

For each turn it draws worlds (:class:`~engine_service.rules.worlds.WorldSampler`:
the unseen cards dealt as the shuffle deals them, given all the seat has seen),
and in each world plays every legal play and rolls the position out to the end of
the round (every hand of it is known in the world) with a fast *wary greedy*
policy for every seat: the play that banks the most now, less what it risks by
leaving a table the next seat may sweep (the chance that seat holds a card taking
the whole table, from the cards its mover has not seen, times what the sweep would
bank). The end of the round is then valued as the engine's luck estimator values a
position: the points banked this deal (cards, tablas), an even share of the points
still out, and each side's chance of the most-cards award; at the deal's end, the
deal's own score. A rollout is worth its side's points minus the others' mean.
Every play is rolled out on the same worlds, so the comparison between plays is not
blurred by the luck of the draw; the play with the best mean wins.

It thinks for as long as its clock allows: at most ``ms`` milliseconds a move, and
never more than ``share`` of the time the turn has left (less the time bank it
keeps in reserve), checking the clock between worlds. With one legal play it
answers at once. Without a clock (in-process self-play) it samples a fixed number
of worlds, so the same seed and observation give the same play; ``worlds`` caps
the worlds of a move either way.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from engine_service.rules import FULL_DECK, DealState, Observation, Play, Rules, finder_for, iter_mask, sweep_bonus
from engine_service.rules.cards import JACK
from engine_service.rules.value import capture_options, mask_sum, rest_of_deal, tables_for
from engine_service.rules.worlds import WorldSampler

from .base import Bot

if TYPE_CHECKING:
    from .turns import Clock

NO_CLOCK_WORLDS = 24
"""Worlds a move samples when it is given no clock and no ``worlds`` cap."""
_RANKS = tuple(sum(1 << (r * 4 + s) for s in range(4)) for r in range(13))


class ExpertBot(Bot):
    name = "expert"
    version = "1"

    def __init__(
        self,
        seed: int | str | None = None,
        ms: int = 150,
        worlds: int = 0,
        share: float = 0.25,
        risk: float = 1.0,
        eps: float = 0.0,
    ) -> None:
        if ms < 1:
            raise ValueError(f"ms is the most a move may think (milliseconds, >= 1), got {ms}")
        if worlds < 0:
            raise ValueError(f"worlds is a cap on the worlds a move samples (0: none), got {worlds}")
        if not 0 < share <= 1:
            raise ValueError(f"share is the part of the turn's time left a move may use (0 < share <= 1), got {share}")
        if risk < 0:
            raise ValueError(f"risk weighs the sweeps a rollout play leaves open (>= 0), got {risk}")
        if not 0 <= eps <= 1:
            raise ValueError(f"eps is a probability, got {eps}")
        self.rng = random.Random(seed)
        self.ms = ms
        self.worlds = worlds
        self.share = share
        self.risk = risk
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
        stop = 0.0
        if clock is not None:
            left = clock.remaining()
            spare = left - clock.bank if left > clock.bank else left
            stop = left - min(self.ms / 1000, self.share * spare)
        totals = self._search(observation, plays, cap, clock, stop)
        best = max(range(len(plays)), key=totals.__getitem__)
        return plays[best]

    def _search(
        self, obs: Observation, plays: Sequence[Play], cap: int, clock: Clock | None, stop: float
    ) -> list[float]:
        """Each play's summed rollout value over the worlds drawn (until ``cap`` worlds or the clock's ``stop``)."""
        rules = obs.rules
        sampler = WorldSampler(obs)
        policy = Rollout.of(rules, self.risk)
        rng = self.rng
        team = rules.team_of(obs.seat)
        totals = [0.0] * len(plays)
        n = 0
        while not cap or n < cap:
            if clock is not None and n and clock.remaining() <= stop:
                break
            state = sampler.state(sampler.sample(rng))
            for i, play in enumerate(plays):
                s = state.copy()
                s.push(play.card, play.mask)
                totals[i] += policy.value(s, team)
            n += 1
        self.last_worlds = n
        return totals


class Rollout:
    """The wary greedy rollout of one rule set, and the value of where it ends (shared, cached per rules)."""

    _cache: ClassVar[dict[tuple[Rules, float], Rollout]] = {}

    @classmethod
    def of(cls, rules: Rules, risk: float) -> Rollout:
        found = cls._cache.get((rules, risk))
        if found is None:
            if len(cls._cache) > 64:
                cls._cache.clear()
            found = cls._cache[(rules, risk)] = cls(rules, risk)
        return found

    def __init__(self, rules: Rules, risk: float) -> None:
        self.rules = rules
        self.risk = risk
        self.tables = tables_for(rules)
        self.finder = finder_for(rules)
        self.jack_sweeps = rules.jack_sweeps
        self.sweepers: dict[int, int] = {}
        """Per table (as its rank counts), the ranks whose card takes the whole table (Jacks aside), as a mask."""

    def value(self, state: DealState, team: int) -> float:
        """Roll ``state`` out to the end of its round; ``team``'s expected deal points there minus the others' mean."""
        start = state.round
        while not state.over and state.round == start:
            card, mask = self.play(state)
            state.push(card, mask)
        score = [float(x) for x in state.score()] if state.over else rest_of_deal(state)
        return score[team] - (sum(score) - score[team]) / (len(score) - 1)

    def play(self, state: DealState) -> tuple[int, int]:
        """The wary greedy play of the seat to move: (card, captured mask)."""
        rules, table, tables = self.rules, state.table, self.tables
        chunks, trail_cost = tables.chunks, tables.trail_cost
        seat = state.turn
        hand = state.hands[seat]
        seen = hand | table
        for pile in state.piles:
            seen |= pile
        unseen = FULL_DECK & ~seen
        hidden = unseen.bit_count()
        after_me = state.hands[(seat + 1) % rules.players].bit_count()
        wary = self.risk and hidden and after_me
        jacks = (unseen & _RANKS[JACK]).bit_count() if self.jack_sweeps else 0
        sweep_ok = rules.last_play_tabla or not state.is_last_play
        best_card, best_mask, best = -1, 0, -math.inf
        for card in iter_mask(hand):
            for mask in capture_options(state, card, tables):
                if mask:
                    v = mask_sum(chunks, mask | 1 << card)
                    left = table & ~mask
                    if not left and sweep_ok:
                        v += sweep_bonus(rules, card, table)
                else:
                    v = -trail_cost[card]
                    left = table | 1 << card
                if wary and left:
                    takers = jacks
                    ranks = self.sweeping_ranks(left)
                    while ranks:
                        low = ranks & -ranks
                        takers += (unseen & _RANKS[low.bit_length() - 1]).bit_count()
                        ranks ^= low
                    if takers:
                        chance = 1.0 - (1.0 - takers / hidden) ** after_me if takers < hidden else 1.0
                        v -= self.risk * chance * (1.0 + mask_sum(chunks, left))
                if v > best:
                    best_card, best_mask, best = card, mask, v
        return best_card, best_mask

    def sweeping_ranks(self, table: int) -> int:
        """The ranks (a 13-bit mask) whose card captures the whole of ``table``, Jacks that sweep aside."""
        key = 0
        for c in iter_mask(table):
            key += 1 << 3 * (c >> 2)
        ranks = self.sweepers.get(key)
        if ranks is None:
            ranks = 0
            for r in range(13):
                if not (self.jack_sweeps and r == JACK) and table in self.finder.capture_masks(table, r * 4):
                    ranks |= 1 << r
            if len(self.sweepers) > 100_000:
                self.sweepers.clear()
            self.sweepers[key] = ranks
        return ranks
