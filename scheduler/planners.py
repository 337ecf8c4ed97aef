"""What a league plays next: a fixed plan, or games spent where the ladder is unsure.

A planner gives a league its first matches (:meth:`Planner.initial`) and, as
results land, more of them (:meth:`Planner.more`), until it says the league
needs nothing more. The :class:`~scheduler.league.Feeder` stores every match it
is given (ids are stable, so a restarted scheduler resumes the same league) and
plays them; the planners are pure, so tests and ``bench/rating.py`` drive them
with games played in-process.

- :class:`FixedPlanner`: round-robins, gauntlets and tables, planned in full at once.
- :class:`AdaptivePlanner` (``--format adaptive``): one pair of games per
  pairing as a seed, then pairs between the ladder neighbours whose
  order is least certain, until every neighbour's likelihood of superiority
  passes the league's confidence, or the game budget is spent. A league fitted on
  skill (``League.fitted_on``) reads the neighbours off :mod:`scheduler.skill` instead.
- :class:`SprtPlanner` (``--format sprt``): pairs of games between a challenger
  and the champion until a pentanomial SPRT accepts H0 or H1 (or the budget).
- :class:`PlacementPlanner` (``--format gauntlet --reference A,B,C``): places
  each newcomer on a ladder of reference bots: one pair of games per pairing as a
  seed, then pairs of a newcomer against the reference nearest its
  rating, and between references whose order is unsure, until each newcomer is
  placed (see the class) or the game budget is spent.

A pair of games is two games with the seats swapped, on one deal when the
league's games are mirrored (:attr:`store.leagues.League.mirrored`) and on a
deal each otherwise; the deals come from the league's
:class:`~store.deal_seeds.DealSeeds` (its secret).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from scheduler.pairings import PlannedMatch, Seed, pair_of_games, plan_round_robin
from scheduler.ratings import Fit, Outcome, fit_ratings, game_score
from scheduler.skill import SkillFit, fit_skill
from scheduler.sprt import SPRT
from store.deal_seeds import DealSeeds
from store.leagues import League


class Planner(Protocol):
    def initial(self) -> list[PlannedMatch]: ...

    def more(
        self, outcomes: Sequence[Outcome], planned: Sequence[PlannedMatch], in_flight: Sequence[str]
    ) -> list[PlannedMatch] | None:
        """The next matches; ``[]`` to wait for results in flight; None when the league needs no more."""
        ...

    def note(self) -> dict[str, Any]:
        """What the planner concluded so far (shown with the league)."""
        ...


class FixedPlanner:
    """A plan made in full at the start (the league's format decides it)."""

    def __init__(self, plan: list[PlannedMatch]) -> None:
        self.plan = plan

    def initial(self) -> list[PlannedMatch]:
        return self.plan

    def more(
        self, outcomes: Sequence[Outcome], planned: Sequence[PlannedMatch], in_flight: Sequence[str]
    ) -> list[PlannedMatch] | None:
        return None

    def note(self) -> dict[str, Any]:
        return {}


def _seeds(league: League, seeds: Seed | None) -> DealSeeds:
    """The league's deal seeds as given, or (a league planned without its store, as tests and benches do) public
    ones from its seed or name."""
    return DealSeeds.of(seeds if seeds is not None else league.seed or league.league_id)


def _units_in_flight(planned: Sequence[PlannedMatch], in_flight: Sequence[str]) -> Counter[frozenset[str]]:
    flying = set(in_flight)
    return Counter(frozenset(m.seats) for m in planned if m.match_id in flying)


class AdaptivePlanner:
    """Spend games where the ladder is least sure (see the module's doc)."""

    def __init__(self, league: League, seeds: Seed | None = None) -> None:
        self.league = league
        self.seed = _seeds(league, seeds)
        n = len(league.bots)
        self.budget = league.budget or n * (n - 1) * league.games  # a full double round-robin's games
        self._note: dict[str, Any] = {"settled": False, "budget": self.budget}

    def initial(self) -> list[PlannedMatch]:
        """One pair of games for every pairing: everybody meets everybody once."""
        return plan_round_robin(self.league.bots, games=2, seed=self.seed, double=False, mirrored=self.league.mirrored)

    def more(
        self, outcomes: Sequence[Outcome], planned: Sequence[PlannedMatch], in_flight: Sequence[str]
    ) -> list[PlannedMatch] | None:
        fit: Fit | SkillFit
        if self.league.fitted_on == "skill":
            fit = fit_skill(outcomes, self.league.bots, threshold=self.league.confidence)
        else:
            fit = fit_ratings(
                outcomes, self.league.bots, self.league.initial, threshold=self.league.confidence, intervals=False
            )
        unsure = sorted((los, a, b) for a, b, los in fit.neighbours() if los < self.league.confidence)
        self._note = {
            "settled": not unsure,
            "budget": self.budget,
            "planned": len(planned),
            "unsettled": [[a, b, round(los, 4)] for los, a, b in unsure],
        }
        if not unsure or len(planned) + 2 > self.budget:
            return [] if in_flight else None
        flying = _units_in_flight(planned, in_flight)
        for _, a, b in unsure:  # least sure first; one pair at a time per pairing
            if not flying[frozenset((a, b))]:
                extra = sum(1 for m in planned if m.match_id.startswith("x")) // 2
                return pair_of_games(a, b, self.seed, f"x{extra + 1}", 1000 + extra, self.league.mirrored)
        return []

    def note(self) -> dict[str, Any]:
        return self._note


class SprtPlanner:
    """A challenger against the champion, pair of games after pair of games, until the SPRT decides."""

    def __init__(self, league: League, seeds: Seed | None = None) -> None:
        if len(league.bots) != 2 or not league.champion or league.champion not in league.bots:
            raise ValueError("an sprt league has two bots, one of them the champion (--champion BOT)")
        self.league = league
        self.seed = _seeds(league, seeds)
        self.champion = league.champion
        self.challenger = next(b for b in league.bots if b != league.champion)
        self.test = SPRT(**{k: float(v) for k, v in league.sprt.items()})
        self.budget = league.budget or 4000
        self._note: dict[str, Any] = {}

    def initial(self) -> list[PlannedMatch]:
        return []

    def pentanomial(self, outcomes: Sequence[Outcome]) -> list[int]:
        """Counts of the challenger's pair scores 0, 1/2, 1, 3/2, 2 over the finished pairs of games (``s<n>/g1``
        and ``s<n>/g2``: seats swapped, one deal or two)."""
        units: dict[str, list[Outcome]] = {}
        for o in outcomes:
            units.setdefault(o.match_id.rsplit("/", 1)[0], []).append(o)
        counts = [0] * 5
        for games in units.values():
            if len(games) == 2:
                score = sum(game_score(o, 0 if o.teams[0][0] == self.challenger else 1) for o in games)
                counts[round(score * 2)] += 1
        return counts

    def more(
        self, outcomes: Sequence[Outcome], planned: Sequence[PlannedMatch], in_flight: Sequence[str]
    ) -> list[PlannedMatch] | None:
        decision = self.test.decide(self.pentanomial(outcomes))
        self._note = {
            "challenger": self.challenger,
            "champion": self.champion,
            **decision.to_json(),
            "test": vars(self.test),
        }
        if decision.decision != "none" or len(planned) + 2 > self.budget:
            if decision.decision == "none":
                self._note["decision"] = "budget spent"
            return [] if in_flight else None
        n = len(planned) // 2
        first, second = (self.challenger, self.champion) if n % 2 == 0 else (self.champion, self.challenger)
        return pair_of_games(first, second, self.seed, f"s{n + 1}", n + 1, self.league.mirrored)

    def note(self) -> dict[str, Any]:
        return self._note


PLACED_WITHIN = 75.0
"""A newcomer is placed once its 95% interval is at most this many Elo either side of its rating
(or once every reference is settled above or below it)."""
PLACEMENT_BUDGET = 400
"""The most games a placement plays by default (``--budget`` sets another)."""


def is_placed(half_width: float, los_over_references: Sequence[float], league: League) -> bool:
    """Whether a newcomer is placed: its 95% interval is within :data:`PLACED_WITHIN` Elo either side of its
    rating, or every reference (one or more) is settled above or below it: its likelihood of superiority over
    each is past the league's confidence, one way or the other. (Shared by the placement gauntlet and the
    standing ladder, :mod:`scheduler.standing`.)"""
    c = league.confidence
    settled = bool(los_over_references) and all(not c > los > 1 - c for los in los_over_references)
    return settled or half_width <= PLACED_WITHIN


def nearest_first(rating: float, ratings: dict[str, float]) -> list[str]:
    """The bots of ``ratings`` (bot -> rating), nearest ``rating`` first (ties in the order given): whom a
    newcomer plays (a game against a far stronger or weaker bot says little about it)."""
    return sorted(ratings, key=lambda bot: abs(ratings[bot] - rating))


class PlacementPlanner:
    """Place newcomers on a ladder of reference bots, in as few games as the intervals allow.

    The league's bots are its references (``League.reference``) and its newcomers (the rest).
    It starts as an adaptive league does, with one pair of games for every pairing (each
    newcomer meets each reference, the references meet each other), and then, while results
    land, asks for pairs of games where they teach the most:

    - a newcomer not yet placed plays the reference nearest its rating (a game against a
      far stronger or weaker bot says little), the next nearest while that pair is in flight;
    - references next to each other on the ladder whose order is unsure play each other
      (the ladder a newcomer is placed on must itself be sure).

    A newcomer is *placed* when its 95% interval is within :data:`PLACED_WITHIN` of its
    rating, or when every reference is settled above or below it (likelihood of superiority
    past the league's confidence either way). Newcomers are never paired with each other: a
    placement says where a bot stands among the references only.
    """

    def __init__(self, league: League, seeds: Seed | None = None) -> None:
        self.league = league
        self.seed = _seeds(league, seeds)
        self.references = [b for b in league.bots if b in league.reference]
        self.newcomers = [b for b in league.bots if b not in league.reference]
        missing = [b for b in league.reference if b not in league.bots]
        if missing or len(self.references) < 2 or not self.newcomers:
            raise ValueError(
                "a placement gauntlet needs two references or more, every one of them in the league, and a "
                f"newcomer to place (references: {', '.join(league.reference) or 'none'}; "
                f"not in the league: {', '.join(missing) or 'none'}; newcomers: {', '.join(self.newcomers) or 'none'})"
            )
        self.budget = league.budget or PLACEMENT_BUDGET
        self._note: dict[str, Any] = {"placed": {}, "budget": self.budget}

    def initial(self) -> list[PlannedMatch]:
        mirrored = self.league.mirrored
        plan = plan_round_robin(self.references, games=2, seed=self.seed, double=False, mirrored=mirrored)
        for i, newcomer in enumerate(self.newcomers):
            for j, ref in enumerate(self.references):
                plan += pair_of_games(newcomer, ref, self.seed, f"n{i + 1}r{j + 1}", 500 + i, mirrored)
        return plan

    def more(
        self, outcomes: Sequence[Outcome], planned: Sequence[PlannedMatch], in_flight: Sequence[str]
    ) -> list[PlannedMatch] | None:
        fit = fit_ratings(outcomes, self.league.bots, self.league.initial, threshold=self.league.confidence)
        rating = {r.bot: r for r in fit.ratings}
        wanted: list[tuple[str, str]] = []
        placed: dict[str, Any] = {}
        for newcomer in self.newcomers:
            r = rating[newcomer]
            done = is_placed((r.high - r.low) / 2, [fit.los(newcomer, ref) for ref in self.references], self.league)
            placed[newcomer] = {
                "placed": done,
                "rating": round(r.rating, 1),
                "interval": [round(r.low, 1), round(r.high, 1)],
            }
            if not done:
                nearest = nearest_first(r.rating, {ref: rating[ref].rating for ref in self.references})
                wanted += [(newcomer, ref) for ref in nearest]
        ladder = [r.bot for r in fit.ratings if r.bot in self.references]
        unsure = [(a, b) for a, b in itertools.pairwise(ladder) if fit.los(a, b) < self.league.confidence]
        self._note = {"placed": placed, "budget": self.budget, "planned": len(planned), "unsure": unsure}
        if not wanted and not unsure:
            return [] if in_flight else None
        if len(planned) + 2 > self.budget:
            self._note["budget spent"] = True
            return [] if in_flight else None
        flying = _units_in_flight(planned, in_flight)
        for a, b in [*unsure, *wanted]:
            if not flying[frozenset((a, b))]:
                extra = sum(1 for m in planned if m.match_id.startswith("p")) // 2
                return pair_of_games(a, b, self.seed, f"p{extra + 1}", 2000 + extra, self.league.mirrored)
        return []

    def note(self) -> dict[str, Any]:
        return self._note
