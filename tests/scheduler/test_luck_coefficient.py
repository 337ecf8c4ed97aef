"""The luck coefficient (scheduler.luck_coefficient): unbiased, never noisier than raw beyond noise, shrunk to 1
with few data, and cross-fitted (no outcome's own data in its own coefficient).

Synthetic outcomes draw each game's margin as a pairing's mean + slope * luck + play noise, with the spreads
measured on real games (bench/rating.py: greedy against random, tablic, two seats: margin sd 10.9, luck sd 17.2,
best slope about a third; a close pair: slope about 1). One test plays a few seconds of real games.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from scheduler.luck_coefficient import FOLDS, fold_of, luck_coefficient, summary_line
from scheduler.outcomes import Outcome
from scheduler.skill import fit_skill

pytestmark = pytest.mark.fast


def pair(
    units: int, mean: float, slope: float, seed: int, a: str = "a", b: str = "b", luck_sd: float = 17.0
) -> list[Outcome]:
    """``units`` games of ``a`` against ``b`` on deals of their own, seats alternating: ``a``'s margin is
    ``mean + slope * luck + noise``, its luck ``N(0, luck_sd)`` (margins and luck are -x for ``b``)."""
    rng = random.Random(seed)
    out = []
    for i in range(units):
        luck = rng.gauss(0, luck_sd)
        margin = mean + slope * luck + rng.gauss(0, 9)
        first = i % 2 == 0
        teams = ((a,), (b,)) if first else ((b,), (a,))
        points = (100 + margin / 2, 100 - margin / 2) if first else (100 - margin / 2, 100 + margin / 2)
        lk = (luck, -luck) if first else (-luck, luck)
        out.append(Outcome(f"{a}-{b}/{seed}/{i}", f"{a}-{b}/{seed}/{i}", teams, (0.0, 0.0), points, lk))  # type: ignore[arg-type]
    return out


def a_view(o: Outcome, bot: str = "a") -> tuple[float, float]:
    """``bot``'s margin and luck in a two-team outcome."""
    t = 0 if o.teams[0] == (bot,) else 1
    assert o.luck is not None
    return o.points[t] - o.points[1 - t], o.luck[t]


def test_a_mismatched_pair_gets_the_variance_minimising_slope_and_never_more_spread_than_raw() -> None:
    """Slope 1/3 (the whole luck doubles the spread, as the issue measured on greedy against random)."""
    for seed in range(5):
        lc = luck_coefficient(pair(300, 70.0, 1 / 3, seed))
        assert lc.ratio is not None and lc.ratio_at_one is not None
        assert abs(lc.beta - 1 / 3) < 0.12, lc.beta
        assert lc.ratio <= 1.0 and lc.ratio_at_one > 1.5  # the control: today's constant adds spread
        assert all(b is not None and abs(b - 1 / 3) < 0.15 for b in lc.betas)
    # The best a coefficient can do here: 1 - rho^2 = 81 / (81 + 17^2 / 9) = 0.716; cross-fitting costs little.
    assert luck_coefficient(pair(2000, 70.0, 1 / 3, 9)).ratio == pytest.approx(0.716, abs=0.05)


def test_a_close_pair_keeps_a_coefficient_near_one() -> None:
    lc = luck_coefficient(pair(300, 4.0, 1.0, 3))
    assert abs(lc.beta - 1.0) < 0.08 and lc.ratio is not None and lc.ratio_at_one is not None
    assert lc.ratio == pytest.approx(lc.ratio_at_one, abs=0.02)
    assert lc.ratio == pytest.approx(81 / (81 + 17**2), abs=0.06)


