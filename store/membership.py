"""Who plays in a league: bots added before it starts, and in a standing ladder at any time.

A league's participants are fixed once it starts, except in a standing ladder (``--format standing``),
which never ends: there a bot may join while it runs (and is placed: :mod:`scheduler.standing`), leave,
and a hosted bot's newer version *retires* its older ones. A bot that leaves or is retired moves from
:attr:`~store.league_settings.League.bots` to :attr:`~store.league_settings.League.retired`: it is no longer
paired (nor run by a host), and every game it played stays on the ladder. A bot that left may come back.

:func:`joined` and :func:`left` decide the new membership from the league as loaded, with a clear error
for each thing they refuse; :meth:`store.leagues.LeagueStore.add_bots` and
:meth:`~store.leagues.LeagueStore.remove_bots` write it in one transaction watched on the league's
settings, so two owners adding bots at the same moment both land.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .league_settings import League, LeagueError
from .versions import Version, split_version

OPEN = ("created",)
"""The statuses in which any league takes and drops participants."""
CLOSED = ("cancelled",)
"""The statuses in which even a standing ladder takes no one (a cancelled ladder stays as it ended)."""


def joined(league: League, bots: Sequence[str], version_of: Callable[[str], Version | None]) -> list[str]:
    """Add ``bots`` to ``league`` (changed in place); the older versions that a newer one retired.

    ``version_of`` reads a hosted version (a version joins a rated league once it passed its preflight).
    """
    _may_change(league)
    retired: list[str] = []
    for bot in bots:
        if bot in league.bots:
            raise LeagueError(f"bot {bot!r} is already in league {league.league_id!r}")
        if v := split_version(bot):
            if bot != league.preflight:
                _ready(bot, version_of(bot))
            if league.format == "standing":
                retired += _retire_older(league, bot, v)
        if bot in league.retired:
            league.retired.remove(bot)  # it comes back
        league.bots.append(bot)
    return retired


def left(league: League, bots: Sequence[str]) -> None:
    """Take ``bots`` out of ``league`` (changed in place): a standing ladder keeps them as retired."""
    _may_change(league)
    for bot in bots:
        if bot not in league.bots:
            retired = " (it is retired already)" if bot in league.retired else ""
            raise LeagueError(f"bot {bot!r} is not in league {league.league_id!r}{retired}")
        league.bots.remove(bot)
        if league.format == "standing" and bot not in league.retired:
            league.retired.append(bot)


def _may_change(league: League) -> None:
    if league.format == "standing":
        if league.status in CLOSED:
            raise LeagueError(f"league {league.league_id!r} was cancelled; its participants stay as they were")
    elif league.status not in OPEN:
        raise LeagueError(
            f"league {league.league_id!r} has started; participants are fixed (only a standing ladder takes bots "
            "while it runs)"
        )


def _ready(bot: str, version: Version | None) -> None:
    if version is None:
        raise LeagueError(f"no hosted version {bot!r} (see `tablanette bot versions`)")
    if version.state != "ready":
        why = f": {version.note}" if version.note else ""
        raise LeagueError(
            f"{bot} cannot join a rated league: it is {version.state}{why} "
            "(a version joins once it has passed its preflight)"
        )


def _retire_older(league: League, bot: str, v: tuple[str, int]) -> list[str]:
    """Retire the versions of ``bot``'s bot older than it; refuse it if a newer one plays."""
    name, number = v
    same = [(b, n) for b in league.bots if (w := split_version(b)) and w[0] == name for n in (w[1],)]
    newer = [b for b, n in same if n > number]
    if newer:
        raise LeagueError(
            f"{bot} is older than {', '.join(newer)}, which plays in league {league.league_id!r} already "
            "(a standing ladder pairs a bot's newest version only)"
        )
    older = [b for b, n in same if n < number]
    for b in older:
        league.bots.remove(b)
        if b not in league.retired:
            league.retired.append(b)
    return older
