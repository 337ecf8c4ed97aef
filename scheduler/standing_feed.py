"""What the Feeder of a standing ladder does besides feeding it: who is in, what to withdraw, the ladder it shows.

A standing ladder (:mod:`scheduler.standing`) runs for ever while its membership changes, so each time the
:class:`~scheduler.league.Feeder` looks at who is connected (every second), :class:`StandingKeeper`:

- in a ladder open to accounts, brings their new bots in (:mod:`scheduler.admission`);
- reloads the league (bots added or removed by ``league add-bot`` / ``remove-bot``, or by their owners, and
  the versions a newer one retired: :mod:`store.membership`) and tells the planner, with the bots away now
  (not connected, or in quarantine);
- withdraws from the plan (:meth:`store.leagues.LeagueStore.withdraw`) what would only wait: the matches not
  yet sent of a bot that is away (it is paired again once back: no forfeit, no penalty), and the matches not
  yet begun of a bot that left or was retired, or that has been away past the league's ``absent_timeout``;
- tells the planner which matches failed (they no longer fill its queue; ``league retry`` plays them).

After each fit of the planner (at most every :data:`~scheduler.ladder.REFIT_EVERY` seconds) it publishes the
ladder the web and the CLI read (:func:`scheduler.ladder.publish`), with intervals, from the planner's warm fit:
no reader of a large ladder ever fits it. With it, it records each playing bot's fitted rating and interval over
time (:mod:`store.rating_history`: the bots whose rating or interval moved, in one round trip, each bot's line
thinned to a bounded number of points), which the bot page charts.

A restarted scheduler starts its planner from the ladder published last (:meth:`StandingKeeper.start`): its
first fit is warm too.

A new season (``league season --new``: :mod:`store.seasons`) moves where the ladder's results start. The
keeper reads that start each time it reads results, and on a change restarts its planner from it
(:meth:`~scheduler.standing.StandingPlanner.restart`): a running scheduler takes a new season in by itself,
and a restarted one starts from the season's first result.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduler.admission import ADMIT_EVERY, admit
from scheduler.ladder import REFIT_EVERY, publish
from scheduler.pairings import PlannedMatch
from scheduler.ratings import Fit, Outcome
from scheduler.standing import AHEAD, StandingPlanner, latest_versions
from store.codec import text
from store.league_settings import League
from store.leagues import LeagueStore
from store.rating_history import Point, RatingHistory, worth_recording
from store.results import LeagueResults
from store.seasons import Seasons

log = logging.getLogger("tablanette.scheduler")


@dataclass
class StandingKeeper:
    """A standing ladder's membership, withdrawals and published ladder, for its Feeder (see the module's doc)."""

    store: LeagueStore
    league_id: str
    planner: StandingPlanner
    read: int = 0
    """Where the next result to read is in the league's results (the ledger's list only grows)."""
    season: int = 0
    """Where the season the planner fits starts in the league's results."""
    published_at: float = 0.0
    published: int = -1
    """The results behind the ladder published last."""
    admitted_at: float = float("-inf")
    recorded: dict[str, Point] | None = None
    """Each bot's last point of its fitted rating over time (read from Redis at the first publish)."""
    history: RatingHistory = field(init=False)

    def __post_init__(self) -> None:
        self.history = RatingHistory(self.store.r, self.store.prefix)

    @property
    def results(self) -> LeagueResults:
        return LeagueResults(self.store.r, self.store.prefix)

    def start(self, window: int, planned: list[PlannedMatch]) -> None:
        """Keep the queue at twice the matches in flight, start from the ladder published last, and take in
        what was planned and played before (a restart)."""
        self.planner.ahead = 2 * window if window > 0 else AHEAD
        self.season = Seasons(self.store.r, self.store.prefix).start(self.league_id)
        cached = self.results.cached(self.league_id, "fit")
        if cached and cached.get("from", 0) == self.season:
            self.planner.remember({r["bot"]: r["rating"] for r in cached["ratings"] if r["games"]})
        self.planner.absorb(planned, [])
        self._played_before(self.season)
        self.catch_up(planned)

    def catch_up(self, planned: list[PlannedMatch]) -> None:
        """Hand the planner what was planned since, then the results that landed since (each read once); after a
        new season began, every result of the season afresh."""
        self.planner.absorb(planned, [])  # first: what a skipped result finished leaves the queue for good
        self.follow_season()
        fresh = [Outcome.from_json(o) for o in self.results.outcomes(self.league_id, self.read)]
        self.read += len(fresh)
        self.planner.absorb(planned, fresh)

    def follow_season(self) -> None:
        """If a new season began (``league season --new``), restart the planner from its first result (after
        the planner took in every match planned)."""
        season = Seasons(self.store.r, self.store.prefix).start(self.league_id)
        if season != self.season:
            self.planner.restart()
            self._played_before(season)
            self.season = self.read = season
            self.published = -1
            log.info("league %s: a new season from result %d on: its ratings start afresh", self.league_id, season)

    def _played_before(self, season: int) -> None:
        """Skip the results not read yet that came before the season's first (the planner fits none of them):
        only the matches they finished are taken out of its queue (the finished list holds their ids in the
        results' order)."""
        if season > self.read:
            finished = self.store.r.lrange(self.store.keys(self.league_id).finished_order, self.read, season - 1)
            self.planner.drop({text(m) for m in finished})
            self.read = season

    def more(self, planned: list[PlannedMatch], in_flight: list[str]) -> list[PlannedMatch]:
        """The planner's next matches, after what happened since the last call."""
        self.catch_up(planned)
        return self.planner.more((), planned, in_flight)

    def tick(self, league: League, absent: Mapping[str, float], quarantined: set[str], now: float) -> list[str]:
        """Tell the planner who is in and who is away, and withdraw what would only wait; the ids withdrawn.
        A ladder open to accounts (``admit``) first takes in their new bots (:mod:`scheduler.admission`): they
        are in the league the next time it is loaded."""
        if league.admit == "accounts" and now - self.admitted_at >= ADMIT_EVERY:
            self.admitted_at = now
            admit(self.store, league)
        away = set(absent) | quarantined
        self.planner.roster(league, away)
        failed = self.store.r.smembers(self.store.keys(self.league_id).failed)
        self.planner.drop({text(m) for m in failed})
        paired = set(latest_versions(league.bots))
        overdue = {bot for bot, since in absent.items() if now - since >= league.absent_timeout}
        pending = self.planner.pending()
        gone = [mid for mid, seats in pending.items() if any(b not in paired or b in overdue for b in seats)]
        idle = [mid for mid, seats in pending.items() if mid not in gone and not away.isdisjoint(seats)]
        withdrawn = self.store.withdraw(self.league_id, gone, queued=True)
        withdrawn += self.store.withdraw(self.league_id, idle)
        if withdrawn:
            log.info("league %s: withdrew %d match(es) of bots away or gone", self.league_id, len(withdrawn))
        self.planner.drop(withdrawn)
        return withdrawn

    def publish(self, league: League) -> bool:
        """Publish the planner's last fit as the league's ladder, with intervals, if it is new and the last one
        is :data:`~scheduler.ladder.REFIT_EVERY` seconds old; whether it did."""
        if Seasons(self.store.r, self.store.prefix).start(self.league_id) != self.season:
            return False  # an old season's fit: the next catch_up restarts the planner on the new one
        fit, count = self.planner.fit, self.planner.tally.count
        if fit is None or count == self.published or time.monotonic() - self.published_at < REFIT_EVERY:
            return False
        fit = self.planner.shown()
        publish(self.results, league, fit, count, self.season)
        self.record(league, fit, count, time.time())
        self.published, self.published_at = count, time.monotonic()
        return True

    def record(self, league: League, fit: Fit, count: int, now: float) -> dict[str, Point]:
        """Record the fitted rating and interval of each bot that plays (not retired) and has played, when it
        says something its last point did not (:func:`~store.rating_history.worth_recording`), in one round
        trip (two the first time: each bot's last point is read first); the points recorded."""
        members = set(latest_versions(league.bots))
        playing = [r for r in fit.ratings if r.games and r.bot in members]
        fresh = {r.bot: Point.of(now, count, r.rating, r.low, r.high) for r in playing}
        if self.recorded is None:
            self.recorded = self.history.last(self.league_id, list(fresh))
        due = {bot: p for bot, p in fresh.items() if worth_recording(self.recorded.get(bot), p)}
        self.history.record(self.league_id, due)
        self.recorded.update(due)
        return due
