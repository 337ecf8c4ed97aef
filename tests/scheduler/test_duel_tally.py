"""Running sums of duels fit the ladder fit_ratings fits; a warm start and the sparse solver change nothing but
time; the conditional variance is what it says (and never wider than the marginal)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from scheduler import information
from scheduler.duel_tally import DuelTally, TallyError
from scheduler.outcomes import Outcome
from scheduler.ratings import fit_ratings


def duels(n_bots: int, units: int, seed: int, mirrored_share: float = 0.7) -> list[Outcome]:
    """Random duels: mirrored pairs (two games, one unit) and games of their own; wins, losses and draws."""
    rng = random.Random(seed)
    bots = [f"b{i:03d}" for i in range(n_bots)]
    out = []
    for u in range(units):
        a, b = rng.sample(bots, 2)
        for g in range(2 if rng.random() < mirrored_share else 1):
            seats = (a, b) if g == 0 else (b, a)
            r = rng.random()
            placing = (1.0, 0.0) if r < 0.45 else (0.0, 1.0) if r < 0.9 else (0.5, 0.5)
            points = (rng.randint(20, 101), rng.randint(20, 101))
            out.append(Outcome(f"m{u}/g{g}", f"u{u}", ((seats[0],), (seats[1],)), placing, points))
    rng.shuffle(out)  # results land in any order; a unit's two games may be far apart
    return out


@pytest.mark.parametrize("bots", [12, 60])
def test_the_tally_fits_what_fit_ratings_fits(bots: int) -> None:
    outcomes = duels(bots, 500, seed=bots)
    tally = DuelTally()
    for k in range(0, len(outcomes), 97):  # folded in as they land, in batches
        tally.add(outcomes[k : k + 97])
    assert tally.count == len(outcomes)
    want, got = fit_ratings(outcomes), tally.fit(intervals=True)
    assert [r.bot for r in got.ratings] == [r.bot for r in want.ratings]
    for w, g in zip(want.ratings, got.ratings, strict=True):
        assert (g.games, g.provisional) == (w.games, w.provisional)
        for field in ("rating", "low", "high", "margin", "margin_low", "margin_high"):
            assert getattr(g, field) == pytest.approx(getattr(w, field), abs=1e-4), (w.bot, field)
    assert got.los("b001", "b002") == pytest.approx(want.los("b001", "b002"), abs=1e-6)


def test_on_independent_deals_nothing_waits_for_a_second_game() -> None:
    outcomes = duels(10, 200, seed=5, mirrored_share=0.0)
    tally = DuelTally(mirrored=False)
    tally.add(outcomes)
    assert not tally._open
    want = fit_ratings(outcomes)
    assert [r.rating for r in tally.fit().ratings] == pytest.approx([r.rating for r in want.ratings], abs=1e-6)


def test_a_warm_start_lands_on_the_same_fit() -> None:
    outcomes = duels(600, 6000, seed=2)  # past SPARSE_ABOVE: conjugate-gradient steps
    tally = DuelTally()
    tally.add(outcomes[:5000])
    last = tally.fit()
    tally.add(outcomes[5000:])
    cold = tally.fit()
    warm = tally.fit(start=tally.start(dict(zip(tally.names, last.theta, strict=False))))
    assert np.allclose(cold.theta, warm.theta, atol=1e-6)
    assert cold.model is not None and np.abs(cold.model.gradient(cold.theta)).max() < 1e-6


def test_the_sparse_newton_step_solves_as_the_dense_one() -> None:
    tally = DuelTally()
    tally.add(duels(80, 800, seed=4))
    model = tally.model()
    theta = np.zeros(model.n)
    gradient = model.gradient(theta)
    dense = information.newton_step(model.information(theta), gradient)
    assert np.allclose(information.sparse_newton_step(model.information(theta, sparse=True), gradient), dense)


def test_the_conditional_variance_is_exact_for_two_bots_and_never_wider_than_the_marginal() -> None:
    two = DuelTally()
    two.add(duels(2, 40, seed=1))
    fit = two.fit()
    assert fit.model is not None
    info = fit.model.information(fit.theta, sparse=True)
    marginal = np.linalg.inv(fit.model.information(fit.theta))
    wald = (fit.theta[0] - fit.theta[1]) / math.sqrt(marginal[0, 0] + marginal[1, 1] - 2 * marginal[0, 1])
    z = information.conditional_z(fit.theta, info, info.diagonal(), 0, 1)
    assert z == pytest.approx(wald, rel=1e-9)  # with nobody else to condition on, it is the Wald z
    many = DuelTally()
    many.add(duels(30, 300, seed=3))
    fit = many.fit()
    assert fit.model is not None
    sd = information.conditional_sd(fit.model.information(fit.theta, sparse=True))
    assert np.all(sd <= np.sqrt(np.diag(np.linalg.inv(fit.model.information(fit.theta)))) + 1e-12)


def test_past_marginal_max_the_ladder_reads_conditional_intervals(monkeypatch: pytest.MonkeyPatch) -> None:
    import scheduler.ratings as ratings

    monkeypatch.setattr(ratings, "MARGINAL_MAX", 20)
    outcomes = duels(50, 800, seed=6)  # past PROFILE_MAX (40) too
    fit = fit_ratings(outcomes)
    assert fit.model is not None
    sd = information.conditional_sd(fit.model.information(fit.theta, sparse=True))
    row = fit.ratings[0]
    half = (row.high - row.low) / 2
    assert half == pytest.approx(ratings.Z95 * ratings.ELO * sd[fit.index[row.bot]], rel=1e-9)
    assert 0 < fit.los(fit.ratings[0].bot, fit.ratings[-1].bot) <= 1 and fit.to_json()["groups"]


def test_tables_and_a_bot_against_itself_are_refused() -> None:
    table = Outcome("t", "t", (("a",), ("b",), ("c",)), (1.0, 0.0, 0.0), (101, 50, 40))
    with pytest.raises(TallyError, match="one-against-one"):
        DuelTally().add([table])
    with pytest.raises(TallyError, match="against itself"):
        DuelTally().add([Outcome("s", "s", (("a",), ("a",)), (1.0, 0.0), (101, 50))])
