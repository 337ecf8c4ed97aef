"""Possible worlds (engine_service/rules/worlds.py): consistent, seeded, and drawn as the shuffle deals.

Positions come from real games between built-in bots. Three kinds of checks:

- every world fits what the seat saw (sizes, cards, the engine plays on from it);
- on small positions (late in a deal) every consistent world is enumerated and the
  sampler's frequencies are compared with the uniform distribution by a chi-square
  test; on large ones (first round, mid-deal) which place holds each unseen card;
- under ``initial_table_jacks = replace`` the Jacks in the last-dealt hand are
  compared with real deals dealt by the arena's own shuffle.

Each check is also run on a deliberately biased sampler, which it must reject.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from itertools import permutations

import pytest
from scipy.stats import chi2_contingency, chisquare

from bots.greedy import GreedyBot
from bots.random_bot import RandomBot
from engine_service.rules import IllegalPositionError, Match, Observation, Rules, iter_mask
from engine_service.rules.shuffle import layout_of_deck, shuffled_deck
from engine_service.rules.worlds import World, WorldSampler, possible_worlds

PASS = 1e-3
"""A right sampler fails a check one time in a thousand (each check's p-value must exceed this)."""
CAUGHT = 1e-6
"""A biased sampler must be rejected far beyond doubt."""

Sampler = Callable[[WorldSampler, random.Random], World]


def exact(sampler: WorldSampler, rng: random.Random) -> World:
    return sampler.sample(rng)


def biased(sampler: WorldSampler, rng: random.Random) -> World:
    """Uniform, except that a world where the first other seat holds the lowest hidden card is redrawn 1 time in 2."""
    world = sampler.sample(rng)
    seat = sampler.slots[0].seat
    lowest = sampler.obs.unseen & -sampler.obs.unseen
    if world.hands[seat] & lowest and rng.random() < 0.5:
        world = sampler.sample(rng)
    return world


def positions(preset: str, players: int, seed: str, plays: int) -> Observation:
    """The observation of the seat to play after ``plays`` plays of a real game (greedy and random bots)."""
    match = Match(Rules.preset(preset, players=players), seed=seed)
    bots = [GreedyBot() if s % 2 else RandomBot(seed=s) for s in range(players)]
    for _ in range(plays):
        obs = match.observation(match.turn)
        match.play(bots[match.turn].choose(obs))
    return match.observation(match.turn)


def late(preset: str, players: int, seed: str, hidden: int) -> Observation:
    """A position in a deal's last round with exactly ``hidden`` cards in the other hands."""
    match = Match(Rules.preset(preset, players=players), seed=seed)
    bots = [GreedyBot() for _ in range(players)]
    while True:
        obs = match.observation(match.turn)
        if obs.rounds_left == 0 and obs.unseen.bit_count() == hidden:
            return obs
        match.play(bots[match.turn].choose(obs))


def key(world: World) -> tuple[int, ...]:
    return world.hands + tuple(h for hands in world.rounds for h in hands)


# ------------------------------------------------------------------ consistency


@pytest.mark.parametrize(("preset", "players"), [("tablic", 2), ("tablic", 4), ("tablanette-ro", 3), ("pisti", 4)])
def test_every_world_fits_what_the_seat_saw(preset: str, players: int) -> None:
    for plays in (0, 5, 13, 30):
        obs = positions(preset, players, f"fit-{preset}", plays)
        sampler = WorldSampler(obs)
        for world in possible_worlds(obs, 20, seed=plays):
            assert world.hands[obs.seat] == obs.hand
            assert [h.bit_count() for h in world.hands] == list(obs.hand_counts)
            others = 0
            for s, h in enumerate(world.hands):
                if s != obs.seat:
                    assert not others & h
                    others |= h
            assert not others & world.stock and others | world.stock == obs.unseen
            assert world.stock.bit_count() == obs.stock_count
            state = sampler.state(world)
            assert state.legal_plays() == list(obs.legal_plays) and state.turn == obs.turn
            while not state.over:  # the engine plays the world to the end of the deal
                state.push(state.legal_plays()[0].card, state.legal_plays()[0].mask)
            assert sum(p.bit_count() for p in state.piles) + state.table.bit_count() == 52


def test_same_observation_and_seed_same_worlds() -> None:
    obs = positions("tablic", 2, "seeded", 7)
    assert possible_worlds(obs, 16, seed=3) == possible_worlds(obs, 16, seed=3)
    assert possible_worlds(obs, 16, seed=3) != possible_worlds(obs, 16, seed=4)


def test_the_true_world_is_among_the_consistent_ones() -> None:
    """The deal really dealt is reachable: a world with the real hands replays the observation."""
    match = Match(Rules.preset("tablic"), seed="truth")
    for _ in range(9):
        match.play(GreedyBot().choose(match.observation(match.turn)))
    obs = match.observation(match.turn)
    sampler = WorldSampler(obs)
    deal = match.deal
    real = World(tuple(deal.hands), deal.layout.rounds[obs.round + 1 :])
    assert sampler.state(real).legal_plays() == list(obs.legal_plays)
    assert sampler.layout(real) == deal.layout


def test_impossible_observations_are_named() -> None:
    obs = positions("tablic", 2, "bad", 5)
    other = next(iter_mask(obs.unseen))
    cases = {
        "hand counts": obs.__class__(**{**obs.__dict__, "hand_counts": (9, 9)}),
        "plays": obs.__class__(**{**obs.__dict__, "plays": obs.plays[:-1]}),
        "seen twice": obs.__class__(**{**obs.__dict__, "table": obs.table | obs.hand}),
        "unseen cards": obs.__class__(**{**obs.__dict__, "table": obs.table | 1 << other}),
        "neither on the table nor taken": obs.__class__(
            **{**obs.__dict__, "plays": (*obs.plays[:-1], replace(obs.plays[-1], card=other))}
        ),
        "round": obs.__class__(**{**obs.__dict__, "rounds_left": 7}),
    }
    for words, bad in cases.items():
        with pytest.raises(IllegalPositionError, match=words):
            WorldSampler(bad)
    with pytest.raises(ValueError, match="0 or more"):
        possible_worlds(obs, -1, seed=0)


# ------------------------------------------------------------------ uniformity


def frequencies(obs: Observation, draw: Sampler, n: int, seed: int) -> Counter[tuple[int, ...]]:
    sampler, rng = WorldSampler(obs), random.Random(seed)
    return Counter(key(draw(sampler, rng)) for _ in range(n))


def every_world(obs: Observation) -> set[tuple[int, ...]]:
    """Every consistent world of a last-round position: each way to deal the hidden cards to the other hands."""
    sampler = WorldSampler(obs)
    hidden = list(iter_mask(obs.unseen))
    return {key(sampler.fill(list(p))) for p in permutations(hidden)}


def uniform_p(obs: Observation, draw: Sampler, seed: int) -> float:
    worlds = sorted(every_world(obs))
    counts = frequencies(obs, draw, 40 * len(worlds), seed)
    assert set(counts) <= set(worlds)
    return float(chisquare([counts[w] for w in worlds]).pvalue)


LATE = [("tablic-pagat", 4, 7), ("tablanette-ro", 3, 7), ("pisti", 4, 6), ("tablanette-ro", 4, 7)]
"""Last-round positions (``initial_table_jacks = keep``) with that many hidden cards: 35 to 630 worlds."""


@pytest.mark.parametrize(("preset", "players", "hidden"), LATE)
def test_complete_worlds_are_uniform(preset: str, players: int, hidden: int) -> None:
    obs = late(preset, players, f"late-{preset}", hidden)
    assert len(every_world(obs)) >= 30
    assert uniform_p(obs, exact, seed=1) > PASS


def test_the_enumeration_check_catches_a_biased_sampler() -> None:
    obs = late("tablic-pagat", 4, "late-tablic-pagat", 7)
    assert uniform_p(obs, biased, seed=1) < CAUGHT


def holder_p(obs: Observation, draw: Sampler, n: int, seed: int) -> float:
    """The smallest p-value, times the number of cards (Bonferroni), of "which place holds card c" for each unseen card.

    Places are the other hands now and the stock; under ``keep`` a card is in a place
    with chance (hidden cards there) / (all hidden cards).
    """
    sampler, rng = WorldSampler(obs), random.Random(seed)
    places = [s for s in range(obs.rules.players) if s != obs.seat]
    counts = {c: [0] * (len(places) + 1) for c in iter_mask(obs.unseen)}
    for _ in range(n):
        world = draw(sampler, rng)
        for i, s in enumerate(places):
            for c in iter_mask(world.hands[s]):
                counts[c][i] += 1
        for c in iter_mask(world.stock):
            counts[c][-1] += 1
    sizes = [obs.hand_counts[s] for s in places] + [obs.stock_count]
    expected = [n * size / sum(sizes) for size in sizes]
    worst = min(
        float(chisquare([x for x, e in zip(row, expected, strict=True) if e], [e for e in expected if e]).pvalue)
        for row in counts.values()
    )
    return worst * len(counts)


@pytest.mark.parametrize(
    ("preset", "players", "plays"), [("tablic-pagat", 2, 0), ("tablic-pagat", 4, 9), ("tablanette-ro", 3, 17)]
)
def test_each_card_is_in_each_place_as_often_as_uniform(preset: str, players: int, plays: int) -> None:
    obs = positions(preset, players, f"holder-{preset}", plays)
    assert holder_p(obs, exact, 3000, seed=2) > PASS


def test_the_holder_check_catches_a_biased_sampler() -> None:
    obs = positions("tablic-pagat", 2, "holder-tablic-pagat", 0)
    assert holder_p(obs, biased, 3000, seed=2) < CAUGHT


# ------------------------------------------------------------------ replace


def tail_jacks_dealt(n: int, players: int) -> Counter[int]:
    """Real tablic deals (the arena's shuffle) whose first seat got no Jack: Jacks in the last hand dealt."""
    rules = Rules.preset("tablic", players=players)
    out: Counter[int] = Counter()
    for i in range(n):
        layout = layout_of_deck(rules, shuffled_deck("tail", i), 0)
        if not layout.rounds[0][1] & JACKS:
            out[(layout.rounds[-1][0] & JACKS).bit_count()] += 1
    return out


JACKS = sum(1 << (40 + s) for s in range(4))


def tail_jacks_sampled(draw: Sampler, n: int, players: int) -> Counter[int]:
    """The same, as the sampler deals it for the first seat at the deal's first play (its hand holds no Jack)."""
    rules = Rules.preset("tablic", players=players)
    seed = next(f"s{i}" for i in range(100) if not Match(rules, seed=f"s{i}").observation(1).hand & JACKS)
    obs = Match(rules, seed=seed).observation(1)
    sampler, rng = WorldSampler(obs), random.Random(5)
    return Counter((draw(sampler, rng).rounds[-1][0] & JACKS).bit_count() for _ in range(n))


def uniform_sets(sampler: WorldSampler, rng: random.Random) -> World:
    """The uniform completion, blind to the Jacks that went to the bottom (what ``bots/strong.py`` draws)."""
    cards = list(iter_mask(sampler.obs.unseen))
    rng.shuffle(cards)
    return sampler.fill(cards)


def dealt_vs_sampled(draw: Sampler, players: int = 2) -> float:
    dealt, sampled = tail_jacks_dealt(6000, players), tail_jacks_sampled(draw, 4000, players)
    jacks = sorted(j for j in set(dealt) | set(sampled) if dealt[j] + sampled[j] >= 10)
    return float(chi2_contingency([[dealt[j] for j in jacks], [sampled[j] for j in jacks]]).pvalue)


@pytest.mark.parametrize("players", [2, 3])
def test_under_replace_the_last_hands_hold_jacks_as_often_as_dealt(players: int) -> None:
    assert dealt_vs_sampled(exact, players) > PASS


def test_the_replace_check_catches_the_uniform_sampler() -> None:
    assert dealt_vs_sampled(uniform_sets) < CAUGHT
