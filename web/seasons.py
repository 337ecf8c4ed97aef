"""Read models of a standing ladder's seasons (:mod:`store.seasons`) for the JSON API and the season page.

Every text is served printable (:mod:`store.printable`): a label is the operator's, a bot's name its owner's.
"""

from __future__ import annotations

from typing import Any

from store import printable
from store.seasons import Seasons, check_standing
from web.queries import Reads


def _seasons(reads: Reads, league_id: str) -> Seasons:
    """The league's seasons; :class:`~store.leagues.LeagueError` (404) for no such league or one not standing."""
    check_standing(reads.leagues.load(league_id))
    return Seasons(reads.leagues.r, reads.leagues.prefix)


def seasons(reads: Reads, league_id: str) -> dict[str, Any]:
    """Every season the standing ladder kept, first first, and where the season now played starts."""
    kept = _seasons(reads, league_id)
    rows = printable.deep(kept.summaries(league_id))
    return {"league": league_id, "seasons": rows, "current_from": kept.start(league_id)}


def season(reads: Reads, league_id: str, number: int) -> dict[str, Any]:
    """Season ``number`` with the ladder it kept; :class:`~store.seasons.SeasonError` (404) if there is none."""
    table = printable.deep(_seasons(reads, league_id).table(league_id, number))
    return {"league": league_id, **table}
