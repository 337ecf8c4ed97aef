"""A league played in-process, without Redis, workers or gRPC: the planners and the rating model
on real games of built-in bots, for tests and ``bench/rating.py``.

:func:`play_league` drives a :class:`~scheduler.planners.Planner` exactly as the
:class:`~scheduler.league.Feeder` does (initial plan, then more as results land),
plays every match with :func:`bots.play_match`, and turns each into the
:class:`~scheduler.ratings.Outcome` the ledger would store (its luck too, when asked: ``luck=True``).
"""

from __future__ import annotations

from collections.abc import Callable

from bots import make_bot, play_match
from engine_service.rules import Rules
from scheduler.outcomes import Outcome, outcome_of
from scheduler.pairings import PlannedMatch
from scheduler.planners import Planner


def play_planned(rules: Rules, specs: dict[str, str], m: PlannedMatch, luck: bool = False) -> Outcome:
    """Play one planned match in-process: ``specs`` maps each bot name to its built-in spec.

    ``luck``: compute the outcome's luck as the worker does (off by default: it costs more than the play).
    """
    players = [make_bot(specs[b], f"{m.seed}/{m.match_id}/{b}") for b in m.seats]
    return outcome_of(m.match_id, m.seed, m.seats, play_match(rules, m.seed, players), luck)


def play_league(
    planner: Planner,
    rules: Rules,
    specs: dict[str, str],
    after_each: Callable[[list[Outcome]], bool] = lambda outcomes: False,
    luck: bool = False,
) -> list[Outcome]:
    """Play the planner's league to its end (or until ``after_each`` says stop); every outcome, in order.

    ``luck``: each outcome carries its luck, as the worker stores it (needed by a league fitted on skill).
    """
    planned: list[PlannedMatch] = list(planner.initial())
    queue = list(planned)
    outcomes: list[Outcome] = []
    while True:
        while queue:
            outcomes.append(play_planned(rules, specs, queue.pop(0), luck))
            if after_each(outcomes):
                return outcomes
        more = planner.more(outcomes, planned, [])
        if not more:
            return outcomes
        planned += more
        queue += more
