"""Leagues in Redis: their settings and participants, their plan, and their progress.

A league is its parameters and participants (``LeagueKeys.meta``) plus a plan
of matches with stable ids (written once by the scheduler). Each match moves
planned -> queued -> running -> done (or failed) through
:meth:`store.ledger.Ledger.set_state` and :meth:`~store.ledger.Ledger.commit`;
this module reads and writes everything else about a league. The match results
themselves are read through :mod:`store.results`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis

from engine_service.rules import Rules, TablanetteError

from .codec import text, text_map
from .keys import Keys, LeagueKeys
from .ledger import Ledger

FORMATS = ("round-robin", "double-round-robin", "gauntlet")


class LeagueError(ValueError):
    """A league that does not exist, or an operation its state does not allow."""


class PlannedMatchLike(Protocol):
    """What the store keeps of a planned match (the scheduler's ``PlannedMatch`` has it)."""

    @property
    def match_id(self) -> str: ...
    @property
    def seats(self) -> Sequence[str]: ...
    @property
    def seed(self) -> str: ...
    @property
    def round(self) -> int: ...


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


class LeagueStore:
    """Reads and writes leagues under one key prefix."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self.ledger = Ledger(client)

    def keys(self, league_id: str) -> LeagueKeys:
        return Keys(self.prefix).league(league_id)

    # --------------------------------------------------------- create / load

    def create(self, league: League) -> None:
        if league.format not in FORMATS:
            raise LeagueError(f"unknown format {league.format!r}; formats: {', '.join(FORMATS)}")
        if not self.r.sadd(Keys(self.prefix).leagues, league.league_id):
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

    def exists(self, league_id: str) -> bool:
        return bool(self.r.exists(self.keys(league_id).meta))

    def load(self, league_id: str) -> League:
        """The league's settings (the one reader of them: CLI, scheduler, workers and web)."""
        meta = text_map(self.r.hgetall(self.keys(league_id).meta))
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
        return sorted(text(m) for m in self.r.smembers(Keys(self.prefix).leagues))

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

    # --------------------------------------------------------- plan / progress

    def write_plan(self, league: League, plan: Sequence[PlannedMatchLike]) -> None:
        """Store the plan once (a second call changes nothing) and mark the league running."""
        if league.status == "cancelled":
            raise LeagueError(f"league {league.league_id!r} was cancelled")
        keys = self.keys(league.league_id)
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

    def match_ids(self, league_id: str) -> list[str]:
        """Every match id of the plan, in plan order."""
        return [text(m) for m in self.r.lrange(self.keys(league_id).plan, 0, -1)]

    def unfinished(self, league_id: str) -> list[tuple[str, str]]:
        """(match id, status) of every match not done or failed, in plan order."""
        keys = self.keys(league_id)
        ids = self.match_ids(league_id)
        pipe = self.r.pipeline(transaction=False)
        for mid in ids:
            pipe.hget(keys.match(mid), "status")
        out = []
        for mid, status in zip(ids, pipe.execute(), strict=True):
            s = text(status or b"planned")
            if s not in ("done", "failed"):
                out.append((mid, s))
        return out

    def match(self, league_id: str, match_id: str) -> dict[str, str]:
        """One match's stored fields (seats, seed, status, deliveries, error, ...); empty if none."""
        return text_map(self.r.hgetall(self.keys(league_id).match(match_id)))

    def mark_queued(self, league_id: str, match_id: str) -> None:
        self.ledger.set_state(self.keys(league_id), match_id, "queued", queued_at=time.time())

    def cancel(self, league_id: str) -> None:
        self.load(league_id)
        self.r.hset(self.keys(league_id).meta, "status", "cancelled")

    def is_cancelled(self, league_id: str) -> bool:
        return self.r.hget(self.keys(league_id).meta, "status") == b"cancelled"

    def finish_if_complete(self, league_id: str) -> bool:
        st = self.status(league_id)
        if st.total and st.remaining == 0 and st.status == "running":
            self.r.hset(self.keys(league_id).meta, mapping={"status": "finished", "finished_at": time.time()})
            return True
        return False

    def status(self, league_id: str) -> LeagueStatus:
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(keys.meta)
        pipe.llen(keys.plan)
        for state in ("done", "failed", "running", "queued"):
            pipe.scard(keys.state_set(state))
        raw, total, done, failed, running, queued = pipe.execute()
        meta = text_map(raw)
        if not meta:
            raise LeagueError(f"no league named {league_id!r}")
        started = float(meta["started_at"]) if "started_at" in meta else None
        finished = float(meta["finished_at"]) if "finished_at" in meta else None
        st = LeagueStatus(league_id, meta["status"], total, done, failed, running, queued, started, finished)
        if started and done:
            st.rate = done / max((finished or time.time()) - started, 1e-6)
        return st
