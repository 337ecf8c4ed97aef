"""The second-sight check: honest bots are not flagged, a bot that remembers a deal is.

Honest leagues are simulated (margins that do not depend on which game of a deal
came first, with seat advantages and luck) many times over, with a fixed seed; the
remembering bot is the real cheater of bench/cheater.py, its memory its only
channel, playing mirrored pairs in-process against greedy.
"""

from __future__ import annotations

import random

import pytest

from bench.cheater import Cheater, Spy
from bots import make_bot, play_match
from engine_service.rules import Rules
from scheduler.outcomes import Outcome, outcome_of
from scheduler.pairings import pair_of_games
from scheduler.second_sight import MIN_DEALS, second_sight
from store.deal_seeds import DealSeeds


def honest_league(rng: random.Random, bots: int = 4, pairs: int = 3) -> list[Outcome]:
    """A round robin of mirrored pairs: each bot a skill, seat 0 a small edge, each deal its own luck."""
    skill = {f"b{i}": rng.gauss(0, 8) for i in range(bots)}
    names = sorted(skill)
    out: list[Outcome] = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for p in range(pairs):
                unit = f"{a}-{b}-{p}"
                deal = rng.gauss(0, 10)  # the cards favour seat 0 by this much, in both games
                games = [(a, b), (b, a)]
                rng.shuffle(games)  # which game finishes first is the arena's doing
                for g, (s0, s1) in enumerate(games):
                    margin = skill[s0] - skill[s1] + 2.0 + deal + rng.gauss(0, 12)
                    points = (round(40 + margin / 2), round(40 - margin / 2))
                    placing = (float(points[0] > points[1]), float(points[1] > points[0]))
                    out.append(Outcome(f"{unit}/g{g}", unit, ((s0,), (s1,)), placing, points))
    return out


def test_honest_leagues_are_almost_never_flagged() -> None:
    rng = random.Random(20261205)
    flagged = sum(any(s.flagged for s in second_sight(honest_league(rng))) for _ in range(400))
    # the flag is one-sided at 2.5% over a league's bots (Bonferroni): about 1 league in 40 at most
    assert flagged <= 400 * 0.04, flagged


def test_every_bot_gets_an_interval_and_a_bot_needs_a_few_deals_to_be_flagged() -> None:
    outcomes = honest_league(random.Random(7), bots=2, pairs=MIN_DEALS - 1)
    report = second_sight(outcomes)
    assert {s.bot for s in report} == {"b0", "b1"}
    assert all(s.deals == MIN_DEALS - 1 and not s.flagged for s in report)
    assert all(s.low <= s.advantage <= s.high for s in report)
    # a game that shares its deal with none is no measurement
    alone = Outcome("x/g1", "x", (("b0",), ("b1",)), (1.0, 0.0), (50, 30))
    assert second_sight([alone]) == []


@pytest.mark.slow
def test_a_bot_that_remembers_the_first_game_of_a_deal_is_flagged() -> None:
    rules = Rules.preset("tablic", target=31)
    spy = Spy(frozenset({"memory"}))  # one process, many games: what a connected bot is
    seeds = DealSeeds.keyed(bytes(32))
    outcomes = []
    for p in range(24):
        for m in pair_of_games("mole", "greedy", seeds, f"x{p}", 1):  # in the order the planner gives
            game_id = f"memory/{m.match_id}"
            players = [Cheater(spy, game_id) if s == "mole" else make_bot("greedy", game_id) for s in m.seats]
            match = play_match(rules, m.seed, players)
            outcomes.append(outcome_of(m.match_id, m.seed, m.seats, match, luck=False))  # unit: the deal
    report = {s.bot: s for s in second_sight(outcomes)}
    assert report["mole"].flagged and report["mole"].low > 0, report["mole"]
    assert not report["greedy"].flagged
