"""The pentanomial SPRT: its arithmetic, and its decisions on real games within the error rates it was set to."""

from __future__ import annotations

import random

import pytest

from engine_service.rules import Rules
from scheduler.offline import play_league
from scheduler.planners import SprtPlanner
from scheduler.sprt import SPRT, constrained_mle, expected_score
from store.leagues import League

RULES = Rules.preset("tablic", deals=1)


def test_the_constrained_distribution_has_the_asked_mean_and_stays_close() -> None:
    freq = [0.1, 0.2, 0.3, 0.25, 0.15]
    for mean in (0.4, 0.5, 0.6):
        p = constrained_mle(freq, mean)
        assert sum(p) == pytest.approx(1) and sum(
            q * s for q, s in zip(p, (0, 0.25, 0.5, 0.75, 1), strict=True)
        ) == pytest.approx(mean)
        assert all(q > 0 for q in p)


def test_the_llr_grows_with_evidence_and_the_bounds_follow_the_error_rates() -> None:
    test = SPRT(0, 50, 0.05, 0.05)
    lower, upper = test.bounds
    assert lower == pytest.approx(-2.944, abs=1e-3) and upper == pytest.approx(2.944, abs=1e-3)
    good = [1, 2, 10, 8, 4]  # ahead more often than behind
    assert 0 < test.llr(good) < test.llr([c * 4 for c in good])
    assert test.llr([4, 8, 10, 2, 1]) < 0
    assert expected_score(0) == 0.5 and expected_score(400) == pytest.approx(10 / 11)


def simulated_decisions(test: SPRT, elo: float, runs: int, rng: random.Random) -> list[str]:
    """The decisions of ``runs`` tests on pairs drawn from independent games of a bot ``elo`` stronger."""
    p = expected_score(elo)
    out = []
    for _ in range(runs):
        penta = [0] * 5
        while True:
            penta[(rng.random() < p) + (rng.random() < p)] += 1
            decision = test.decide([penta[0], 0, penta[1], 0, penta[2]]).decision
            if decision != "none":
                out.append(decision)
                break
    return out


def test_error_rates_hold_on_simulated_pairs() -> None:
    test = SPRT(0, 50, 0.05, 0.05)
    rng = random.Random(2)
    assert simulated_decisions(test, 0, 200, rng).count("H1") <= 200 * 0.05 * 2  # false positives
    assert simulated_decisions(test, 50, 200, rng).count("H0") <= 200 * 0.05 * 2  # false negatives


def sprt_league(challenger: str, champion: str, seed: str) -> League:
    league = League(seed, RULES, "sprt", 2, "mirrored", "champ", seed=seed, bots=["champ", "chal"])
    league.sprt = {"elo0": 0, "elo1": 60, "alpha": 0.1, "beta": 0.1}
    return league


@pytest.mark.parametrize(
    ("challenger", "right"),
    [("greedy", "H0"), ("greedy:eps=0.02", "H0")],  # the same bot (or next to it) must not look better
)
def test_a_copy_of_the_champion_is_accepted_as_no_better(challenger: str, right: str) -> None:
    decisions = []
    for run in range(10):
        planner = SprtPlanner(sprt_league(challenger, "greedy", f"same-{run}"))
        play_league(planner, RULES, {"champ": "greedy", "chal": challenger})
        decisions.append(planner.note()["decision"])
    assert decisions.count(right) >= 8, decisions  # alpha = 0.1: at most a few wrong in ten


def test_a_better_challenger_is_accepted_as_better() -> None:
    decisions, games = [], []
    for run in range(10):
        planner = SprtPlanner(sprt_league("greedy", "greedy:eps=0.3", f"better-{run}"))
        play_league(planner, RULES, {"champ": "greedy:eps=0.3", "chal": "greedy"})
        decisions.append(planner.note()["decision"])
        games.append(planner.note()["games"])
    assert decisions.count("H1") >= 8, decisions  # beta = 0.1
    assert max(games) < 4000
