"""The fitted ladder: order never matters, intervals are honest, mirrored pairs are units."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from scheduler.ratings import Outcome, fit_ratings


def duel(
    mid: str, a: str, b: str, a_wins: bool | None, unit: str | None = None, pts: tuple[int, int] = (101, 70)
) -> Outcome:
    """One game of a against b (a in seat 0): a win, a loss, or a draw (None)."""
    placing = (0.5, 0.5) if a_wins is None else (1.0, 0.0) if a_wins else (0.0, 1.0)
    points = pts if a_wins else pts[::-1]
    return Outcome(mid, unit or mid, (("a" if a == "a" else a,), (b,)), placing, points)


def simulate(true: dict[str, float], games_per_pair: int, rng: random.Random) -> list[Outcome]:
    """Bradley-Terry games between bots of known strength (Elo), seats alternating."""
    out = []
    bots = sorted(true)
    for i, a in enumerate(bots):
        for b in bots[i + 1 :]:
            for g in range(games_per_pair):
                p = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
                x, y = (a, b) if g % 2 == 0 else (b, a)
                won = rng.random() < p
                out.append(duel(f"{a}-{b}-{g}", x, y, won if x == a else not won))
    return out


def test_the_ladder_is_the_same_whatever_order_the_results_came_in() -> None:
    outcomes = simulate({"a": 100, "b": 0, "c": -80, "d": 20}, 6, random.Random(3))
    first = fit_ratings(outcomes, initial=1500)
    for seed in range(5):
        shuffled = outcomes[:]
        random.Random(seed).shuffle(shuffled)
        again = fit_ratings(shuffled, initial=1500)
        assert again.ratings == first.ratings
        assert again.groups() == first.groups()


def test_ratings_are_anchored_at_the_initial_rating_and_perfect_scores_stay_finite() -> None:
    outcomes = [duel(f"m{i}", "a", "b", True) for i in range(10)]
    fit = fit_ratings(outcomes, initial=1200)
    a, b = fit.ratings
    assert (a.bot, b.bot) == ("a", "b")
    assert a.rating + b.rating == pytest.approx(2400)
    assert math.isfinite(a.rating) and a.rating - b.rating > 200
    assert a.low < a.rating < a.high and b.low < b.rating < b.high
    assert fit.los("a", "b") > 0.99 and fit.los("a", "b") + fit.los("b", "a") == pytest.approx(1)


def test_a_league_whose_bots_have_not_all_met_gets_finite_intervals_not_a_singular_matrix() -> None:
    # Early in a league of four, a drew b and c drew d (one mirrored unit each): nothing but the prior ties the
    # two pairs together, and far out on a profile its curvature underflows to zero. `league status` raised
    # LinAlgError("Singular matrix") there (a multi-host fault test caught it on its third result).
    early = [duel("m0", "a", "b", None, "u0"), duel("m1", "c", "d", None, "u0")]
    later = [*early, duel("m2", "b", "a", True, "u1"), duel("m3", "c", "d", False, "u1")]
    for outcomes in (early, later):
        fit = fit_ratings(outcomes, bots=["a", "b", "c", "d"])
        assert len(fit.ratings) == 4
        for r in fit.ratings:
            assert math.isfinite(r.rating) and math.isfinite(r.low) and math.isfinite(r.high), r
            assert r.low <= r.rating <= r.high


def test_equal_results_give_equal_ratings_and_an_unsettled_pair() -> None:
    outcomes = [duel(f"m{i}", "a", "b", i % 2 == 0) for i in range(8)]
    fit = fit_ratings(outcomes)
    assert fit.ratings[0].rating == pytest.approx(fit.ratings[1].rating)
    assert fit.los("a", "b") == pytest.approx(0.5, abs=1e-6)
    assert fit.groups() == [["a", "b"]] and not fit.settled()


def test_draws_count_half_and_a_bot_that_never_played_is_provisional_at_the_initial_rating() -> None:
    fit = fit_ratings([duel("m1", "a", "b", None), duel("m2", "b", "a", None)], bots=["new"], initial=1500)
    ratings = {r.bot: r for r in fit.ratings}
    assert ratings["a"].rating == pytest.approx(ratings["b"].rating)
    assert ratings["new"].games == 0 and ratings["new"].provisional


def test_more_games_narrow_the_interval() -> None:
    rng = random.Random(5)
    widths = []
    for n in (4, 16, 64):
        fit = fit_ratings(simulate({"a": 60, "b": 0}, n, rng))
        widths.append(fit.ratings[0].high - fit.ratings[0].low)
    assert widths[0] > widths[1] > widths[2]


def test_intervals_cover_the_true_gap_about_95_percent_of_the_time() -> None:
    """Honest intervals: over many simulated leagues, the true rating lies inside ~95% of them."""
    rng = random.Random(11)
    true = {"a": 120.0, "b": 0.0, "c": -120.0}
    mean = sum(true.values()) / 3
    covered = total = 0
    for _ in range(60):
        fit = fit_ratings(simulate(true, 12, rng), initial=0.0, prior_draws=0.5)
        for r in fit.ratings:
            total += 1
            covered += r.low <= true[r.bot] - mean <= r.high
    assert 0.88 <= covered / total <= 0.995, f"coverage {covered}/{total}"


def test_a_mirrored_pair_whose_luck_cancels_is_worth_more_than_two_independent_games() -> None:
    """Two equal bots that each win the good seat of every deal: split pairs, so the luck is the deal's."""
    paired, unpaired = [], []
    for u in range(12):
        paired += [duel(f"{u}a", "a", "b", True, unit=f"u{u}"), duel(f"{u}b", "b", "a", True, unit=f"u{u}")]
        unpaired += [duel(f"{u}a", "a", "b", True), duel(f"{u}b", "b", "a", True)]
    narrow = fit_ratings(paired).ratings[0]
    wide = fit_ratings(unpaired).ratings[0]
    assert narrow.rating == pytest.approx(wide.rating, abs=1e-6)  # the same split record
    assert narrow.high - narrow.low < 0.8 * (wide.high - wide.low)


