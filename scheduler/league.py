"""Leagues in Redis: create, plan, feed the workers, resume, report.

A league is its parameters and participants (``<prefix>:league:<id>``) plus a
plan of matches with stable ids (:mod:`scheduler.pairings`). The scheduler
*feeds* the Celery queue: it keeps a window of matches in flight and enqueues
more as results land. Stopping it loses nothing: a restarted scheduler
recomputes the same plan, skips what is done and re-enqueues everything
unfinished (a duplicate delivery is harmless: the worker's lease and the
idempotent commit make sure a match counts once).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import redis

from engine_service.rules import Rules, TablanetteError
from scheduler.pairings import PlannedMatch, plan_gauntlet, plan_round_robin, plan_tables
from worker.ledger import LeagueKeys, set_state, text

FORMATS = ("round-robin", "double-round-robin", "gauntlet")
TASK_NAME = "tablanette.play_match"


class LeagueError(ValueError):
    """A league that does not exist, or an operation its state does not allow."""


@dataclass
class LeagueStatus:
    league: str
    status: str
    total: int
    done: int
    failed: int
    running: int
    queued: int
    started_at: float | None
    finished_at: float | None
    rate: float = 0.0
    """Matches per second over the finished ones."""

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    @property
    def eta_seconds(self) -> float | None:
        return self.remaining / self.rate if self.rate > 0 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "league": self.league,
            "status": self.status,
            "total": self.total,
            "done": self.done,
            "failed": self.failed,
            "running": self.running,
            "queued": self.queued,
            "remaining": self.remaining,
            "eta_seconds": self.eta_seconds,
        }


@dataclass
class LadderRow:
    bot: str
    rating: float
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: int = 0
    timeouts: int = 0
    illegal: int = 0
    forfeits: int = 0
    last_played: float | None = None

    @property
    def points_per_game(self) -> float:
        return self.points / self.games if self.games else 0.0

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
        }


@dataclass
class League:
    """A league's parameters and participants, as stored in Redis."""

    league_id: str
    rules: Rules
    format: str = "round-robin"
    games: int = 2
    mirrored: bool = True
    champion: str | None = None
    k: float = 24.0
    initial: float = 1500.0
    seed: str = ""
    bots: list[str] = field(default_factory=list)
    status: str = "created"

    def plan(self) -> list[PlannedMatch]:
        """The league's matches (pure: the same parameters give the same plan)."""
        seed = self.seed or self.league_id
        if self.rules.players > 2:
            return plan_tables(self.bots, self.rules.players, self.rules.partnerships, seed, self.mirrored)
        if self.format == "gauntlet":
            if not self.champion:
                raise LeagueError("a gauntlet needs a champion (--champion BOT)")
            return plan_gauntlet(self.champion, self.bots, self.games, seed, self.mirrored)
        return plan_round_robin(self.bots, self.games, seed, self.format == "double-round-robin", self.mirrored)


