"""A league's ladder as people read it: fitted ratings with intervals, beside the old Elo as "form".

:func:`ladder` joins the fitted model (:mod:`scheduler.ratings`: rating, 95%
interval, provisional mark, point margin, settled groups) with each bot's
counts (games, W/D/L, conduct) and its incremental Elo, kept as a *form* trend:
it moves with the order results arrive in, which is why it is not the rating.

Fitting takes from milliseconds (a few bots) to a couple of seconds (forty bots
with profile-likelihood intervals), so the fitted ladder is cached in Redis
with the number of results behind it; a live league's ladder is refitted at
most every :data:`REFIT_EVERY` seconds, and a finished league's never again.
"""

from __future__ import annotations

import time
from typing import Any

from scheduler.ratings import Fit, Outcome, fit_ratings
from store.leagues import League
from store.results import LeagueResults

REFIT_EVERY = 5.0
"""Seconds: while results keep coming, the cached ladder is at most this old."""


def fit_league(results: LeagueResults, league: League) -> Fit:
    """Fit a league's ratings from all its results now (no cache)."""
    outcomes = [Outcome.from_json(o) for o in results.outcomes(league.league_id)]
    return fit_ratings(outcomes, bots=league.bots, initial=league.initial, threshold=league.confidence)


def fitted(results: LeagueResults, league: League, max_age: float = REFIT_EVERY) -> dict[str, Any]:
    """The league's fitted ladder (JSON), from the cache when it is current or young enough."""
    count = results.outcome_count(league.league_id)
    cached = results.cached(league.league_id, "fit")
    if cached and (cached["results"] == count or time.time() - cached["computed_at"] < max_age):
        return cached
    data = {"results": count, "computed_at": time.time(), **fit_league(results, league).to_json()}
    results.cache(league.league_id, "fit", data)
    return data


def los_matrix(results: LeagueResults, league: League, max_age: float = REFIT_EVERY) -> dict[str, Any]:
    """The likelihood of superiority of every bot over every other, ladder order (JSON, cached)."""
    count = results.outcome_count(league.league_id)
    cached = results.cached(league.league_id, "los")
    if cached and (cached["results"] == count or time.time() - cached["computed_at"] < max_age):
        return cached
    fit = fit_league(results, league)
    data = {
        "results": count,
        "computed_at": time.time(),
        "bots": [r.bot for r in fit.ratings],
        "los": fit.los_matrix(),
        "threshold": fit.threshold,
    }
    results.cache(league.league_id, "los", data)
    return data


def ladder(results: LeagueResults, league: League) -> dict[str, Any]:
    """Every bot, best fitted rating first: rating, interval, provisional, margin, counts, and form (Elo)."""
    fit = fitted(results, league)
    counts = {row.bot: row for row in results.ladder(league.league_id)}
    rows = []
    for rank, r in enumerate(fit["ratings"], 1):
        c = counts.get(r["bot"])
        extra = c.to_json() if c is not None else {}
        form = extra.pop("rating", None)
        rows.append({"rank": rank, **extra, **r, "form": form})
    return {
        "league": league.league_id,
        "results": fit["results"],
        "threshold": fit["threshold"],
        "model": fit["model"],
        "rows": rows,
        "groups": fit["groups"],
        "neighbours": fit["neighbours"],
    }
