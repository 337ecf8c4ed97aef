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
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import redis

from engine_service.rules import Rules, TablanetteError

from .codec import text, text_map
from .deal_policy import decide, who_may_remember
from .deal_seeds import DealSecrets, DealSeeds
from .keys import Keys, LeagueKeys
from .league_settings import League, LeagueError, check, loaded, stored
from .league_status import LeagueStatus
from .ledger import Ledger
from .membership import joined, left
from .quarantine import Quarantines, held, with_request
from .tokens import NAME_RE
from .upgrade import LeagueUpgrades
from .versions import Versions

__all__ = [
    "STATUSES",
    "TROUBLE_FIELDS",
    "League",
    "LeagueError",
    "LeagueStore",
    "PlannedMatchLike",
]

# KEYS: the plan, the open-deals hash, then one match hash per match. ARGV: per match its id, seats (JSON), seed,
# round, shared deal ('' for a deal of its own). A match is added (hash filled, id pushed on the plan) only if its
# hash has no seats yet: idempotent. A game sharing a deal counts in its deal's open games until it is done (the
# commit counts it out); a match planned before deals were counted gets its deal (and its count, unless it is done)
# the first time its plan is written again, so a running league's shared deals are held back from then on.
_EXTEND = """
local added = 0
for i = 3, #KEYS do
  local a = (i - 3) * 5
  local deal = ARGV[a + 5]
  if redis.call('HSETNX', KEYS[i], 'seats', ARGV[a + 2]) == 1 then
    redis.call('HSET', KEYS[i], 'seed', ARGV[a + 3], 'round', ARGV[a + 4], 'status', 'planned')
    redis.call('RPUSH', KEYS[1], ARGV[a + 1])
    if deal ~= '' then
      redis.call('HSET', KEYS[i], 'deal', deal)
      redis.call('HINCRBY', KEYS[2], deal, 1)
    end
    added = added + 1
  elseif deal ~= '' and redis.call('HSETNX', KEYS[i], 'deal', deal) == 1
      and redis.call('HGET', KEYS[i], 'status') ~= 'done' then
    redis.call('HINCRBY', KEYS[2], deal, 1)
  end
end
return added
"""
# KEYS: the league's meta hash. A finished league (every match played, none failed) has nothing to cancel and
# keeps its status; any other becomes cancelled. In one step, so a league finishing meanwhile is never relabelled.
_CANCEL = """
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'finished' then
  return status
end
redis.call('HSET', KEYS[1], 'status', 'cancelled')
return 'cancelled'
"""
# KEYS: the plan, the open-deals hash, the queued set, the match, its lease. ARGV: the match id, '1' if a queued
# match may go too. A match not played yet, that nobody holds the lease of, leaves the plan: its hash goes, and
# its shared deal counts one game fewer. A worker that takes the lease afterwards finds no match and drops it.
_WITHDRAW = """
local status = redis.call('HGET', KEYS[4], 'status')
if not (status == 'planned' or (status == 'queued' and ARGV[2] == '1')) then return 0 end
if redis.call('EXISTS', KEYS[5]) == 1 then return 0 end
local deal = redis.call('HGET', KEYS[4], 'deal')
redis.call('LREM', KEYS[1], -1, ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[4])
if deal and deal ~= '' and redis.call('HINCRBY', KEYS[2], deal, -1) <= 0 then
  redis.call('HDEL', KEYS[2], deal)
end
return 1
"""
TROUBLE_FIELDS = ("status", "seats", "attempts", "interruptions", "first_error", "error", "interrupted", "waiting")
STATUSES = ("created", "running", "waiting", "paused", "finished", "incomplete", "cancelled")
"""A league's status: ``waiting`` (only matches of absent bots are left, within the absence
limit), ``paused`` (past it, under ``absent_action = pause``), ``incomplete`` (every match is
over but some failed: ``league retry`` plays them again)."""


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
    @property
    def deal(self) -> str: ...