class LeagueStore:
    """Reads and writes leagues under one key prefix."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix

    def keys(self, league_id: str) -> LeagueKeys:
        return LeagueKeys(self.prefix, league_id)

    @property
    def index(self) -> str:
        return f"{self.prefix}:leagues"

    # --------------------------------------------------------- create / load

    def create(self, league: League) -> None:
        if league.format not in FORMATS:
            raise LeagueError(f"unknown format {league.format!r}; formats: {', '.join(FORMATS)}")
        if not self.r.sadd(self.index, league.league_id):
            raise LeagueError(f"league {league.league_id!r} already exists")
        self._save(league)

    def _save(self, league: League) -> None:
        self.r.hset(
            self.keys(league.league_id).meta,
            mapping={
                "rules": json.dumps(league.rules.to_record()),
                "players": league.rules.players,
                "format": league.format,
                "games": league.games,
                "mirrored": int(league.mirrored),
                "champion": league.champion or "",
                "k": league.k,
                "initial": league.initial,
                "seed": league.seed,
                "bots": json.dumps(league.bots),
                "status": league.status,
            },
        )

    def load(self, league_id: str) -> League:
        meta = {text(k): text(v) for k, v in self.r.hgetall(self.keys(league_id).meta).items()}
        if not meta:
            raise LeagueError(f"no league named {league_id!r}")
        try:
            rules = Rules.from_record(json.loads(meta["rules"]), players=int(meta["players"]))
        except (TablanetteError, ValueError) as exc:
            raise LeagueError(f"league {league_id!r} has invalid rules: {exc}") from None
        return League(
            league_id=league_id,
            rules=rules,
            format=meta["format"],
            games=int(meta["games"]),
            mirrored=meta["mirrored"] == "1",
            champion=meta["champion"] or None,
            k=float(meta["k"]),
            initial=float(meta["initial"]),
            seed=meta["seed"],
            bots=json.loads(meta["bots"]),
            status=meta["status"],
        )

    def league_ids(self) -> list[str]:
        return sorted(text(m) for m in self.r.smembers(self.index))

    def add_bots(self, league_id: str, bots: list[str]) -> League:
        league = self.load(league_id)
        if league.status != "created":
            raise LeagueError(f"league {league_id!r} has started; participants are fixed")
        for bot in bots:
            if bot in league.bots:
                raise LeagueError(f"bot {bot!r} is already in league {league_id!r}")
            league.bots.append(bot)
        self._save(league)
        return league

    # --------------------------------------------------------- plan / feed

    def prepare(self, league_id: str) -> list[PlannedMatch]:
        """Write the plan (once) and mark the league running; returns the plan."""
        league = self.load(league_id)
        if league.status == "cancelled":
            raise LeagueError(f"league {league_id!r} was cancelled")
        plan = league.plan()
        keys = self.keys(league_id)
        if not self.r.exists(keys.plan):
            pipe = self.r.pipeline()
            for m in plan:
                pipe.hsetnx(keys.match(m.match_id), "seats", json.dumps(list(m.seats)))
                pipe.hsetnx(keys.match(m.match_id), "seed", m.seed)
                pipe.hsetnx(keys.match(m.match_id), "round", m.round)
                pipe.hsetnx(keys.match(m.match_id), "status", "planned")
            for bot in league.bots:
                pipe.zadd(keys.ladder, {bot: league.initial}, nx=True)
            pipe.rpush(keys.plan, *[m.match_id for m in plan])
            pipe.hsetnx(keys.meta, "started_at", time.time())
            pipe.execute()
        if league.status != "finished":
            self.r.hset(keys.meta, "status", "running")
        return plan

    def unfinished(self, league_id: str) -> list[tuple[str, str]]:
        """(match id, status) of every match not done or failed, in plan order."""
        keys = self.keys(league_id)
        ids = [text(m) for m in self.r.lrange(keys.plan, 0, -1)]
        pipe = self.r.pipeline(transaction=False)
        for mid in ids:
            pipe.hget(keys.match(mid), "status")
        out = []
        for mid, status in zip(ids, pipe.execute(), strict=True):
            s = text(status or b"planned")
            if s not in ("done", "failed"):
                out.append((mid, s))
        return out

    def mark_queued(self, league_id: str, match_id: str) -> None:
        set_state(self.r, self.keys(league_id), match_id, "queued", queued_at=time.time())

    def cancel(self, league_id: str) -> None:
        self.load(league_id)
        self.r.hset(self.keys(league_id).meta, "status", "cancelled")

    def finish_if_complete(self, league_id: str) -> bool:
        st = self.status(league_id)
        if st.total and st.remaining == 0 and st.status == "running":
            self.r.hset(self.keys(league_id).meta, mapping={"status": "finished", "finished_at": time.time()})
            return True
        return False

    # --------------------------------------------------------- reports

    def status(self, league_id: str) -> LeagueStatus:
        keys = self.keys(league_id)
        meta = self.r.hgetall(keys.meta)
        if not meta:
            raise LeagueError(f"no league named {league_id!r}")
        total = self.r.llen(keys.plan)
        done = self.r.scard(keys.done)
        failed = self.r.scard(keys.failed)
        running = self.r.scard(keys.state_set("running"))
        queued = self.r.scard(keys.state_set("queued"))
        started = float(meta[b"started_at"]) if b"started_at" in meta else None
        finished = float(meta[b"finished_at"]) if b"finished_at" in meta else None
        st = LeagueStatus(league_id, text(meta[b"status"]), total, done, failed, running, queued, started, finished)
        if started and done:
            st.rate = done / max((finished or time.time()) - started, 1e-6)
        return st

    def ladder(self, league_id: str) -> list[LadderRow]:
        """Every bot, best rating first (one pipelined read of all stats)."""
        keys = self.keys(league_id)
        ranked: list[tuple[bytes, float]] = self.r.zrevrange(keys.ladder, 0, -1, withscores=True)  # type: ignore[assignment]
        pipe = self.r.pipeline(transaction=False)
        for bot, _ in ranked:
            pipe.hgetall(keys.stats(text(bot)))
        return [_row(text(bot), rating, stats) for (bot, rating), stats in zip(ranked, pipe.execute(), strict=True)]

    def ladder_row(self, league_id: str, bot: str) -> LadderRow | None:
        keys = self.keys(league_id)
        rating = self.r.zscore(keys.ladder, bot)
        return None if rating is None else _row(bot, float(rating), self.r.hgetall(keys.stats(bot)))

    def records(self, league_id: str) -> Iterator[dict[str, Any]]:
        """Finished records in plan order."""
        keys = self.keys(league_id)
        ids = self.r.lrange(keys.plan, 0, -1)
        for start in range(0, len(ids), 500):  # a few hundred records per round trip
            for raw in self.r.hmget(keys.records, ids[start : start + 500]):
                if raw is not None:
                    yield json.loads(raw)


def _row(bot: str, rating: float, raw: Mapping[Any, Any]) -> LadderRow:
    stats = {text(k): text(v) for k, v in raw.items()}
    row = LadderRow(bot, float(rating))
    for f in ("games", "wins", "draws", "losses", "points", "timeouts", "illegal", "forfeits"):
        setattr(row, f, int(stats.get(f, 0)))
    row.last_played = float(stats["last_played"]) if "last_played" in stats else None
    return row


def feed(
    store: LeagueStore,
    league_id: str,
    enqueue: Callable[[str, str], None],
    window: int = 8,
    poll: float = 0.2,
    on_progress: Callable[[LeagueStatus], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> LeagueStatus:
    """Run the league to the end: keep ``window`` matches in flight (0: all at once).

    On entry every match already queued or running (left by an earlier
    scheduler) is enqueued again, so none is skipped if its message was lost.
    """
    store.prepare(league_id)
    pending = store.unfinished(league_id)
    inflight = {mid for mid, s in pending if s in ("queued", "running")}
    for mid in sorted(inflight):
        enqueue(league_id, mid)
    fresh = [mid for mid, s in pending if s == "planned"]
    while True:
        st = store.status(league_id)
        if on_progress is not None:
            on_progress(st)
        if st.status == "cancelled" or st.remaining == 0 or should_stop():
            store.finish_if_complete(league_id)
            return store.status(league_id)
        open_slots = len(fresh) if window <= 0 else window - (st.running + st.queued)
        while open_slots > 0 and fresh:
            mid = fresh.pop(0)
            store.mark_queued(league_id, mid)
            enqueue(league_id, mid)
            open_slots -= 1
        time.sleep(poll)
