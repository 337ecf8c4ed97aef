"""The strong bot: look-ahead over determinized deals of the unseen cards.

For each legal play it samples several *determinizations* (the cards it has not
seen, dealt at random to the other hands and the rest of the stock), plays the
candidate, lets every other seat answer greedily until its own next turn, and
adds its own best next capture at a discount. The play with the best average
net value wins. This catches what greedy misses: leaving the table open to a
tabla, handing the ten of diamonds over, wasting a Jack on a thin table, and
setting up a capture for the next turn.
"""

from __future__ import annotations

import random

from engine_service.rules import (
    DealLayout,
    DealState,
    Observation,
    Play,
    Rules,
    iter_mask,
    round_sizes,
)

from .base import Bot
from .evaluate import immediate_value, trail_cost


class StrongBot(Bot):
    name = "strong"
    version = "1"

    def __init__(
        self, seed: int | str | None = None, samples: int = 8, follow_up: float = 0.5, eps: float = 0.0
    ) -> None:
        if samples < 1 or not 0 <= eps <= 1:
            raise ValueError(f"samples must be >= 1 and eps a probability, got {samples} and {eps}")
        self.rng = random.Random(seed)
        self.samples = samples
        self.follow_up = follow_up
        self.eps = eps

    def choose(self, observation: Observation) -> Play:
        plays = observation.legal_plays
        if len(plays) == 1:
            return plays[0]
        if self.eps and self.rng.random() < self.eps:
            return plays[self.rng.randrange(len(plays))]
        rules = observation.rules
        totals = [0.0] * len(plays)
        for _ in range(self.samples):
            state = determinize(observation, self.rng)
            for i, play in enumerate(plays):
                totals[i] += self._evaluate(rules, state.copy(), play, observation.seat)
        for i, play in enumerate(plays):
            if not play.mask:
                totals[i] -= self.samples * trail_cost(rules, play) * 0.25
        best = max(range(len(plays)), key=lambda i: totals[i])
        return plays[best]

    def _evaluate(self, rules: Rules, state: DealState, play: Play, seat: int) -> float:
        """Net value for ``seat``'s side of ``play`` and the greedy replies to it."""
        my_team = rules.team_of(seat)
        value = immediate_value(rules, state.table, play, state.is_last_play)
        state.push(play.card, play.mask)
        while not state.over and state.turn != seat:
            reply, gain = _greedy(rules, state)
            value += gain if rules.team_of(state.turn) == my_team else -gain
            state.push(reply.card, reply.mask)
        if not state.over and state.turn == seat and state.hands[seat]:
            _, gain = _greedy(rules, state)
            value += self.follow_up * gain
        return value


def _greedy(rules: Rules, state: DealState) -> tuple[Play, float]:
    """The greedy play of the seat to move in ``state`` and its immediate value."""
    last = state.is_last_play
    best: Play | None = None
    best_value = float("-inf")
    for card in iter_mask(state.hands[state.turn]):
        for play in state.plays_for_card(card):
            v = immediate_value(rules, state.table, play, last) if play.mask else -trail_cost(rules, play)
            if v > best_value:
                best, best_value = play, v
    assert best is not None
    return best, max(best_value, 0.0)


def determinize(obs: Observation, rng: random.Random) -> DealState:
    """A full deal state consistent with what ``obs`` shows, hidden cards sampled."""
    rules = obs.rules
    n = rules.players
    unseen = list(iter_mask(obs.unseen))
    rng.shuffle(unseen)
    hands = [0] * n
    pos = 0
    for s in range(n):
        if s == obs.seat:
            hands[s] = obs.hand
            continue
        for c in unseen[pos : pos + obs.hand_counts[s]]:
            hands[s] |= 1 << c
        pos += obs.hand_counts[s]
    sizes = round_sizes(rules)
    rounds: list[tuple[int, ...]] = [tuple(hands)] * (obs.round + 1)
    for size in sizes[obs.round + 1 :]:
        future = [0] * n
        for s in range(n):
            for c in unseen[pos : pos + size]:
                future[s] |= 1 << c
            pos += size
        rounds.append(tuple(future))
    state = DealState(rules, DealLayout(obs.dealer, obs.table, tuple(rounds)))
    state.hands = hands
    state.piles = list(obs.piles)
    state.bonus = list(obs.deal_bonus)
    state.turn = obs.turn
    state.round = obs.round
    captures = [p.seat for p in obs.plays if p.mask]
    state.last_capturer = captures[-1] if captures else None
    return state
