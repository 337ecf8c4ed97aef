"""``league season``: keep a standing ladder as it stands now, and maybe start a new one.

A standing ladder never ends, so it has no final ladder of its own. :func:`take_season` keeps one: the ladder
at this instant (each bot's rating, interval, games, wins, draws, losses and form), how many results it was
fitted on, when, and the operator's label, as season 1, 2, 3... (:class:`store.seasons.Seasons`: written
once, never changed). The ladder kept is fitted on exactly the season's results up to that instant (one
transaction reads where they end and every count beside them); past
:data:`~scheduler.ladder.STANDING_IN_REQUEST_MAX` results it is the ladder the scheduler published last, as
every reader then serves it (at most :data:`~scheduler.ladder.REFIT_EVERY` seconds old).

With ``new`` the ladder starts afresh at that instant: its fit (the one the scheduler chooses pairs from, and
the one the CLI, the API and the pages show) reads only the results after it
(:func:`scheduler.ladder.season_start`), so every bot is placed again and its minimum share counts the new
season's games. The older results stay stored: matches, replays, records, exports, bot pages.
"""

from __future__ import annotations

from typing import Any

from scheduler.ladder import STANDING_IN_REQUEST_MAX, fit_league, fitted
from scheduler.ratings import Outcome
from store import printable
from store.leagues import League, LeagueStore
from store.results import LeagueResults
from store.seasons import LABEL_CHARS, Cut, Seasons, check_standing


def take_season(
    leagues: LeagueStore, results: LeagueResults, league_id: str, label: str = "", new: bool = False
) -> dict[str, Any]:
    """Keep the standing ladder ``league_id`` as it stands (with ``new``, and start a new season there): the
    season's summary, with its number (``season``). :class:`~store.leagues.LeagueError` for a league that does
    not exist or is not a standing ladder."""
    league = leagues.load(league_id)
    check_standing(league)
    seasons = Seasons(results.r, results.prefix)
    cut = seasons.cut(league_id, [*league.bots, *league.retired])
    fit = _fit_at(results, league, cut)
    rows = _rows(fit, cut)
    summary = {
        "label": printable.line(label, LABEL_CHARS),
        "at": cut.at,
        "results": fit["results"],
        "from": cut.start,
        "to": cut.position,
        "bots": len(rows),
        "leader": rows[0]["bot"] if rows and rows[0]["games"] else None,
        "new": new,
    }
    table = {**summary, "model": fit["model"], "threshold": fit["threshold"], "rows": rows, "groups": fit["groups"]}
    number = seasons.add(league_id, summary, table, cut if new else None)
    if new:  # every reader sees the new season's (empty) ladder at once, not the old one's cache
        fitted(results, league, max_age=0)
    return {"season": number, **summary}


def _fit_at(results: LeagueResults, league: League, cut: Cut) -> dict[str, Any]:
    """The ladder fitted on the season's results up to ``cut`` (JSON, with ``results``: how many); past
    :data:`STANDING_IN_REQUEST_MAX` results, the one its scheduler published last."""
    if cut.results > STANDING_IN_REQUEST_MAX:
        return fitted(results, league)
    raw = results.outcomes(league.league_id, cut.start)[: cut.results]
    fit = fit_league(results, league, [Outcome.from_json(o) for o in raw])
    return {"results": cut.results, **fit.to_json()}


def _rows(fit: dict[str, Any], cut: Cut) -> list[dict[str, Any]]:
    """The ladder's rows, best first: the fit's rating, interval and games beside the season's counts then."""
    rows = []
    for rank, r in enumerate(fit["ratings"], 1):
        counts = cut.season_counts(r["bot"])
        form = cut.form.get(r["bot"])
        rows.append(
            {
                "rank": rank,
                "bot": r["bot"],
                "rating": r["rating"],
                "interval": r["interval"],
                "provisional": r["provisional"],
                "games": r["games"],
                "wins": int(counts["wins"]),
                "draws": int(counts["draws"]),
                "losses": int(counts["losses"]),
                "margin": r["margin"],
                "form": None if form is None else round(form, 1),
            }
        )
    return rows
