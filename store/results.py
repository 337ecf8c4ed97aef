"""Reading a league's results: ladder, head-to-head, matches, rating histories, records.

Everything :meth:`store.ledger.Ledger.commit` wrote, read back in a bounded
number of round trips (pipelines) whatever the league's size: the ladder reads
every bot once, the crosstable only the pairs it shows, match lists only the
page asked for. The web ladder and the CLI read results only through here.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import redis

from engine_service.rules import GameRecord, RecordError, parse_record
from engine_service.rules.compact import decode, decode_full, is_compact

from .codec import text, text_map
from .embargo import Embargo
from .keys import ARCHIVE_FIELD, Keys, LeagueKeys
from .leagues import LeagueError
from .upgrade import LeagueUpgrades

if TYPE_CHECKING:  # the archive brings pyarrow: only a process that reads an archived league loads it
    from .archive import ArchivedLeague

MATCH_FIELDS = ("status", "seats", "result", "finished_at", "elo", "round", "error", "score", "luck")
TROUBLE_FIELDS = ("first_error", "attempts", "interruptions", "interrupted", "waiting")
_PARSED_LIMIT = 32
"""Parsed caches a reader keeps (one or two per league it shows)."""


@dataclass
class Standing:
    """A bot's record in a league: its form (the incremental Elo) and its counts, as the ledger keeps them."""

    bot: str
    rating: float
    """The form."""
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: int = 0
    timeouts: int = 0
    illegal: int = 0
    forfeits: int = 0
    last_played: float | None = None
    luck_games: int = 0
    """Matches with a luck estimate (not forfeited or aborted); the next two sum over them."""
    luck_raw: float = 0.0
    """The bot's point margins (its side's points minus the mean of the others')."""
    luck: float = 0.0
    """The cards' share of those margins (:mod:`engine_service.rules.luck`); the rest is skill."""

    @property
    def points_per_game(self) -> float:
        return self.points / self.games if self.games else 0.0

    def cards(self) -> dict[str, Any]:
        """Per match, over the matches with luck: raw margin = luck + skill (points), and how many."""
        n = self.luck_games
        raw, luck = (self.luck_raw / n, self.luck / n) if n else (0.0, 0.0)
        return {"games": n, "raw": round(raw, 2), "luck": round(luck, 2), "skill": round(raw - luck, 2)}

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "rating": round(self.rating, 1),
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "points_per_game": round(self.points_per_game, 2),
            "timeouts": self.timeouts,
            "illegal": self.illegal,
            "forfeits": self.forfeits,
            "last_played": self.last_played,
            "cards": self.cards(),
        }


