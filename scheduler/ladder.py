"""A league's ladder as people read it: fitted ratings with intervals, beside the old Elo as "form".

:func:`ladder` joins the fitted model (:mod:`scheduler.ratings`: rating, 95%
interval, provisional mark, point margin, settled groups) with each bot's
counts (games, W/D/L, conduct) and its incremental Elo, kept as a *form* trend:
it moves with the order results arrive in, which is why it is not the rating.
A league fitted on skill (``League.fitted_on``) is ordered by :mod:`scheduler.skill`
instead, the win/loss rating kept in each row. Every league's ladder also says how
much of the cards' luck the skill fit takes out and what spread that leaves
(``luck_correction``: :mod:`scheduler.luck_coefficient`).

Fitting takes from milliseconds (a few bots) to a couple of seconds (forty bots
with profile-likelihood intervals), so the fitted ladder is cached in Redis
with the number of results behind it; a live league's ladder is refitted at
most every :data:`REFIT_EVERY` seconds, and a finished league's never again.

A standing ladder's scheduler fits it anyway, warm, to choose its pairs
(:mod:`scheduler.standing`), and publishes that fit as the cached ladder
(:func:`publish`); past :data:`STANDING_IN_REQUEST_MAX` results a reader serves
what it published however old (a fit from every result would take seconds
there), so a page of a 10,000-bot ladder answers in milliseconds.

A standing ladder that started a new season (``league season --new``, :mod:`scheduler.seasons`) is fitted on
that season's results only: from :meth:`store.seasons.Seasons.start` on, its rows counting games, wins,
draws and losses from there too (:func:`store.seasons.counts_since`). Every cache says where the results
it was fitted on start (``from``), so a new season is never served an old one's fit.
"""

from __future__ import annotations

import time
from typing import Any

from scheduler.luck_coefficient import luck_coefficient
from scheduler.ratings import Fit, Outcome, fit_ratings
from scheduler.skill import SkillFit, fit_skill
from store.leagues import League
from store.results import LeagueResults
from store.seasons import Seasons, counts_since

REFIT_EVERY = 5.0
"""Seconds: while results keep coming, the cached ladder is at most this old."""
STANDING_IN_REQUEST_MAX = 20_000
"""Past this many results, a standing ladder's readers serve the ladder its scheduler published, never fitting
it themselves (unless nothing was published yet)."""
LUCK_MAX = 20_000
"""Up to this many results, a published standing ladder carries its luck correction (it reads every result);
past it, the last one computed stays."""
LOS_TOP = 100
"""The likelihood-of-superiority matrix cached (and served) covers at most the top this many bots."""


def season_start(results: LeagueResults, league: League) -> int:
    """Where the results the league's ladder is fitted on start: a standing ladder's season's first, else 0."""
    return Seasons(results.r, results.prefix).start(league.league_id) if league.format == "standing" else 0


def season_outcomes(results: LeagueResults, league: League, start: int | None = None) -> list[Outcome]:
    """The results the league's ladder is fitted on (a standing ladder's: its season's), in the order they came."""
    start = season_start(results, league) if start is None else start
    return [Outcome.from_json(o) for o in results.outcomes(league.league_id, start)]


def fit_league(results: LeagueResults, league: League, outcomes: list[Outcome] | None = None) -> Fit:
    """Fit a league's ratings from all its results now (a standing ladder's: its season's; no cache)."""
    if outcomes is None:
        outcomes = season_outcomes(results, league)
    return fit_ratings(outcomes, bots=league.bots, initial=league.initial, threshold=league.confidence)


def fitted(results: LeagueResults, league: League, max_age: float = REFIT_EVERY) -> dict[str, Any]:
    """The league's fitted ladder (JSON), from the cache when it is current or young enough.

    A league fitted on skill also has ``skill``: :func:`scheduler.skill.fit_skill`'s JSON. Every league has
    ``luck_correction``: the luck coefficient and the variance ratio (the skill fit's, or as it would be).
    """
    start = season_start(results, league)
    count = results.outcome_count(league.league_id) - start
    cached = results.cached(league.league_id, "fit")
    if cached and cached.get("from", 0) != start:  # an older season's
        cached = None
    young = cached and (cached["results"] == count or time.time() - cached["computed_at"] < max_age)
    kept = league.format == "standing" and count > STANDING_IN_REQUEST_MAX  # its scheduler refits it
    if cached and (young or kept) and (league.fitted_on == "skill") == ("skill" in cached):
        return cached
    outcomes = season_outcomes(results, league, start)
    fit = fit_league(results, league, outcomes).to_json()
    data = {"results": count, "from": start, "computed_at": time.time(), **fit}
    if league.fitted_on == "skill":
        data["skill"] = fit_skill(outcomes, league.bots, threshold=league.confidence).to_json()
        data["luck_correction"] = data["skill"]["luck_correction"]
    else:
        data["luck_correction"] = luck_coefficient(outcomes).to_json()
    results.cache(league.league_id, "fit", data)
    return data