def test_the_mean_is_kept_self_play_and_mismatched() -> None:
    """Unbiased: over many leagues the adjusted margin's mean is the raw one's (self-play: 0), within 3 se."""
    for mean, slope in ((0.0, 1.0), (70.0, 1 / 3)):
        diffs, adjusted = [], []
        for seed in range(200):
            outcomes = pair(40, mean, slope, 1000 + seed)
            lc = luck_coefficient(outcomes)
            views = [a_view(o) for o in outcomes]
            adj = [y - (b or 0.0) * x for (y, x), b in zip(views, lc.betas, strict=True)]
            adjusted.append(statistics.fmean(adj))
            diffs.append(statistics.fmean(adj) - statistics.fmean(y for y, _ in views))
        se = statistics.stdev(adjusted) / math.sqrt(len(adjusted))
        assert abs(statistics.fmean(adjusted) - mean) < 3 * se, (mean, statistics.fmean(adjusted), se)
        se_d = statistics.stdev(diffs) / math.sqrt(len(diffs))
        assert abs(statistics.fmean(diffs)) < 3 * se_d


def test_with_few_data_the_coefficient_is_one() -> None:
    """One unit a pairing says nothing once centred: 1.0 exactly. Data whose best slope is 0 pull the coefficient
    from 1 towards 0 as units accrue, about 5 / (5 + units) of the way left to 1 (20 leagues a size)."""
    single = [o for seed in range(6) for o in pair(1, 70.0, 0.0, seed, "a", f"b{seed}")]
    lc = luck_coefficient(single)
    assert lc.beta == 1.0 and set(lc.betas) == {1.0} and lc.ratio is None
    sizes = (3, 6, 12, 48, 600)
    means = [statistics.fmean(luck_coefficient(pair(n, 70.0, 0.0, s)).beta for s in range(20)) for n in sizes]
    assert means == sorted(means, reverse=True), means
    assert means[0] > 0.55 and 0.3 < means[1] < 0.7 and means[-1] < 0.05, means


def test_a_pairing_with_few_units_takes_the_leagues_coefficient() -> None:
    """Many units of a/b at slope 1/3, three of a/c at slope 1: a/c's coefficient is near a/b's, not its own."""
    outcomes = pair(400, 70.0, 1 / 3, 1) + pair(3, 70.0, 1.0, 2, "a", "c")
    by = {p.teams: p for p in luck_coefficient(outcomes).pairings}
    ab, ac = by[(("a",), ("b",))], by[(("a",), ("c",))]
    assert ab.units == 400 and ac.units == 3
    assert abs(ac.beta - ab.beta) < (1.0 - ab.beta) / 3  # far nearer the league's slope than its own data's


def test_no_outcome_has_its_own_data_in_its_coefficient() -> None:
    """Make one outcome an outlier: its own coefficient and its fold's do not move; the other folds' do."""
    outcomes = pair(60, 70.0, 1 / 3, 5)
    before = luck_coefficient(outcomes).betas
    k = 17
    o = outcomes[k]
    outlier = Outcome(o.match_id, o.unit, o.teams, o.placing, (400, -200), (300.0, -300.0))
    after = luck_coefficient([*outcomes[:k], outlier, *outcomes[k + 1 :]]).betas
    fold = fold_of(o.unit)
    same = [i for i, x in enumerate(outcomes) if fold_of(x.unit) == fold]
    assert k in same and len(same) < len(outcomes)
    assert all(after[i] == before[i] for i in same)
    assert all(after[i] != before[i] for i in range(len(outcomes)) if i not in same)


def test_a_unit_shares_its_fold_and_the_order_of_results_does_not_matter() -> None:
    """The games of one deal (a mirrored pair) are one row: one fold, one coefficient; any order, same answer."""
    rng = random.Random(4)
    outcomes = []
    for u in range(80):
        for g, (x, y) in enumerate((("a", "b"), ("b", "a"))):
            luck, margin = rng.gauss(0, 17), 30 + rng.gauss(0, 10)
            margin += luck / 3
            outcomes.append(
                Outcome(f"{u}/{g}", f"u{u}", ((x,), (y,)), (0.0, 0.0), (100 + margin, 100), (luck, -luck))  # type: ignore[arg-type]
            )
    lc = luck_coefficient(outcomes)
    assert lc.units == 80 and all(lc.betas[2 * u] == lc.betas[2 * u + 1] for u in range(80))
    shuffled = list(range(len(outcomes)))
    rng.shuffle(shuffled)
    again = luck_coefficient([outcomes[i] for i in shuffled])
    assert list(again.betas) == pytest.approx([lc.betas[i] for i in shuffled], rel=1e-12)
    assert again.beta == pytest.approx(lc.beta, rel=1e-12) and again.ratio == pytest.approx(lc.ratio, rel=1e-12)
    assert len({fold_of(f"u{u}") for u in range(80)}) == FOLDS


