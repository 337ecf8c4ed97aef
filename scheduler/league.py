"""Running a league: plan it, feed its matches to the workers, resume, report.

A league (:class:`store.leagues.League`) becomes a plan of matches with stable
ids (:mod:`scheduler.pairings`). The :class:`Feeder` keeps a window of matches
in flight and enqueues more as results land. It never needs a person:

- **Stopped and started again** (or killed), it recomputes the same plan, skips
  what is done, and re-enqueues everything queued or running (a duplicate
  delivery is harmless: the lease and the idempotent commit make a match count
  once). Failed matches get a fresh budget of attempts (``league retry``).
- **Redis away** (restarted, paused, cut off): its client waits it out
  (:mod:`store.client`) and the queue sender retries the broker. A worker that
  loses the broker drops the message it had reserved but not started, and that
  message then waits in the broker's unacked set for the visibility timeout
  (hours); so after any outage the feeder saw (its client waited one out, a send
  had to wait, or a Redis it watches came back with a new ``run_id``: restarted)
  it re-enqueues every match in flight.
- **A worker killed or stalled**: a running match whose lease has expired is
  put back in the queue within a poll, not after the broker's visibility timeout.
- **A bot not connected**: its matches are held back while the others play, the
  league says ``waiting for X: not connected``; after the league's
  ``absent_timeout`` it either pauses for it or forfeits its remaining matches
  (``absent_action``).
- **A bot in quarantine** (its conduct crossed the league's limits, see
  :class:`store.leagues.League`): its matches are held back like an absent
  bot's, never forfeited or charged to its opponents, until an operator lifts it
  (``league lift``); the league says ``X in quarantine: <why>`` meanwhile.
- **A bot whose account is suspended** (:mod:`store.accounts`): held back the
  same way until the suspension is lifted, never forfeited.
- **A standing ladder** (:mod:`scheduler.standing`) never ends: its bots come
  and go while it runs, an absent one is skipped (never forfeited), and its
  planner reads each result once (:mod:`scheduler.standing_feed`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import redis

from engine_service.rules import Match, finish
from scheduler.outcomes import Outcome
from scheduler.pairings import PlannedMatch, Seed, plan_gauntlet, plan_round_robin, plan_tables
from scheduler.planners import AdaptivePlanner, FixedPlanner, PlacementPlanner, Planner, SprtPlanner
from scheduler.standing import StandingPlanner
from scheduler.standing_feed import StandingKeeper
from store import deal_policy
from store.accounts import Accounts
from store.client import outages_ridden_out
from store.feeder_claim import FeederClaim
from store.league_status import LeagueStatus
from store.leagues import League, LeagueError, LeagueStore
from store.leases import MatchLease
from store.ledger import NotLeaseHolder
from store.results import LeagueResults
from store.settle import Finished, settle
from store.versions import split_version
from worker.match_runner import SeatConduct

TASK_NAME = "tablanette.play_match"
PRESENCE_EVERY_S = 1.0
"""How often the feeder looks at who is connected, and whether a Redis it watches was restarted."""
ABSENT_WARN_S = 30.0
"""How long a bot may be away before the feeder warns (sooner if the league's ``absent_timeout`` is): a bot
that is starting (a hosted one its host starts, a program still loading) gets a calm line, not an alarm."""

FORFEIT_LEASE_MS = 10_000
"""How long the scheduler holds a match's lease to settle it as a forfeit (a few Redis calls)."""

log = logging.getLogger("tablanette.scheduler")


def plan_league(league: League, seeds: Seed | None = None) -> list[PlannedMatch]:
    """The league's first matches (pure: the same parameters give the same plan); all of them
    unless its format plans as it goes (:func:`planner_for`)."""
    return planner_for(league, seeds).initial()


def fewest_bots(league: League) -> int:
    """The fewest bots any league of its seats can start with: two, or a table's seats (each format's own needs,
    a champion say, are its planner's to check)."""
    return max(2, league.rules.players)


def too_few_bots(league: League) -> str:
    """Why the league cannot start with the bots it has ('' when it can: :func:`fewest_bots`)."""
    need, have = fewest_bots(league), len(league.bots)
    if have >= need or league.format == "standing":  # a standing ladder waits for its bots
        return ""
    named = f" ({', '.join(league.bots)})" if league.bots else ""
    return (
        f"league {league.league_id} has {have} bot{'' if have == 1 else 's'}{named}: a {league.rules.players}-seat "
        f"league needs at least {need}; add more with `tablanette league add-bot {league.league_id} BOT ...`"
    )


def planner_for(league: League, seeds: Seed | None = None) -> Planner:
    """What decides the league's matches: a fixed plan, or an adaptive or SPRT planner, dealing from ``seeds``
    (the league's :meth:`~store.leagues.LeagueStore.deal_seeds`; None: public ones from its seed or name).
    A league its planner cannot plan (too few bots, no champion) is a :class:`LeagueError` saying why."""
    try:
        return _planner(league, seeds)
    except LeagueError:
        raise
    except ValueError as exc:
        raise LeagueError(f"league {league.league_id}: {exc}") from None


def _planner(league: League, seeds: Seed | None) -> Planner:
    if league.format == "standing":
        return StandingPlanner(league, seeds)
    if league.format == "adaptive" and league.rules.players == 2:
        return AdaptivePlanner(league, seeds)
    if league.format == "sprt":
        return SprtPlanner(league, seeds)
    if league.format == "gauntlet" and league.reference and league.rules.players == 2:
        return PlacementPlanner(league, seeds)
    return FixedPlanner(_fixed_plan(league, seeds))


def _fixed_plan(league: League, seeds: Seed | None) -> list[PlannedMatch]:
    seed = seeds if seeds is not None else league.seed or league.league_id
    if league.rules.players > 2:
        return plan_tables(league.bots, league.rules.players, league.rules.partnerships, seed, league.mirrored)
    if league.format == "gauntlet":
        if not league.champion:
            raise LeagueError("a gauntlet needs a champion (--champion BOT)")
        return plan_gauntlet(league.champion, league.bots, league.games, seed, league.mirrored)
    return plan_round_robin(league.bots, league.games, seed, league.format == "double-round-robin", league.mirrored)


def prepare(store: LeagueStore, league_id: str) -> list[PlannedMatch]:
    """Write the league's (first) plan and mark it running; returns that plan."""
    league = store.settle_deals(store.load(league_id))
    plan = plan_league(league, store.deal_seeds(league))
    store.write_plan(league, plan)
    return plan


@dataclass
class Feeder:
    """Feeds one league to the workers until every match is over (see the module's doc)."""

    store: LeagueStore
    league_id: str
    enqueue: Callable[[str, str], None]
    window: int = 8
    """Matches kept in flight (0: all at once)."""
    poll: float = 0.2
    on_progress: Callable[[LeagueStatus], None] | None = None
    should_stop: Callable[[], bool] = lambda: False
    clock: Callable[[], float] = time.time
    planner: Planner = field(default_factory=lambda: FixedPlanner([]))
    seats: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fresh: list[str] = field(default_factory=list)
    absent: dict[str, float] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set)
    """Absent bots already warned about (once an absence)."""
    quarantined: set[str] = field(default_factory=set)
    watch: Sequence[redis.Redis] = ()
    """Other Redis servers whose restart may lose matches in flight (the broker, when it is not the store)."""
    claim_ms: int = 10_000
    """The life of the league's feeder claim (:mod:`store.feeder_claim`): one scheduler a league."""
    _presence_at: float = 0.0
    _outages: tuple[object, ...] = ()
    """What :meth:`_outage_mark` said at the last re-send."""
    _run_ids: tuple[object, ...] = ()
    _run_ids_at: float = 0.0
    _planned: list[PlannedMatch] = field(default_factory=list)
    """Every match planned, in plan order (only grows: what the planner was shown stays where it was)."""
    _outcomes: list[Outcome] = field(default_factory=list)
    """Every result read so far (only grows; a standing ladder's planner keeps none: its keeper reads them)."""
    _keeper: StandingKeeper | None = None

    @property
    def results(self) -> LeagueResults:
        return LeagueResults(self.store.r, self.store.prefix)

    def run(self) -> LeagueStatus:
        """Feed the league until it is over (or told to stop, or another scheduler took it over)."""
        if short := too_few_bots(self.store.load(self.league_id)):
            raise LeagueError(short)  # before anything is decided or written
        claim = FeederClaim(self.store.r, self.store.prefix, self.league_id, self.claim_ms)
        if not claim.take(self.should_stop, log.warning):
            return self.store.status(self.league_id)
        try:
            return self._feed(claim)
        finally:
            with contextlib.suppress(redis.RedisError):
                claim.give_back()

    def _feed(self, claim: FeederClaim) -> LeagueStatus:
        league = self.store.settle_deals(self.store.load(self.league_id))
        retried = self.store.retry_failed(self.league_id)
        if retried:
            log.info("league %s: retrying %d failed match(es)", self.league_id, len(retried))
        if warning := deal_policy.warning(league.dealt, self.store.who_may_remember(league)):
            log.warning("league %s: %s", self.league_id, warning)
        self.planner = planner_for(league, self.store.deal_seeds(league))
        self.store.write_plan(league, self.planner.initial())
        self.seats = self.store.seats(self.league_id)  # extensions of an earlier run included
        self._planned = [PlannedMatch(mid, 0, seats, "") for mid, seats in self.seats.items()]
        if isinstance(self.planner, StandingPlanner):
            self._keeper = StandingKeeper(self.store, self.league_id, self.planner)
            self._keeper.start(self.window, self._planned)
        self._outages = self._outage_mark()
        self._resend_in_flight()
        while True:
            if not claim.keep():  # paused past the claim, and another scheduler took over: it feeds now
                log.warning(
                    "league %s: another scheduler (%s) feeds it now; this one stops", self.league_id, claim.holder_now()
                )
                return self.store.status(self.league_id)
            st = self.store.status(self.league_id)
            if self.on_progress is not None:
                self.on_progress(st)
            done = st.remaining == 0 and not self._plan_more(st)
            if st.status == "cancelled" or done or self.should_stop():
                self.store.finish_if_complete(self.league_id)
                return self.store.status(self.league_id)
            self._reclaim_orphans()
            league = self._check_presence(league)
            if not self.fresh:
                self._plan_more(st)
            if self._keeper is not None:
                self._keeper.publish(league)
            self._fill(st)
            self._say_whether_waiting(st, league)
            if (mark := self._outage_mark()) != self._outages:
                self._outages = mark
                log.warning("league %s: after an outage, re-sending every match in flight", self.league_id)
                self._resend_in_flight()
            time.sleep(self.poll)

    def _outage_mark(self) -> tuple[object, ...]:
        """Changes when an outage may have lost a message: one ridden out, a send that waited, a restart."""
        if time.monotonic() - self._run_ids_at >= PRESENCE_EVERY_S or not self._run_ids:
            self._run_ids_at = time.monotonic()
            self._run_ids = tuple(r.info("server").get("run_id") for r in (self.store.r, *self.watch))
        return (outages_ridden_out(), getattr(self.enqueue, "outages", 0), self._run_ids)

    def _plan_more(self, st: LeagueStatus) -> bool:
        """Ask the planner for more matches while the window has room; False once it needs no more."""
        room = 1 if self.window <= 0 else self.window - (st.running + st.queued)
        added = False
        while room > 0:
            in_flight = self.store.in_flight(self.league_id)
            if self._keeper is not None:
                more: list[PlannedMatch] | None = self._keeper.more(self._planned, in_flight)
            else:
                read = self.results.outcomes(self.league_id, len(self._outcomes))
                self._outcomes += [Outcome.from_json(o) for o in read]
                more = self.planner.more(self._outcomes, self._planned, in_flight)
            self.store.set_note(self.league_id, self.planner.note())
            if more is None:
                return added or bool(self.store.in_flight(self.league_id))
            if not more:
                return True
            self.store.extend_plan(self.league_id, more)
            for m in more:
                self.seats[m.match_id] = m.seats
                self.fresh.append(m.match_id)
                self._planned.append(PlannedMatch(m.match_id, 0, m.seats, ""))
            added = True
            room -= len(more)
            if self.window <= 0:
                break
        return True

    def _resend_in_flight(self) -> None:
        """Enqueue again every match queued or running (its message may be lost); keep the planned ones."""
        pending = self.store.unfinished(self.league_id)
        for mid in sorted(mid for mid, s in pending if s in ("queued", "running")):
            self.enqueue(self.league_id, mid)
        self.fresh = [mid for mid, s in pending if s == "planned"]

    def _reclaim_orphans(self) -> None:
        for mid in self.store.orphans(self.league_id):
            worker = self.store.match(self.league_id, mid).get("worker", "?")
            reason = f"worker {worker} stopped answering (its lease expired)"
            if self.store.requeue(self.league_id, mid, reason):
                log.warning("league %s: match %s: %s; queued again", self.league_id, mid, reason)
                self.enqueue(self.league_id, mid)

    def _check_presence(self, league: League) -> League:
        """Who is connected and who is in quarantine (every :data:`PRESENCE_EVERY_S`); the league as it now
        is (a standing ladder's bots change while it runs)."""
        now = self.clock()
        if now - self._presence_at < PRESENCE_EVERY_S:
            return league
        self._presence_at = now
        if self._keeper is not None:
            league = self.store.load(self.league_id)
        absent = self.store.note_presence(self.league_id, self.store.connected(league.bots), now)
        self._say_presence(league, absent, now)
        self.absent = absent
        suspended = Accounts(self.store.r, self.store.prefix).suspended_among(league.bots)
        for bot in sorted(suspended - self.quarantined):
            log.warning("league %s: %s's account is suspended: its matches are held back", self.league_id, bot)
        quarantined = set(self.store.quarantined(self.league_id)) | suspended
        for bot in sorted(quarantined - self.quarantined - suspended):
            log.warning("league %s: %s is in quarantine: its matches are held back", self.league_id, bot)
        for bot in sorted(self.quarantined - quarantined):
            log.info("league %s: %s is out of quarantine", self.league_id, bot)
        self.quarantined = quarantined
        if self._keeper is not None:  # a standing ladder withdraws what would wait, and never forfeits
            withdrawn = set(self._keeper.tick(league, absent, quarantined, now))
            self.fresh = [mid for mid in self.fresh if mid not in withdrawn]
            for mid in withdrawn:
                self.seats.pop(mid, None)
        elif league.absent_action == "forfeit":
            for bot, since in absent.items():
                if now - since >= league.absent_timeout and bot not in suspended:  # held, not the bot's doing
                    self._forfeit_absent(league, bot, now - since)
        return league

    def _say_presence(self, league: League, absent: dict[str, float], now: float) -> None:
        """A calm line for a bot not connected yet, a warning once it has been away past the grace period
        (:data:`ABSENT_WARN_S`, or the league's ``absent_timeout`` if shorter), a line when it is back."""
        for bot in sorted(set(absent) - set(self.absent)):
            starter = " (its host starts it)" if split_version(bot) else ""
            log.info("league %s: waiting for %s to connect%s", self.league_id, bot, starter)
        grace = min(ABSENT_WARN_S, league.absent_timeout)
        for bot, since in sorted(absent.items()):
            if bot not in self.warned and now - since >= grace:
                self.warned.add(bot)
                log.warning("league %s: waiting for %s: not connected for %.0f s", self.league_id, bot, now - since)
        for bot in sorted(set(self.absent) - set(absent)):
            self.warned.discard(bot)
            log.info("league %s: %s is back", self.league_id, bot)

    def _held_back(self, match_id: str) -> bool:
        """The match waits for a bot that is absent or in quarantine."""
        return any(bot in self.absent or bot in self.quarantined for bot in self.seats.get(match_id, ()))

    def _fill(self, st: LeagueStatus) -> None:
        """Enqueue fresh matches up to the window, holding back (for now) those of an absent or quarantined bot."""
        in_flight = st.running + st.queued
        if self.absent or self.quarantined:  # matches held back do not hold the window from the others
            in_flight -= sum(map(self._held_back, self.store.in_flight(self.league_id)))
        open_slots = len(self.fresh) if self.window <= 0 else self.window - in_flight
        held: list[str] = []
        going: list[str] = []
        taken = 0
        for mid in self.fresh:
            if open_slots <= len(going):
                break
            taken += 1
            (held if self._held_back(mid) else going).append(mid)
        self.fresh[:taken] = held
        if not going:
            return
        # Marked queued first: a feeder stopped before sending sends them again (_resend_in_flight).
        self.store.mark_all_queued(self.league_id, going)
        many = getattr(self.enqueue, "many", None)
        if many is not None:
            many(self.league_id, going)
        else:
            for mid in going:
                self.enqueue(self.league_id, mid)

    def _say_whether_waiting(self, st: LeagueStatus, league: League) -> None:
        """``waiting`` (or ``paused`` past the absence limit) while only held-back matches are left."""
        want = "running"
        left = self.fresh + self.store.in_flight(self.league_id)
        if (self.absent or self.quarantined) and all(map(self._held_back, left)):
            overdue = any(self.clock() - since >= league.absent_timeout for since in self.absent.values())
            want = "paused" if overdue and league.absent_action == "pause" else "waiting"
        if st.status != want and st.status in ("running", "waiting", "paused"):
            self.store.set_status(self.league_id, want)

    def _forfeit_absent(self, league: League, bot: str, gone_for: float) -> None:
        """Record the absent bot's remaining unplayed matches (planned or queued) as its forfeits."""
        unplayed = [mid for mid, s in self.store.unfinished(self.league_id) if s in ("planned", "queued")]
        mine = [mid for mid in unplayed if bot in self.seats.get(mid, ())]
        if not mine:
            return
        log.warning(
            "league %s: %s absent for %.0f s: it forfeits its %d remaining match(es)",
            self.league_id,
            bot,
            gone_for,
            len(mine),
        )
        settled = set()
        for mid, spec in zip(mine, self.store.matches(self.league_id, mine), strict=True):
            if self._forfeit(league, mid, spec):
                settled.add(mid)
        self.fresh = [mid for mid in self.fresh if mid not in settled]

    def _forfeit(self, league: League, mid: str, spec: dict[str, str]) -> bool:
        """Settle one unplayed match as a forfeit of its (first) absent bot, holding its lease as a worker
        would: a match a worker has just taken (its lease is held) is being played, and is left to it; the
        commit is fenced, so it cannot land once another holder has the match. True if the match is settled."""
        keys = self.store.keys(self.league_id)
        seats = list(self.seats[mid])
        absent_seats = [s for s, b in enumerate(seats) if b in self.absent]
        lease = MatchLease(self.store.r, keys, mid, FORFEIT_LEASE_MS, f"scheduler/{self.league_id}")
        if not lease.acquire():
            log.info("league %s: match %s is being played: not forfeited", self.league_id, mid)
            return False
        try:
            if self.store.match(self.league_id, mid).get("status") not in ("planned", "queued"):
                return False  # played (or failed) between the look and the lease
            if len(absent_seats) == len(seats):
                self.store.ledger.set_state(keys, mid, "failed", error="every bot of the match was absent")
                return True
            match = Match(league.rules, spec["seed"])
            match.forfeit(absent_seats[0])
            game = finish(match, seats, f"{self.league_id}/{mid}", times_ms=None)
            conduct = [asdict(SeatConduct(forfeit=s == absent_seats[0])) for s in range(len(seats))]
            settle(self.store, league, mid, Finished(game, seats, conduct, spec["seed"]), lease)
            return True
        except NotLeaseHolder:  # the lease ran out under it and another holder took the match: it is theirs
            log.warning("league %s: match %s: lost its lease while forfeiting; left to its holder", self.league_id, mid)
            return False
        finally:
            lease.release()


def feed(
    store: LeagueStore,
    league_id: str,
    enqueue: Callable[[str, str], None],
    window: int = 8,
    poll: float = 0.2,
    on_progress: Callable[[LeagueStatus], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> LeagueStatus:
    """Run the league to the end (:class:`Feeder`); its final status."""
    return Feeder(store, league_id, enqueue, window, poll, on_progress, should_stop).run()