def publish(results: LeagueResults, league: League, fit: Fit, count: int, start: int = 0) -> dict[str, Any]:
    """Cache ``fit`` (of ``count`` results from the ``start``-th on, with intervals) as the league's fitted
    ladder, as :func:`fitted` would have; a standing ladder's scheduler calls it with its own warm fit. What
    was cached."""
    luck: dict[str, Any] | None = None
    if count <= LUCK_MAX:
        luck = luck_coefficient(season_outcomes(results, league, start)[:count]).to_json()
    elif (last := results.cached(league.league_id, "fit")) and last.get("from", 0) == start:
        luck = last.get("luck_correction")
    data = {"results": count, "from": start, "computed_at": time.time(), **fit.to_json(), "luck_correction": luck}
    results.cache(league.league_id, "fit", data)
    results.cache(league.league_id, "los", {**_los(fit, count, LOS_TOP), "from": start})
    return data


def los_matrix(
    results: LeagueResults, league: League, max_age: float = REFIT_EVERY, top: int | None = LOS_TOP
) -> dict[str, Any]:
    """The likelihood of superiority of every bot over every other among the top ``top``, ladder order (JSON).

    Cached for the top :data:`LOS_TOP` bots; a bigger ``top`` (None: every bot) is computed afresh.
    """
    start = season_start(results, league)
    count = results.outcome_count(league.league_id) - start
    if top is None or top > LOS_TOP:
        return _los(_ordering_fit(results, league), count, top)
    cached = results.cached(league.league_id, "los")
    kept = league.format == "standing" and count > STANDING_IN_REQUEST_MAX  # its scheduler publishes it
    if (
        not cached
        or cached.get("from", 0) != start
        or (cached["results"] != count and time.time() - cached["computed_at"] >= max_age and not kept)
        or cached.get("fit", "win-loss") != league.fitted_on
    ):
        cached = {**_los(_ordering_fit(results, league), count, LOS_TOP), "from": start}
        results.cache(league.league_id, "los", cached)
    return {**cached, "bots": cached["bots"][:top], "los": [row[:top] for row in cached["los"][:top]]}


def _ordering_fit(results: LeagueResults, league: League) -> Fit | SkillFit:
    """The fit that orders the league's ladder: on skill, or on wins and losses."""
    if league.fitted_on == "skill":
        outcomes = season_outcomes(results, league)
        return fit_skill(outcomes, league.bots, threshold=league.confidence)
    return fit_league(results, league)


def _los(fit: Fit | SkillFit, count: int, top: int | None) -> dict[str, Any]:
    order = [r.bot for r in fit.ratings][:top]
    return {
        "results": count,
        "computed_at": time.time(),
        "fit": "skill" if isinstance(fit, SkillFit) else "win-loss",
        "bots": order,
        "los": [[round(fit.los(a, b), 4) for b in order] for a in order],
        "threshold": fit.threshold,
        "total": len(fit.ratings),
    }


def ladder(results: LeagueResults, league: League, limit: int | None = None, offset: int = 0) -> dict[str, Any]:
    """The fitted ladder, best first: rating, interval, provisional, margin, counts, and form (Elo).

    Each row's counts (``games``, wins, draws, losses, points) are the results stored; ``rated_games`` is
    the games its rating was fitted on (fewer for a moment where the fit was published before the last
    results landed: a standing ladder refits as it goes).

    A league fitted on skill is ordered (and grouped) by skill: each row adds ``skill``, its
    ``skill_interval`` and mean ``luck`` (points a match), beside the win/loss rating. ``luck_correction``
    is the luck coefficient and the variance it leaves (None in a ladder cached before it was kept).

    ``limit`` and ``offset`` page through it (ranks stay the whole ladder's); ``total`` is every bot.
    """
    fit = fitted(results, league)
    order = fit.get("skill", fit)  # the fit that orders the ladder
    page = order["ratings"][offset : None if limit is None else offset + limit]
    counts = results.standings_of(league.league_id, [r["bot"] for r in page])
    if fit.get("from"):  # a standing ladder's new season: its games, wins, draws and losses only
        base = Seasons(results.r, results.prefix).base_of(league.league_id, list(counts))
        counts = {bot: counts_since(c, base.get(bot, {})) for bot, c in counts.items()}
    win_loss = {r["bot"]: r for r in fit["ratings"]} if "skill" in fit else {}
    rows = []
    for rank, r in enumerate(page, offset + 1):
        c = counts.get(r["bot"])
        extra = c.to_json() if c is not None else {}
        form = extra.pop("rating", None)
        if win_loss:  # the skill fit's row, beside the win/loss fit's
            r = {**win_loss.get(r["bot"], {}), "skill": r["skill"], "skill_interval": r["interval"], "luck": r["luck"]}
        # the counts (games, W/D/L) as results land; the fit's own count beside them, as rated_games: a
        # standing ladder publishes its fit every few seconds, so the two may differ for a moment
        rows.append({"rank": rank, **r, **extra, "rated_games": r["games"], "form": form})
    skill = {"without_luck": fit["skill"]["without_luck"], "skill_model": fit["skill"]["model"]} if win_loss else {}
    return {
        "league": league.league_id,
        "fit": league.fitted_on,
        **skill,
        "results": fit["results"],
        "season_from": fit.get("from", 0),
        "threshold": fit["threshold"],
        "model": fit["model"],
        "luck_correction": fit.get("luck_correction"),
        "total": len(order["ratings"]),
        "offset": offset,
        "rows": rows,
        "groups": order["groups"],
        "neighbours": order["neighbours"],
    }