class LeagueResults:
    """Read-only access to the results of the leagues under one prefix."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self._upgrades = LeagueUpgrades(client)
        self._parsed: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        """(league, cache) -> (stamp, the cache as parsed when it had that stamp): see :meth:`cached`."""

    def keys(self, league_id: str) -> LeagueKeys:
        """The league's keys; :class:`LeagueError` if there is no such league."""
        keys = Keys(self.prefix).league(league_id)
        if not self.r.exists(keys.meta):
            raise LeagueError(f"no league named {league_id!r}")
        self._upgrades.upgrade(keys)  # a league an older arena wrote (store/upgrade.py)
        return keys

    def ping(self) -> bool:
        return bool(self.r.ping())

    # --------------------------------------------------------- standings: each bot's form and counts

    def standings(self, league_id: str) -> list[Standing]:
        """Every bot, best form first (one pipelined read of all stats)."""
        keys = self.keys(league_id)
        ranked: list[tuple[bytes, float]] = self.r.zrevrange(keys.form, 0, -1, withscores=True)  # type: ignore[assignment]
        pipe = self.r.pipeline(transaction=False)
        for bot, _ in ranked:
            pipe.hgetall(keys.stats(text(bot)))
        return [_row(text(bot), rating, stats) for (bot, rating), stats in zip(ranked, pipe.execute(), strict=True)]

    def standings_of(self, league_id: str, bots: Sequence[str]) -> dict[str, Standing]:
        """The rows of ``bots`` that have one (one pipelined read)."""
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=False)
        for bot in bots:
            pipe.zscore(keys.form, bot)
            pipe.hgetall(keys.stats(bot))
        got = pipe.execute()
        return {
            bot: _row(bot, float(rating), stats)
            for bot, rating, stats in zip(bots, got[::2], got[1::2], strict=True)
            if rating is not None
        }

    def standing(self, league_id: str, bot: str) -> Standing | None:
        keys = self.keys(league_id)
        rating = self.r.zscore(keys.form, bot)
        return None if rating is None else _row(bot, float(rating), self.r.hgetall(keys.stats(bot)))

    def form_rank(self, league_id: str, bot: str) -> int:
        """The bot's place by form (1 is first); the ladder's own order is the fitted ratings'."""
        rank = self.r.zrevrank(self.keys(league_id).form, bot)  # 0-based; typed loosely by redis-py
        return (rank if isinstance(rank, int) else 0) + 1

    def trends(self, league_id: str, bots: Sequence[str], points: int) -> list[list[float]]:
        """Each bot's last ``points`` ratings."""
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=False)
        for bot in bots:
            pipe.lrange(keys.trend(bot), -points, -1)  # a league written before bot-matches held ratings
            pipe.lrange(keys.bot_matches(bot), -points, -1)
        got = pipe.execute()
        return [
            [float(x) for x in legacy] if legacy else [entry["rating"] for entry in _played(entries)]
            for legacy, entries in zip(got[::2], got[1::2], strict=True)
        ]

    def history(self, league_id: str, bot: str, max_points: int) -> tuple[list[dict[str, Any]], int]:
        """At most ``max_points`` evenly spaced ratings of the bot after a match (``match``, ``rating``,
        ``at``: when it finished), and how many there are."""
        keys = self.keys(league_id)
        legacy = int(self.r.llen(keys.history(bot)))  # a league written before bot-matches held ratings
        key = keys.history(bot) if legacy else keys.bot_matches(bot)
        length = legacy or int(self.r.llen(key))
        if not length:
            return [], 0
        step = -(-length // max_points)
        picked = self.r.lrange(key, 0, -1)[::step]
        if legacy:
            return [json.loads(h) for h in picked], length
        changes = _played(picked)
        pipe = self.r.pipeline(transaction=False)
        for change in changes:
            pipe.hget(keys.match(change["match"]), "finished_at")
        for change, at in zip(changes, pipe.execute(), strict=True):
            change["at"] = float(at) if at is not None else None
        return changes, length

    # --------------------------------------------------------- head to head

    def head_to_head(self, league_id: str, bots: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
        """``cells[a][b]``: points and games of ``a`` against ``b``, for the pairs that played."""
        keys = self.keys(league_id)
        fields = [f"{a}\t{b}" for a in bots for b in bots if a != b]
        scores = self.r.hmget(keys.head_to_head, fields) if fields else []
        games = self.r.hmget(keys.head_to_head_games, fields) if fields else []
        cells: dict[str, dict[str, dict[str, float]]] = {a: {} for a in bots}
        for pair, score, played in zip(fields, scores, games, strict=True):
            if played is not None:
                a, b = pair.split("\t")
                cells[a][b] = {"score": float(score or 0), "games": int(played)}
        return cells

    # --------------------------------------------------------- matches

    def match_rows(self, league_id: str, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The listed matches' state and result, in the order given."""
        if not ids:
            return []
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=False)
        for mid in ids:
            pipe.hmget(keys.match(mid), [*MATCH_FIELDS, *TROUBLE_FIELDS])
        return [_match_row(mid, fields) for mid, fields in zip(ids, pipe.execute(), strict=True)]

    def match_exists(self, league_id: str, match_id: str) -> bool:
        return bool(self.r.exists(self.keys(league_id).match(match_id)))

    def finished_ids(self, league_id: str, limit: int, offset: int = 0) -> tuple[list[str], int]:
        """Finished match ids, newest first (``offset`` pages back), and how many have finished."""
        keys = self.keys(league_id)
        total = int(self.r.llen(keys.finished_order))
        if offset >= total:
            return [], total
        start, stop = -(offset + limit), -(offset + 1)
        return [text(m) for m in reversed(self.r.lrange(keys.finished_order, start, stop))], total

    def failed_ids(self, league_id: str) -> list[str]:
        return sorted(text(m) for m in self.r.smembers(self.keys(league_id).failed))

    def bot_match_ids(self, league_id: str, bot: str, limit: int) -> list[str]:
        """The bot's last ``limit`` matches, newest first."""
        keys = self.keys(league_id)
        return [text(m).split("\t", 1)[0] for m in reversed(self.r.lrange(keys.bot_matches(bot), -limit, -1))]

    # --------------------------------------------------------- outcomes and the fitted ladder

    def outcomes(self, league_id: str, start: int = 0) -> list[Any]:
        """Every finished match as the rating model sees it (see :class:`scheduler.ratings.Outcome`), in the order
        they finished; from the ``start``-th on (the list only grows: a reader keeps its place)."""
        return [json.loads(raw) for raw in self.r.lrange(self.keys(league_id).outcomes, start, -1)]

    def outcome_count(self, league_id: str) -> int:
        return int(self.r.llen(self.keys(league_id).outcomes))

    def cached(self, league_id: str, what: str = "fit") -> dict[str, Any] | None:
        """The cached fitted ladder (``fit``) or LOS matrix (``los``), or None.

        The fit of a big league is a few hundred KB of JSON, read by every ladder and bot page: it is
        parsed once per change, not once per page. Each :meth:`cache` writes a new stamp beside it,
        and a reader that holds the parse for the current stamp reads only the stamp. Callers must
        not change what this returns: the same object goes to every caller until the cache changes.
        """
        keys = self.keys(league_id)
        key, field = _cache_keys(keys, what)
        stamp = self.r.hget(keys.fit_stamps, field)
        parsed = self._parsed.get((league_id, field))
        if stamp is not None and parsed is not None and parsed[0] == text(stamp):
            return parsed[1]
        # Read after the stamp, so the data is at least as new as it: at worst parsed again next time.
        raw = self.r.get(key)
        if raw is None:
            return None
        data = dict(json.loads(raw))
        if stamp is None:  # cached before stamps existed: stamp it, and keep the parse from the next read on
            self.r.hsetnx(keys.fit_stamps, field, secrets.token_hex(8))
            return data
        if len(self._parsed) >= _PARSED_LIMIT:
            self._parsed.clear()
        self._parsed[(league_id, field)] = (text(stamp), data)
        return data

    def cache(self, league_id: str, what: str, data: dict[str, Any]) -> None:
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=True)  # the stamp changes with the data, never apart from it
        key, field = _cache_keys(keys, what)
        pipe.set(key, json.dumps(data, separators=(",", ":")))
        pipe.hset(keys.fit_stamps, field, secrets.token_hex(8))
        pipe.execute()

    # --------------------------------------------------------- records

    def record(self, league_id: str, match_id: str) -> GameRecord | None:
        """The match's game record, or None if it has not finished.

        The ledger stores it compact (:mod:`engine_service.rules.compact`), older leagues as JSON:
        either way this is the same record, and :class:`RecordError` names the league and match of
        one that does not decode.
        """
        raw = self.r.hget(self.keys(league_id).records, match_id)
        if raw is None and (archived := self.archived(league_id)) is not None:
            return archived.record(match_id)
        return None if raw is None else stored_record(raw, f"league {league_id}, match {match_id}")

    def move_times(self, league_id: str, match_id: str) -> tuple[int, ...] | None:
        """Each play's move time in ms, in play order (None: not finished, or no times were kept)."""
        raw = self.r.hget(self.keys(league_id).records, match_id)
        if raw is None and (archived := self.archived(league_id)) is not None:
            return archived.move_times(match_id)
        if not isinstance(raw, bytes) or not is_compact(raw):
            return None
        try:
            return decode_full(raw).times_ms
        except RecordError as exc:
            raise RecordError(f"league {league_id}, match {match_id}: {exc}") from None

    def records(self, league_id: str) -> Iterator[GameRecord]:
        """Finished records in plan order (a few hundred per round trip), but for the games held back while a
        game of their deal is not over (:mod:`store.embargo`): an export shows no card still hidden."""
        keys = self.keys(league_id)
        if (archived := self.archived(league_id)) is not None:
            yield from self._archived_records(league_id, archived)
            return
        ids = [text(m) for m in self.r.lrange(keys.plan, 0, -1)]
        embargo = Embargo(self.r, self.prefix)
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            holds = embargo.holds(league_id, batch)
            for mid, raw in zip(batch, self.r.hmget(keys.records, batch), strict=True):
                if raw is not None and mid not in holds:
                    yield stored_record(raw, f"league {league_id}, match {mid}")

    # --------------------------------------------------------- archived leagues (store/archive.py)

    def archived(self, league_id: str) -> ArchivedLeague | None:
        """The league's archive once it is archived (its records then leave Redis), else None."""
        folder = self.r.hget(self.keys(league_id).meta, ARCHIVE_FIELD)
        if folder is None:
            return None
        from .archive import SHELF

        return SHELF.open(text(folder))

    def _archived_records(self, league_id: str, archived: ArchivedLeague) -> Iterator[GameRecord]:
        """An archived league's records in plan order: from the archive, or from Redis for a match the
        archive lacks (one committed after archiving)."""
        keys = self.keys(league_id)
        ids = [text(m) for m in self.r.lrange(keys.plan, 0, -1)]
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            for mid, raw in zip(batch, self.r.hmget(keys.records, batch), strict=True):
                rec = archived.record(mid)
                if rec is not None:
                    yield rec
                elif raw is not None:
                    yield stored_record(raw, f"league {league_id}, match {mid}")


def stored_record(raw: bytes | str, where: str) -> GameRecord:
    """A record as the ledger stored it: a compact blob, or JSON (``{...}``, as older leagues hold).

    :class:`RecordError` names ``where`` (the league and match) when it does not decode.
    """
    data = raw.encode() if isinstance(raw, str) else raw
    try:
        return parse_record(decode(data) if is_compact(data) else json.loads(data))
    except RecordError as exc:
        raise RecordError(f"{where}: {exc}") from None
    except ValueError as exc:  # not JSON, not UTF-8
        raise RecordError(f"{where}: the stored record is neither compact nor JSON: {exc}") from None


def _row(bot: str, rating: float, raw: Mapping[Any, Any]) -> Standing:
    stats = text_map(raw)
    row = Standing(bot, float(rating))
    for f in ("games", "wins", "draws", "losses", "points", "timeouts", "illegal", "forfeits"):
        setattr(row, f, int(stats.get(f, 0)))
    row.last_played = float(stats["last_played"]) if "last_played" in stats else None
    row.luck_games = int(stats.get("luck_games", 0))
    row.luck_raw, row.luck = float(stats.get("luck_raw", 0.0)), float(stats.get("luck", 0.0))
    return row


def _cache_keys(keys: LeagueKeys, what: str) -> tuple[str, str]:
    """The key of the fitted ladder (``fit``) or LOS matrix (``los``) cache, and the field of
    :attr:`LeagueKeys.fit_stamps` its stamp is kept under."""
    return (keys.fit, "fit") if what == "fit" else (keys.fit_los, "fit-los")


def _match_row(match_id: str, fields: Sequence[bytes | None]) -> dict[str, Any]:
    status, seats, result, finished, elo, rnd, error, score, luck = fields[: len(MATCH_FIELDS)]
    troubles = {k: text(v) for k, v in zip(TROUBLE_FIELDS, fields[len(MATCH_FIELDS) :], strict=True) if v}
    return {
        **troubles,
        "match_id": match_id,
        "status": text(status) if status else "planned",
        "seats": json.loads(seats) if seats else [],
        "round": int(rnd) if rnd else None,
        "result": json.loads(result) if result else None,
        "score": json.loads(score) if score else None,
        "finished_at": float(finished) if finished else None,
        "elo": [float(x) for x in json.loads(elo)] if elo else None,
        "error": text(error) if error else None,
        "luck": json.loads(luck) if luck else None,
    }


def _played(entries: Sequence[bytes | str]) -> list[dict[str, Any]]:
    """Bot-matches entries (``match<TAB>rating after``) as ``{match, rating}``."""
    out: list[dict[str, Any]] = []
    for raw in entries:
        mid, rating = text(raw).rsplit("\t", 1)
        out.append({"match": mid, "rating": float(rating)})
    return out