def test_three_teams_a_slope_per_pairing() -> None:
    """Three sides a match (margins over the mean of the others, summing to zero): the slope is found."""
    rng = random.Random(8)
    skill = {"a": 20.0, "b": 0.0, "c": -20.0}
    outcomes = []
    for i in range(300):
        seats = rng.sample(sorted(skill), 3)
        raw_luck = [rng.gauss(0, 12) for _ in seats]
        luck = [1.5 * (v - statistics.fmean(raw_luck)) for v in raw_luck]  # a margin: v - mean of the others
        pts = [60 + skill[b] + 0.5 * v + rng.gauss(0, 6) for b, v in zip(seats, raw_luck, strict=True)]
        outcomes.append(Outcome(f"m{i}", f"u{i}", tuple((b,) for b in seats), (0.0,) * 3, tuple(pts), tuple(luck)))  # type: ignore[arg-type]
    lc = luck_coefficient(outcomes)
    assert len(lc.pairings) == 1 and abs(lc.beta - 0.5) < 0.1
    assert lc.ratio is not None and lc.ratio_at_one is not None and lc.ratio < lc.ratio_at_one


def test_a_fixed_coefficient_is_used_as_given() -> None:
    outcomes = pair(100, 70.0, 1 / 3, 2)
    one = luck_coefficient(outcomes, fixed=1.0)
    assert set(one.betas) == {1.0} and one.beta == 1.0 and one.ratio == one.ratio_at_one
    with pytest.raises(ValueError, match="at least 2 folds"):
        luck_coefficient(outcomes, folds=1)


def test_the_skill_fit_uses_it_and_says_so() -> None:
    """A field of far-apart bots: the fitted coefficient gives narrower intervals than the whole luck, both cover
    the truth, and the fit's JSON carries the coefficient and the variance ratio."""
    truth = {"a": 35.0, "b": 0.0, "c": -35.0}
    outcomes = [
        o
        for n, (x, y) in enumerate(itertools.combinations(truth, 2))
        for o in pair(150, truth[x] - truth[y], 1 / 3, 40 + n, x, y)
    ]
    fitted, whole = fit_skill(outcomes), fit_skill(outcomes, luck_beta=1.0)
    for f in (fitted, whole):
        assert [r.bot for r in f.ratings] == ["a", "b", "c"]
        assert all(r.low < truth[r.bot] < r.high for r in f.ratings)
    width = {r.bot: r.high - r.low for r in whole.ratings}
    assert all(r.high - r.low < 0.8 * width[r.bot] for r in fitted.ratings)
    shown = fitted.to_json()["luck_correction"]
    assert shown["units"] == 450 and shown["pairings"] == 3 and 0.2 < shown["beta"] < 0.5
    assert shown["ratio"] < 1.0 < 1.5 < shown["ratio_at_one"]
    line = summary_line(shown)
    assert line.startswith(f"luck coefficient {shown['beta']:.2f}") and "adjusted/raw variance" in line
    assert summary_line(None) == "" and summary_line(luck_coefficient([]).to_json()) == ""


def test_real_games_greedy_against_random() -> None:
    """A few seconds of real games (tablic to 31, with the worker's luck): the coefficient comes out well under
    1 and leaves less spread than the whole luck."""
    from engine_service.rules import Rules
    from scheduler.offline import play_planned
    from scheduler.pairings import PlannedMatch

    rules, specs = Rules.preset("tablic", target=31), {"g": "greedy", "r": "random"}
    seats = (("g", "r"), ("r", "g"))
    outcomes = [
        play_planned(rules, specs, PlannedMatch(f"m{i}", 0, seats[i % 2], f"luck-coefficient/{i}"), luck=True)
        for i in range(48)
    ]
    lc = luck_coefficient(outcomes)
    assert lc.ratio is not None and lc.ratio_at_one is not None
    assert lc.beta < 0.8 and lc.ratio < 0.9 * lc.ratio_at_one