class LeagueStore(Quarantines):
    """Reads and writes leagues under one key prefix (a league's quarantines: :class:`Quarantines`)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self.ledger = Ledger(client)
        self._extend = client.register_script(_EXTEND)
        self._cancel = client.register_script(_CANCEL)
        self._withdraw = client.register_script(_WITHDRAW)
        self._upgrades = LeagueUpgrades(client)

    def keys(self, league_id: str) -> LeagueKeys:
        return Keys(self.prefix).league(league_id)

    # --------------------------------------------------------- create / load

    def create(self, league: League) -> None:
        if not NAME_RE.match(league.league_id):
            raise LeagueError(f"league name {league.league_id!r} must be 1-64 letters, digits, '_', '.' or '-'")
        check(league)
        if league.reference and (league.format not in ("gauntlet", "standing") or league.rules.players != 2):
            raise LeagueError(
                "a reference ladder places newcomers in a two-player gauntlet or standing ladder: give "
                "--format gauntlet or --format standing"
            )
        if not self.r.sadd(Keys(self.prefix).leagues, league.league_id):
            raise LeagueError(f"league {league.league_id!r} already exists")
        if not league.seed:  # secret deals, unless the operator asks for public ones
            DealSecrets(self.r).create(self.keys(league.league_id))
        self._save(league)

    def _save(self, league: League) -> None:
        self.r.hset(self.keys(league.league_id).meta, mapping=stored(league))

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
        return loaded(league_id, rules, meta)

    def settle_deals(self, league: League) -> League:
        """Decide, once, how the league deals (:attr:`League.dealt`, from its ``deals`` and who among its bots
        may remember a deal: :mod:`store.deal_policy`); the league as it now plays."""
        if not league.dealt:
            league.dealt = decide(league.deals, self.who_may_remember(league))
            self.r.hset(self.keys(league.league_id).meta, "dealt", league.dealt)
        return league

    def who_may_remember(self, league: League) -> dict[str, str]:
        """The league's bots that could carry a deal from one game to another, with why."""
        return who_may_remember(Versions(self.r, self.prefix), league.bots)

    def deal_seeds(self, league: League) -> DealSeeds:
        """Where the league's deals come from: its secret, or (``--seed``, or a league created before secret
        deals, which deals from its name) a public text."""
        return DealSecrets(self.r).seeds(self.keys(league.league_id), league.seed or league.league_id)

    def delete(self, league_id: str) -> bool:
        """Remove a league and everything it holds (its plan, matches, records, ratings); False if none."""
        keys = self.keys(league_id)
        doomed = [keys.meta, *self.r.scan_iter(f"{keys.base}:*", count=1000)]
        pipe = self.r.pipeline()
        pipe.srem(Keys(self.prefix).leagues, league_id)
        pipe.delete(*doomed)
        removed = pipe.execute()[0]
        return bool(removed)

    def league_ids(self) -> list[str]:
        return sorted(text(m) for m in self.r.smembers(Keys(self.prefix).leagues))

    def add_bots(self, league_id: str, bots: list[str]) -> League:
        """Add participants: before the league starts, or to a standing ladder at any time, where a hosted
        version retires its older versions (:func:`store.membership.joined`). The league as it now is."""
        versions = Versions(self.r, self.prefix)
        return self._change_members(league_id, lambda league: joined(league, bots, versions.get))

    def remove_bots(self, league_id: str, bots: list[str]) -> League:
        """Take participants out: before the league starts, or from a standing ladder at any time, which keeps
        them as retired with their games (:func:`store.membership.left`). The league as it now is."""
        return self._change_members(league_id, lambda league: left(league, bots))

    def _change_members(self, league_id: str, change: Callable[[League], object]) -> League:
        """Load the league, change its bots, and save them, in one transaction watched on its settings (a
        concurrent change makes this one start again from the league as that change left it)."""
        key = self.keys(league_id).meta
        changed: list[League] = []

        def apply(pipe: redis.client.Pipeline) -> None:
            league = self.load(league_id)
            change(league)
            pipe.multi()
            pipe.hset(key, mapping={"bots": json.dumps(league.bots), "retired": json.dumps(league.retired)})
            changed[:] = [league]

        self.r.transaction(apply, key)
        return changed[0]

    # --------------------------------------------------------- plan / progress

    def write_plan(self, league: League, plan: Sequence[PlannedMatchLike]) -> None:
        """Store the league's plan (what is stored already stays as it was) and mark the league running."""
        if league.status == "cancelled":
            raise LeagueError(f"league {league.league_id!r} was cancelled")
        keys = self.keys(league.league_id)
        self._upgrades.upgrade(keys)  # a league an older arena wrote (store/upgrade.py): its form stays
        pipe = self.r.pipeline()
        for bot in league.bots:
            pipe.zadd(keys.form, {bot: league.initial}, nx=True)
        pipe.hsetnx(keys.meta, "started_at", time.time())
        pipe.execute()
        self.extend_plan(league.league_id, plan)
        if league.status != "finished":
            self.r.hset(keys.meta, "status", "running")

    def extend_plan(self, league_id: str, matches: Sequence[PlannedMatchLike]) -> int:
        """Add matches at the end of the plan; a match id already planned is left alone. How many were new."""
        keys = self.keys(league_id)
        added = 0
        for start in range(0, len(matches), 500):
            chunk = matches[start : start + 500]
            args = [
                x
                for m in chunk
                for x in (m.match_id, json.dumps(list(m.seats), separators=(",", ":")), m.seed, m.round, m.deal)
            ]
            match_keys = [keys.match(m.match_id) for m in chunk]
            added += int(self._extend(keys=[keys.plan, keys.open_deals, *match_keys], args=args))
        return added

    def withdraw(self, league_id: str, match_ids: Sequence[str], queued: bool = False) -> list[str]:
        """Take matches not played yet out of the plan (a standing ladder's, whose bot left or is away): those
        planned, and with ``queued`` those queued too, unless a worker holds one's lease. The ids withdrawn."""
        keys = self.keys(league_id)
        out = []
        for mid in match_ids:
            k = [keys.plan, keys.open_deals, keys.queued, keys.match(mid), keys.lease(mid)]
            if self._withdraw(keys=k, args=[mid, "1" if queued else "0"]):
                out.append(mid)
        return out

    def seats(self, league_id: str) -> dict[str, tuple[str, ...]]:
        """Every planned match's bots, seat by seat."""
        ids = self.match_ids(league_id)
        pipe = self.r.pipeline(transaction=False)
        for mid in ids:
            pipe.hget(self.keys(league_id).match(mid), "seats")
        return {mid: tuple(json.loads(raw or b"[]")) for mid, raw in zip(ids, pipe.execute(), strict=True)}

    def set_note(self, league_id: str, note: dict[str, Any]) -> None:
        """What the league's planner concluded so far (an adaptive ladder's state, an SPRT's decision)."""
        self.r.hset(self.keys(league_id).meta, "planner", json.dumps(note))

    def note(self, league_id: str) -> dict[str, Any]:
        raw = self.r.hget(self.keys(league_id).meta, "planner")
        return dict(json.loads(raw)) if raw else {}

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

    def matches(self, league_id: str, ids: Sequence[str]) -> list[dict[str, str]]:
        """The stored fields of each listed match (one round trip)."""
        pipe = self.r.pipeline(transaction=False)
        for mid in ids:
            pipe.hgetall(self.keys(league_id).match(mid))
        return [text_map(raw) for raw in pipe.execute()]

    def in_flight(self, league_id: str) -> list[str]:
        """Matches queued or running now."""
        keys = self.keys(league_id)
        return sorted(text(m) for state in (keys.queued, keys.running) for m in self.r.smembers(state))

    def troubles(self, league_id: str) -> list[dict[str, str]]:
        """Failed matches, and matches in flight that wait or were interrupted, with why (plan order)."""
        keys = self.keys(league_id)
        ids = sorted({text(m) for m in self.r.smembers(keys.failed)} | set(self.in_flight(league_id)))
        out = []
        for mid, m in zip(ids, self.matches(league_id, ids), strict=True):
            if m.get("status") == "failed" or m.get("waiting") or m.get("interruptions"):
                out.append({"match_id": mid, **{k: m[k] for k in TROUBLE_FIELDS if m.get(k)}})
        return out

    def match(self, league_id: str, match_id: str) -> dict[str, str]:
        """One match's stored fields; empty if none.

        seats, seed, round, status; queued_at, started_at, finished_at, worker;
        ``starts`` (tries that began), ``attempts`` (failures of the match itself),
        ``interruptions`` (tries the arena cut short), ``first_error`` and ``error``,
        ``waiting`` (why it waits now), ``interrupted`` (the last arena fault). A done match keeps
        what its row and the record do not say (the commit drops seed, queued_at, worker and
        waiting, which only a runner needs) and gains result, score, elo and luck.
        """
        return text_map(self.r.hgetall(self.keys(league_id).match(match_id)))

    def mark_queued(self, league_id: str, match_id: str) -> None:
        self.ledger.set_state(self.keys(league_id), match_id, "queued", queued_at=f"{time.time():.3f}")

    def mark_all_queued(self, league_id: str, match_ids: list[str]) -> None:
        """:meth:`mark_queued` for many matches, in one round trip."""
        self.ledger.set_states(self.keys(league_id), match_ids, "queued", queued_at=f"{time.time():.3f}")

    def cancel(self, league_id: str) -> str:
        """Cancel the league: no queued match of it is played any more, finished results stay. The status after:
        ``cancelled``, or ``finished`` for a league whose every match was already played (it stays finished)."""
        self.load(league_id)
        return text(self._cancel(keys=[self.keys(league_id).meta]))

    def is_cancelled(self, league_id: str) -> bool:
        return self.r.hget(self.keys(league_id).meta, "status") == b"cancelled"

    def set_status(self, league_id: str, status: str) -> None:
        """Say what the league is doing (never undoes a cancel)."""
        if status not in STATUSES:
            raise ValueError(f"unknown league status {status!r}")
        if not self.is_cancelled(league_id):
            self.r.hset(self.keys(league_id).meta, "status", status)

    def finish_if_complete(self, league_id: str) -> bool:
        """Once every match is over: ``finished`` if none failed, else ``incomplete`` (never a standing ladder,
        which only waits for its next matches)."""
        st = self.status(league_id)
        if self.r.hget(self.keys(league_id).meta, "format") == b"standing":
            return False
        if st.total and st.remaining == 0 and st.status not in ("cancelled", "finished", "incomplete"):
            status = "incomplete" if st.failed else "finished"
            self.r.hset(self.keys(league_id).meta, mapping={"status": status, "finished_at": time.time()})
            return True
        return False

    def retry_failed(self, league_id: str) -> list[str]:
        """Give every failed match a fresh budget of attempts (it keeps its first cause); their ids."""
        keys = self.keys(league_id)
        failed = sorted(text(m) for m in self.r.smembers(keys.failed))
        for mid in failed:
            self.r.hset(keys.match(mid), "attempts", 0)
            self.ledger.set_state(keys, mid, "planned")
        if failed and self.r.hget(keys.meta, "status") in (b"incomplete", b"finished"):
            self.r.hset(keys.meta, "status", "running")
            self.r.hdel(keys.meta, "finished_at")
        return failed

    # --------------------------------------------------------- who is here, who is gone

    def orphans(self, league_id: str) -> list[str]:
        """Running matches whose lease is gone: their runner died or stalled past the lease."""
        keys = self.keys(league_id)
        running = sorted(text(m) for m in self.r.smembers(keys.running))
        if not running:
            return []
        pipe = self.r.pipeline(transaction=False)
        for mid in running:
            pipe.exists(keys.lease(mid))
        return [mid for mid, held in zip(running, pipe.execute(), strict=True) if not held]

    def requeue(self, league_id: str, match_id: str, reason: str) -> bool:
        """Put an interrupted match back in the queue (counted in ``interruptions``, never in ``attempts``)."""
        keys = self.keys(league_id)
        if not self.ledger.set_state(keys, match_id, "queued", interrupted=reason, queued_at=f"{time.time():.3f}"):
            return False  # it finished meanwhile
        self.r.hincrby(keys.match(match_id), "interruptions", 1)
        return True

    def connected(self, bots: Sequence[str]) -> dict[str, bool]:
        """Which of ``bots`` have a live session on some engine replica."""
        pipe = self.r.pipeline(transaction=False)
        for bot in bots:
            pipe.exists(Keys(self.prefix).session(bot))
        return {bot: bool(n) for bot, n in zip(bots, pipe.execute(), strict=True)}

    def note_presence(self, league_id: str, present: dict[str, bool], now: float) -> dict[str, float]:
        """Record who is absent (and since when: kept across scheduler restarts); bot -> since."""
        key = self.keys(league_id).absent
        gone = [bot for bot, here in present.items() if not here]
        back = [bot for bot, here in present.items() if here]
        pipe = self.r.pipeline(transaction=False)
        for bot in gone:
            pipe.hsetnx(key, bot, now)
        if back:
            pipe.hdel(key, *back)
        pipe.hgetall(key)
        return {bot: float(since) for bot, since in text_map(pipe.execute()[-1]).items()}

    def status(self, league_id: str) -> LeagueStatus:
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(keys.meta)
        pipe.llen(keys.plan)
        pipe.llen(keys.finished_order)
        for state in ("failed", "running", "queued"):
            pipe.scard(keys.state_set(state))
        pipe.hgetall(keys.absent)
        pipe.hgetall(keys.quarantine)
        pipe.hgetall(keys.lift_requests)
        raw, total, done, failed, running, queued, absent, quarantine, asked = pipe.execute()
        meta = text_map(raw)
        if not meta:
            raise LeagueError(f"no league named {league_id!r}")
        started = float(meta["started_at"]) if "started_at" in meta else None
        finished = float(meta["finished_at"]) if "finished_at" in meta else None
        st = LeagueStatus(league_id, meta["status"], total, done, failed, running, queued, started, finished)
        st.absent = {bot: float(since) for bot, since in text_map(absent).items()}
        st.quarantined = {bot: with_request(entry) for bot, entry in held(quarantine, asked).items()}
        if started and done:
            st.rate = done / max((finished or time.time()) - started, 1e-6)
        return st