def test_tables_of_three_are_rated_by_finishing_order() -> None:
    outcomes = []
    for i in range(12):
        seats = ["a", "b", "c"][i % 3 :] + ["a", "b", "c"][: i % 3]
        places = {"a": 3.0, "b": 2.0, "c": 1.0} if i % 4 else {"a": 2.0, "b": 3.0, "c": 1.0}
        outcomes.append(
            Outcome(f"m{i}", f"t{i // 3}", tuple((s,) for s in seats), tuple(places[s] for s in seats), (60, 40, 20))
        )
    fit = fit_ratings(outcomes)
    assert [r.bot for r in fit.ratings] == ["a", "b", "c"]


def test_partnerships_rate_each_member_as_its_share_of_the_team() -> None:
    outcomes = []
    for i in range(16):  # a+b beat c+d, a+c beat b+d: a is the strongest, d the weakest
        teams, won = ((("a", "b"), ("c", "d")), True) if i % 2 else ((("a", "c"), ("b", "d")), True)
        outcomes.append(Outcome(f"m{i}", f"m{i}", teams, (1.0, 0.0) if won else (0.0, 1.0), (101, 80)))
    order = [r.bot for r in fit_ratings(outcomes).ratings]
    assert order[0] == "a" and order[-1] == "d"


def test_margins_come_with_an_interval_from_their_units() -> None:
    outcomes = [duel(f"m{i}", "a", "b", True, unit=f"u{i // 2}", pts=(101, 60 + i)) for i in range(8)]
    a = fit_ratings(outcomes).ratings[0]
    assert a.margin > 0 and a.margin_low < a.margin < a.margin_high


def test_a_ladder_too_big_for_profile_intervals_is_plain_json() -> None:
    """Past PROFILE_MAX bots the intervals come from the information matrix (NumPy): the rows must still be
    plain Python values, or the ladder cannot be cached or served."""
    import json

    from scheduler.ratings import PROFILE_MAX

    rng = random.Random(3)
    true = {f"b{i:02d}": rng.uniform(1300, 1700) for i in range(PROFILE_MAX + 5)}
    fit = fit_ratings(simulate(true, 1, rng))
    rows = [r.to_json() for r in fit.ratings]
    assert len(rows) == len(true)
    assert json.loads(json.dumps(rows)) == rows
    assert all(type(r["provisional"]) is bool and type(r["games"]) is int for r in rows)


@pytest.mark.parametrize(
    ("f", "a", "b"),
    [
        (lambda v: math.copysign(math.sqrt(abs(v)), v) + 0.3 * v - 0.7, -1.0, 4.0),
        (lambda v: v * v - 3.84, 0.0, 8.0),
        (lambda v: math.tanh(v - 1.3), 6.0, -3.0),
        (lambda v: 3.84 - math.exp(v), -2.0, 5.0),
    ],
)
def test_the_interval_root_finder_answers_as_brentq(f: Any, a: float, b: float) -> None:
    from scipy.optimize import brentq

    from scheduler.numeric import root as _root

    assert _root(f, a, b, 1e-6) == pytest.approx(brentq(f, min(a, b), max(a, b), xtol=1e-9), abs=1e-6)
    with pytest.raises(ValueError, match="no sign change"):
        _root(lambda v: v * v + 1, -1.0, 1.0, 1e-6)


def test_the_sparse_model_of_a_big_league_fits_as_the_dense_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small leagues fit on dense NumPy matrices, big ones (over DENSE_TEAMS teams) on SciPy's sparse ones:
    the same ratings, intervals and LOS either way (here one league, fitted both ways)."""
    import scheduler.ratings as ratings

    rng = random.Random(11)
    bots = [f"b{i}" for i in range(12)]
    outcomes = []
    for i in range(300):
        a, b = rng.sample(bots, 2)
        placing = (1.0, 0.0) if rng.random() < 0.5 + 0.03 * (bots.index(a) - bots.index(b)) else (0.0, 1.0)
        outcomes.append(Outcome(f"m{i}", f"u{i}", ((a,), (b,)), placing, (100, 90)))
    dense = fit_ratings(outcomes)
    monkeypatch.setattr(ratings, "DENSE_TEAMS", 0)
    sparse = fit_ratings(outcomes)
    for d, s in zip(dense.ratings, sparse.ratings, strict=True):
        assert d.bot == s.bot
        assert (d.rating, d.low, d.high) == pytest.approx((s.rating, s.low, s.high), abs=1e-6)
    assert dense.los("b3", "b7") == pytest.approx(sparse.los("b3", "b7"), abs=1e-9)
