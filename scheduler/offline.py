"""A league played in-process, without Redis, workers or gRPC: the planners and the rating model
on real games of built-in bots, for tests and ``bench/rating.py``.

:func:`play_league` drives a :class:`~scheduler.planners.Planner` exactly as the
:class:`~scheduler.league.Feeder` does (initial plan, then more as results land),
plays every match with :func:`bots.play_match`, and turns each into the
:class:`~scheduler.ratings.Outcome` the ledger would store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bots import make_bot, play_match
from engine_service.rules import Match, Rules
from scheduler.pairings import PlannedMatch
from scheduler.planners import Planner
from scheduler.ratings import Outcome
from store.ledger import mirror_unit, placing


def outcome_of(match_id: str, seed: str, seats: Sequence[str], match: Match) -> Outcome:
    """What the ledger stores of a finished match, for the rating model."""
    rules, result = match.rules, match.result
    assert result is not None
    forfeit = rules.team_of(result.forfeit_seat) if result.forfeit_seat is not None else None
    teams = tuple(tuple(seats[s] for s in team) for team in rules.teams)
    placed = tuple(placing(match.totals, result.winner, forfeit))
    return Outcome(match_id, mirror_unit(seed, seats), teams, placed, tuple(match.totals))


def play_planned(rules: Rules, specs: dict[str, str], m: PlannedMatch) -> Outcome:
    """Play one planned match in-process: ``specs`` maps each bot name to its built-in spec."""
    players = [make_bot(specs[b], f"{m.seed}/{m.match_id}/{b}") for b in m.seats]
    return outcome_of(m.match_id, m.seed, m.seats, play_match(rules, m.seed, players))


def play_league(
    planner: Planner,
    rules: Rules,
    specs: dict[str, str],
    after_each: Callable[[list[Outcome]], bool] = lambda outcomes: False,
) -> list[Outcome]:
    """Play the planner's league to its end (or until ``after_each`` says stop); every outcome, in order."""
    planned: list[PlannedMatch] = list(planner.initial())
    queue = list(planned)
    outcomes: list[Outcome] = []
    while True:
        while queue:
            outcomes.append(play_planned(rules, specs, queue.pop(0)))
            if after_each(outcomes):
                return outcomes
        more = planner.more(outcomes, planned, [])
        if not more:
            return outcomes
        planned += more
        queue += more
