"""A standing ladder's seasons in Redis: the ladders it kept, and where the season now played starts.

``tablanette league season`` (:mod:`scheduler.seasons`) keeps the ladder as it stands: season 1, 2, 3...,
each written once and never changed (:attr:`~store.keys.LeagueKeys.seasons` holds their summaries, in order,
:attr:`~store.keys.LeagueKeys.season_tables` their ladders). With ``--new`` the ladder then starts afresh: the
season now played starts at the league's results so far (:attr:`~store.keys.LeagueKeys.season_start`, a
position in its list of outcomes), and each bot's counts then (:attr:`~store.keys.LeagueKeys.season_base`)
are what its row of the new season's ladder subtracts. The results themselves stay where they are.

Everything a season records is read at one instant (:meth:`Seasons.cut`, one transaction: a result commits
whole or not at all, :mod:`store.ledger`), so the ladder kept, the counts beside it and the position the new
season starts from agree.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from .codec import text, text_map
from .keys import Keys, LeagueKeys
from .leagues import League, LeagueError
from .results import Standing

COUNTS = ("games", "wins", "draws", "losses", "points", "timeouts", "illegal", "forfeits", "luck_games")
"""A bot's whole-number counts (:meth:`~store.keys.LeagueKeys.stats`) a season's row counts afresh."""
SUMS = ("luck_raw", "luck")
"""Its sums over its matches with luck, counted afresh the same way."""
LABEL_CHARS = 120
"""Longest label a season keeps."""


class SeasonError(LeagueError):
    """No such season (the web answers 404), or seasons asked of a league that is not a standing ladder."""


def check_standing(league: League) -> None:
    """:class:`SeasonError` unless ``league`` is a standing ladder."""
    if league.format != "standing":
        raise SeasonError(
            f"league {league.league_id!r} is a {league.format} league, not a standing ladder: seasons are for "
            "standing ladders (an event league's final ladder is its result)"
        )


def counts_since(row: Standing, base: Mapping[str, float]) -> Standing:
    """``row``'s counts less ``base`` (its counts when the season started): its counts this season."""
    fresh: dict[str, Any] = {f: int(getattr(row, f) - base.get(f, 0)) for f in COUNTS}
    fresh |= {f: round(getattr(row, f) - base.get(f, 0.0), 2) for f in SUMS}
    return dataclasses.replace(row, **fresh)


@dataclass(frozen=True)
class Cut:
    """A standing ladder at one instant: its results so far, where its season starts, each bot's counts."""

    position: int
    """How many results the league has (the length of its outcomes)."""
    start: int
    """Where the season now played starts among them."""
    at: float
    counts: dict[str, dict[str, float]]
    """Each bot's counts so far (every season), as :data:`COUNTS` and :data:`SUMS` name them."""
    base: dict[str, dict[str, float]]
    """Each bot's counts when the season now played started."""
    form: dict[str, float]
    """Each bot's form (the incremental Elo)."""

    @property
    def results(self) -> int:
        """The season's results so far."""
        return self.position - self.start

    def season_counts(self, bot: str) -> dict[str, float]:
        """The bot's counts this season."""
        now, base = self.counts.get(bot, {}), self.base.get(bot, {})
        return {f: round(now.get(f, 0) - base.get(f, 0), 2) for f in (*COUNTS, *SUMS)}


class Seasons:
    """A standing ladder's seasons and the start of the one now played (see the module's doc)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix

    def keys(self, league_id: str) -> LeagueKeys:
        """The league's keys; :class:`LeagueError` if there is no such league."""
        keys = Keys(self.prefix).league(league_id)
        if not self.r.exists(keys.meta):
            raise LeagueError(f"no league named {league_id!r}")
        return keys

    def start(self, league_id: str) -> int:
        """Where the season now played starts among the league's results (0: it has had no new season)."""
        raw = self.r.get(Keys(self.prefix).league(league_id).season_start)
        return int(raw) if raw is not None else 0

    def cut(self, league_id: str, bots: Sequence[str]) -> Cut:
        """The league's results, season start, and ``bots``' counts and form, all at one instant."""
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.llen(keys.outcomes)
        pipe.get(keys.season_start)
        pipe.hgetall(keys.season_base)
        pipe.zrange(keys.form, 0, -1, withscores=True)
        for bot in bots:
            pipe.hgetall(keys.stats(bot))
        position, start, base, form, *stats = pipe.execute()
        return Cut(
            position=int(position),
            start=int(start) if start is not None else 0,
            at=round(time.time(), 3),
            counts={bot: _counts(raw) for bot, raw in zip(bots, stats, strict=True) if raw},
            base={text(b): json.loads(v) for b, v in base.items()},
            form={text(b): float(score) for b, score in form},
        )

    def add(self, league_id: str, summary: dict[str, Any], table: dict[str, Any], new: Cut | None = None) -> int:
        """Keep a season (its ``summary`` and its ladder, ``table``): its number. With ``new`` (the cut the
        ladder was read at), the next season starts there, in the same transaction."""
        keys = self.keys(league_id)
        with self.r.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(keys.seasons)  # type: ignore[no-untyped-call, unused-ignore]
                    number = int(pipe.llen(keys.seasons)) + 1
                    pipe.multi()
                    pipe.rpush(keys.seasons, _json(summary))
                    pipe.hsetnx(keys.season_tables, str(number), _json(table))
                    if new is not None:
                        pipe.set(keys.season_start, new.position)
                        pipe.delete(keys.season_base)
                        if new.counts:
                            pipe.hset(keys.season_base, mapping={b: _json(c) for b, c in new.counts.items()})
                    pipe.execute()
                    return number
                except redis.WatchError:  # another season was kept meanwhile: this one takes the next number
                    continue

    def summaries(self, league_id: str) -> list[dict[str, Any]]:
        """Every season kept, first first, each with its number (``season``)."""
        raw = self.r.lrange(self.keys(league_id).seasons, 0, -1)
        return [{"season": n, **json.loads(s)} for n, s in enumerate(raw, 1)]

    def table(self, league_id: str, number: int) -> dict[str, Any]:
        """Season ``number`` with its ladder; :class:`SeasonError` if there is no such season."""
        keys = self.keys(league_id)
        raw = self.r.hget(keys.season_tables, str(number)) if number >= 1 else None
        if raw is None:
            kept = int(self.r.llen(keys.seasons))
            have = f"it has seasons 1 to {kept}" if kept > 1 else "it has season 1" if kept else "it has none yet"
            raise SeasonError(f"league {league_id!r} has no season {number} ({have})")
        return {"season": number, **json.loads(raw)}

    def base_of(self, league_id: str, bots: Sequence[str]) -> dict[str, dict[str, float]]:
        """The counts ``bots`` had when the season now played started (those that had any)."""
        if not bots:
            return {}
        raw = self.r.hmget(Keys(self.prefix).league(league_id).season_base, list(bots))
        return {bot: json.loads(v) for bot, v in zip(bots, raw, strict=True) if v is not None}


def _counts(raw: Mapping[Any, Any]) -> dict[str, float]:
    stats = text_map(raw)
    return {f: int(stats.get(f, 0)) for f in COUNTS} | {f: float(stats.get(f, 0.0)) for f in SUMS}


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))
