"""The ladder on skill (scheduler.skill): a synthetic field whose true skills are known.

Margins are drawn as true skill difference + the cards' luck (large, and known to
the fit as each outcome's luck) + a little play noise, so the fit on skill must
order the field and cover the truth, where raw margins alone cannot. All in-process,
well under a second.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from scheduler.outcomes import Outcome
from scheduler.skill import fit_skill

pytestmark = pytest.mark.fast

TRUE = {"ace": 6.0, "jack": 2.0, "ten": -2.0, "two": -6.0}


def field(pairs: int, seed: int = 7, luck_known: bool = True) -> list[Outcome]:
    """``pairs`` mirrored pairs for every pairing; each game: margin = skill gap + luck + noise."""
    rng = random.Random(seed)
    out = []
    for a, b in itertools.combinations(TRUE, 2):
        for p in range(pairs):
            unit = f"{a}-{b}-{p}"
            for g, (x, y) in enumerate(((a, b), (b, a))):
                luck = rng.gauss(0, 25)
                margin = TRUE[x] - TRUE[y] + luck + rng.gauss(0, 3)
                points = (100 + round(margin / 2, 3), 100 - round(margin / 2, 3))
                placing = (1.0, 0.0) if margin > 0 else (0.0, 1.0)
                lk = (luck, -luck) if luck_known else None
                out.append(Outcome(f"{unit}/{g}", unit, ((x,), (y,)), placing, points, lk))  # type: ignore[arg-type]
    return out


def test_orders_a_synthetic_field_and_its_intervals_cover_the_truth() -> None:
    fit = fit_skill(field(pairs=6), threshold=0.95)
    assert [r.bot for r in fit.ratings] == ["ace", "jack", "ten", "two"]
    for r in fit.ratings:
        assert r.low < TRUE[r.bot] < r.high, r
        assert r.high - r.low < 4 and r.games == 36 and not r.provisional
    assert abs(sum(r.skill for r in fit.ratings)) < 1e-9
    assert fit.settled() and fit.los("ace", "two") > 0.999 and fit.los("two", "ace") < 0.001
    assert fit.without_luck == 0


def test_intervals_cover_the_truth_about_95_percent_of_the_time_even_on_few_units() -> None:
    """Two mirrored pairs a pairing (12 units): 100 fields, 400 intervals (about 1 s)."""
    hits = [r.low < TRUE[r.bot] < r.high for seed in range(100) for r in fit_skill(field(2, seed)).ratings]
    assert 0.9 <= sum(hits) / len(hits) <= 0.99


def test_without_luck_the_same_games_cannot_settle_the_field() -> None:
    """The control: the same margins with the luck unknown fall back to raw margins, counted."""
    fit = fit_skill(field(pairs=6, luck_known=False), threshold=0.95)
    assert fit.without_luck == 6 * 6 * 2 and not fit.settled()
    widths = [r.high - r.low for r in fit.ratings]
    assert min(widths) > 10


def test_missing_luck_falls_back_to_raw_or_is_skipped() -> None:
    known = field(pairs=4)
    old = field(pairs=2, seed=9, luck_known=False)
    raw = fit_skill(known + old)
    skipped = fit_skill(known + old, missing="skip")
    assert raw.without_luck == skipped.without_luck == len(old)
    assert {r.bot: r.games for r in skipped.ratings} == {b: 24 for b in TRUE}
    assert {r.bot: r.games for r in raw.ratings} == {b: 36 for b in TRUE}
    assert [r.bot for r in skipped.ratings] == ["ace", "jack", "ten", "two"]
    assert skipped.to_json()["without_luck"] == len(old) and skipped.to_json()["missing"] == "skip"


def test_three_sides_and_mean_luck() -> None:
    """Three teams a match: a team's margin is over the mean of the other two."""
    rng = random.Random(3)
    skill = {"a": 4.0, "b": 0.0, "c": -4.0}
    out = []
    for i in range(40):
        seats = rng.sample(sorted(skill), 3)
        luck = [rng.gauss(0, 20) for _ in seats]
        mean = sum(luck) / 3
        luck = [x - mean for x in luck]
        pts = tuple(60 + skill[b] + lk for b, lk in zip(seats, luck, strict=True))
        margins = tuple(1.5 * lk for lk in luck)  # luck is stored as a margin: l - mean of the others' l
        out.append(Outcome(f"m{i}", f"u{i}", tuple((b,) for b in seats), (0.0, 0.0, 0.0), pts, margins))  # type: ignore[arg-type]
    fit = fit_skill(out)
    assert [r.bot for r in fit.ratings] == ["a", "b", "c"]
    for r in fit.ratings:  # skills summing to 0: s - mean of the others' s = 1.5 s, the fitted margin
        assert r.skill == pytest.approx(skill[r.bot], abs=1e-6)
        assert math.isfinite(r.luck)


def test_provisional_and_unplayed_bots() -> None:
    one = [o for o in field(pairs=1) if o.unit == "ace-jack-0"]
    fit = fit_skill(one, bots=["ace", "jack", "newcomer"])
    assert {r.bot: r.provisional for r in fit.ratings} == {"ace": True, "jack": True, "newcomer": True}
    assert fit.to_json()["ratings"][0]["interval"] is None and fit.los("ace", "jack") == 0.5
    assert fit_skill([]).ratings == []


def test_bad_input_is_refused() -> None:
    bad = Outcome("m", "u", (("a",), ("b",)), (1.0, 0.0), (101, 60), (3.0,))
    with pytest.raises(ValueError, match="luck for 1 teams, it has 2"):
        fit_skill([bad])
    with pytest.raises(ValueError, match="missing must be one of raw, skip"):
        fit_skill([], missing="guess")


def test_an_adaptive_league_on_skill_pairs_by_the_skill_fit() -> None:
    """Real games with their luck (as the worker stores it): the planner reads its neighbours off the skill
    fit. About 2 s (a dozen short matches and their luck)."""
    from engine_service.rules import Rules
    from scheduler.offline import play_league
    from scheduler.planners import AdaptivePlanner
    from store.leagues import League

    rules = Rules.preset("tablic", target=31)
    lg = League("sk", rules, "adaptive", 2, "mirrored", seed="sk", bots=["greedy", "random", "eps"], fit="skill")
    lg.budget = 12
    planner = AdaptivePlanner(lg)
    specs = {"greedy": "greedy", "random": "random", "eps": "greedy:eps=0.05"}  # a close pair: still unsure
    outcomes = play_league(planner, rules, specs, luck=True)
    assert outcomes and all(o.luck is not None and abs(sum(o.luck)) < 0.02 for o in outcomes)
    fit = fit_skill(outcomes, lg.bots, threshold=lg.confidence)
    unsure = sorted((round(los, 4), a, b) for a, b, los in fit.neighbours() if los < lg.confidence)
    assert unsure and planner.note()["unsettled"] == [[a, b, los] for los, a, b in unsure]
    assert fit.ratings[-1].bot == "random"
