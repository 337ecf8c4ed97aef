"""Running a league: plan it, feed its matches to the workers, resume, report.

A league (:class:`store.leagues.League`) becomes a plan of matches with stable
ids (:mod:`scheduler.pairings`). The scheduler *feeds* the Celery queue: it
keeps a window of matches in flight and enqueues more as results land.
Stopping it loses nothing: a restarted scheduler recomputes the same plan,
skips what is done and re-enqueues everything unfinished (a duplicate delivery
is harmless: the worker's lease and the idempotent commit make sure a match
counts once).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from scheduler.pairings import PlannedMatch, plan_gauntlet, plan_round_robin, plan_tables
from store.leagues import League, LeagueError, LeagueStatus, LeagueStore

TASK_NAME = "tablanette.play_match"


def plan_league(league: League) -> list[PlannedMatch]:
    """The league's matches (pure: the same parameters give the same plan)."""
    seed = league.seed or league.league_id
    if league.rules.players > 2:
        return plan_tables(league.bots, league.rules.players, league.rules.partnerships, seed, league.mirrored)
    if league.format == "gauntlet":
        if not league.champion:
            raise LeagueError("a gauntlet needs a champion (--champion BOT)")
        return plan_gauntlet(league.champion, league.bots, league.games, seed, league.mirrored)
    return plan_round_robin(league.bots, league.games, seed, league.format == "double-round-robin", league.mirrored)


def prepare(store: LeagueStore, league_id: str) -> list[PlannedMatch]:
    """Write the league's plan (once) and mark it running; returns the plan."""
    league = store.load(league_id)
    plan = plan_league(league)
    store.write_plan(league, plan)
    return plan


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
    prepare(store, league_id)
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
