"""Read models for the web pages and the JSON API, composed from :mod:`store` reads.

Each function answers one page's question with a bounded number of Redis round
trips, whatever the league's size (see :mod:`store.results`). Nothing here
touches Redis directly. Every text a bot, a build or an owner wrote is served
printable (:mod:`store.printable`), however old its record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis

from engine_service.rules import GameRecord
from engine_service.time_control import TimeControl
from scheduler.fair_play import deals_report
from scheduler.ladder import fitted, los_matrix
from scheduler.ladder import ladder as fitted_ladder
from store import printable
from store.embargo import Embargo, redacted
from store.leagues import League, LeagueError, LeagueStore
from store.rating_history import RatingHistory
from store.results import LeagueResults
from store.versions import Version, Versions

SPARK_POINTS = 30
CHART_POINTS = 400
HIDDEN_REASON = "its program failed (the details are shown to its owner)"
"""A fault's reason as the public reads it when the reason may quote the program (kept before reasons
were kept apart from the program's words: :meth:`store.versions.Versions.add_evidence`)."""


@dataclass(frozen=True)
class Reads:
    """What the web reads: leagues (settings, progress) and their results."""

    leagues: LeagueStore
    results: LeagueResults
    versions: Versions
    embargo: Embargo

    @classmethod
    def open(cls, client: redis.Redis, prefix: str) -> Reads:
        leagues, results = LeagueStore(client, prefix), LeagueResults(client, prefix)
        return cls(leagues, results, Versions(client, prefix), Embargo(client, prefix))

    def rows(self, league_id: str, ids: list[str]) -> list[dict[str, Any]]:
        """The listed matches' rows, each game of a deal not yet over held back (:func:`store.embargo.redacted`)."""
        holds = self.embargo.holds(league_id, ids)
        return [redacted(row, holds.get(row["match_id"])) for row in self.results.match_rows(league_id, ids)]


def leagues(reads: Reads, preflights: bool = False) -> list[dict[str, Any]]:
    """Every league with its progress; a hosted version's preflight league (``preflight``: the version it checks)
    only if ``preflights`` (each is on its version's page, and at its own address)."""
    out = []
    for lid in reads.leagues.league_ids():
        league = reads.leagues.load(lid)
        if league.preflight and not preflights:
            continue
        st = reads.leagues.status(lid)
        out.append(
            {
                "id": lid,
                "status": st.status,
                "preset": league.rules.preset_name,
                "players": league.rules.players,
                "format": league.format,
                "bots": len(league.bots),
                "total": st.total,
                "done": st.done,
                "failed": st.failed,
                "preflight": league.preflight or None,
            }
        )
    return out


def league_summary(reads: Reads, league_id: str) -> dict[str, Any]:
    league = reads.leagues.load(league_id)
    st = reads.leagues.status(league_id)
    return {
        "id": league_id,
        "rules": league.rules.to_record(),
        "players": league.rules.players,
        "teams": [list(t) for t in league.rules.teams],
        "format": league.format,
        "games_per_pairing": league.games,
        "mirrored": league.mirrored,
        "deals": deals_report(reads.leagues, reads.results, league),
        "fit": league.fitted_on,
        "luck_correction": fitted(reads.results, league).get("luck_correction"),
        "k": league.k,
        "initial": league.initial,
        "bots": league.bots,
        "confidence": league.confidence,
        "clock": league.clock,
        "wall_cap_ms": TimeControl.of_league(league).turn_wall_cap_ms or None,
        "latency_credit_ms": league.latency_credit_ms,
        "time_bank_ms": league.time_bank_ms,
        "planner": reads.leagues.note(league_id),
        "progress": {
            **st.to_json(),
            "started_at": st.started_at,
            "finished_at": st.finished_at,
            "matches_per_second": round(st.rate, 3),
        },
    }


def ladder(reads: Reads, league_id: str, limit: int | None = None, offset: int = 0) -> dict[str, Any]:
    """A page of the fitted ladder (:func:`scheduler.ladder.ladder`), each row with its form's sparkline."""
    data = fitted_ladder(reads.results, reads.leagues.load(league_id), limit, offset)
    trends = reads.results.trends(league_id, [row["bot"] for row in data["rows"]], SPARK_POINTS)
    for row, trend in zip(data["rows"], trends, strict=True):
        row["trend"] = trend
    return data


def los(reads: Reads, league_id: str, limit: int = 30) -> dict[str, Any]:
    """The likelihood of superiority among the top ``limit`` bots (:func:`scheduler.ladder.los_matrix`)."""
    return los_matrix(reads.results, reads.leagues.load(league_id), top=limit)


def crosstable(reads: Reads, league_id: str, limit: int = 30) -> dict[str, Any]:
    """Head-to-head scores among the top ``limit`` bots of the (fitted) ladder, in its order (a league fitted on
    skill is ordered by it, as its ladder is)."""
    fit = fitted(reads.results, reads.leagues.load(league_id))
    order = [r["bot"] for r in fit.get("skill", fit)["ratings"]]
    bots = order[: max(limit, 1)]
    cells = reads.results.head_to_head(league_id, bots)
    return {"bots": bots, "cells": cells, "shown": len(bots), "total_bots": len(order)}


def recent_matches(reads: Reads, league_id: str, limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """Finished matches, newest first (``offset`` pages back), and the failed ones."""
    ids, total = reads.results.finished_ids(league_id, limit, offset)
    rows = reads.rows(league_id, ids)
    failed = reads.rows(league_id, reads.results.failed_ids(league_id))
    return {"total": total, "offset": offset, "matches": rows, "failed": failed}


def bot_page(reads: Reads, league_id: str, bot: str, limit: int = 20) -> dict[str, Any]:
    row = reads.results.standing(league_id, bot)
    if row is None:
        raise LeagueError(f"no bot named {bot!r} in league {league_id!r}")
    history, length = reads.results.history(league_id, bot, CHART_POINTS)
    league = reads.leagues.load(league_id)
    fit = fitted(reads.results, league)
    mine = next((r for r in fit["ratings"] if r["bot"] == bot), None)
    ranked = fit.get("skill", fit)["ratings"]  # a league fitted on skill is ranked by it
    rank = next((i for i, r in enumerate(ranked, 1) if r["bot"] == bot), None)
    on_skill = [r for r in fit["skill"]["ratings"] if r["bot"] == bot] if "skill" in fit else []
    skill = {"skill": on_skill[0]["skill"], "skill_interval": on_skill[0]["interval"]} if on_skill else {}
    counts = row.to_json()
    form = counts.pop("rating")
    return {
        "league": league_id,
        **counts,
        "form": form,
        **({k: mine[k] for k in ("rating", "interval", "provisional", "margin", "margin_interval")} if mine else {}),
        **skill,
        "rank": rank or reads.results.form_rank(league_id, bot),
        "quarantine": printable.deep(reads.leagues.quarantined(league_id).get(bot)),
        "history": [{"match": h["match"], "rating": round(h["rating"], 2), "at": h["at"]} for h in history],
        "history_points": length,
        **({"fitted_history": fitted_history(reads, league_id, bot)} if league.format == "standing" else {}),
        "recent": reads.rows(league_id, reads.results.bot_match_ids(league_id, bot, limit)),
    }


def fitted_history(reads: Reads, league_id: str, bot: str) -> list[dict[str, Any]]:
    """A standing ladder's bot: its fitted rating and 95% interval each time the scheduler refitted, oldest
    first, thinned to a bounded number of points (:mod:`store.rating_history`)."""
    return [p.to_json() for p in RatingHistory(reads.results.r, reads.results.prefix).of(league_id, bot)]


def match_detail(reads: Reads, league_id: str, match_id: str) -> dict[str, Any]:
    """One match's row and record; a game of a deal not yet over has its row held back and no record
    (``held``), and ``live_held`` says why it may not be watched live, if it may not."""
    if not reads.results.match_exists(league_id, match_id):
        raise LeagueError(f"no match {match_id!r} in league {league_id!r}")
    row = reads.rows(league_id, [match_id])[0]
    live = reads.embargo.hold(league_id, match_id, live=True)
    return {
        **row,
        "live_held": live.to_json() if live else None,
        "record": None if row.get("held") else reads.results.record(league_id, match_id),
    }


def record(reads: Reads, league_id: str, match_id: str) -> GameRecord:
    """The match's record (:class:`store.embargo.HeldBack` while a game sharing its deal is not over)."""
    reads.embargo.check(league_id, match_id)
    found = reads.results.record(league_id, match_id)
    if found is None:
        raise LeagueError(f"match {match_id!r} of league {league_id!r} has no record (not finished)")
    return found


# ---------------------------------------------------------------- hosted bots


def hosted_bots(reads: Reads) -> list[dict[str, Any]]:
    """Every hosted bot, with its versions' names and states, newest last."""
    out = []
    for bot in reads.versions.bots():
        versions = reads.versions.of(bot)
        out.append(
            {
                "bot": bot,
                "versions": [{"name": v.name, "number": v.number, "state": v.state} for v in versions],
                "latest": versions[-1].name if versions else None,
            }
        )
    return out


def bot_profile(reads: Reads, bot: str, limit: int = 20) -> dict[str, Any]:
    """Any bot, connected or hosted, across every league it plays in (under its own name, or as one of
    its hosted versions ``bot@N``): its standing in each (fitted rating, interval, conduct), its totals,
    its form after each match in each league (the chart), its ``limit`` latest matches over all leagues,
    and, if it is hosted, its versions newest first."""
    versions = reads.versions.of(bot)
    playing = _leagues_of(reads, lambda name: name == bot or ("@" not in bot and name.split("@", 1)[0] == bot))
    if not versions and not playing:
        raise LeagueError(f"no bot named {bot!r}: it is not hosted and plays in no league")
    standings = [
        {"name": name, **_standing(reads, league, name)} for name, leagues in playing.items() for league in leagues
    ]
    standings.sort(key=lambda s: (s["preflight"], s["league"], s["name"]))
    history = []
    recent: list[dict[str, Any]] = []
    for s in standings:
        points, length = reads.results.history(s["league"], s["name"], CHART_POINTS)
        history.append(
            {
                "league": s["league"],
                "name": s["name"],
                "points": length,
                "form": [{"match": h["match"], "rating": round(h["rating"], 2), "at": h["at"]} for h in points],
            }
        )
        rows = reads.rows(s["league"], reads.results.bot_match_ids(s["league"], s["name"], limit))
        recent.extend({**row, "league": s["league"], "name": s["name"]} for row in rows)
    recent.sort(key=lambda row: row["finished_at"] or 0.0, reverse=True)
    rated = [s for s in standings if not s["preflight"]]
    return {
        "bot": bot,
        "hosted": bool(versions),
        "leagues": standings,
        "totals": {k: sum(s[k] for s in rated) for k in ("games", "timeouts", "illegal", "forfeits")},
        "history": history,
        "recent": recent[:limit],
        "versions": [
            {**_version_summary(v), "leagues": [s for s in standings if s["name"] == v.name]}
            for v in reversed(versions)
        ],
    }


def hosted_version(reads: Reads, bot: str, number: int, owner: bool = False) -> dict[str, Any]:
    """One version whole: its preflight report, evidence, and its leagues (with any quarantine and why);
    its program's own words (latest output, each fault's output, build log) only for its ``owner`` or
    when the owner shows them to everyone (``output_shown`` says which, ``owner`` whether the owner
    asks; an empty text if not shown). Everyone else reads of each fault its time and its reason, the
    arena's own words (its exit status, the sandbox's reason, what was wrong with its answer); a fault
    kept before its reason was kept apart from the program's words shows :data:`HIDDEN_REASON` instead."""
    name = f"{bot}@{number}"
    data = reads.versions.require(name).printable_json()
    public = reads.versions.output_public(bot)
    if not (owner or public):
        data["output"], data["build_log"], data["build_error"] = [], "", ""
        data["evidence"] = [
            {**e, "output": [], "reason": e["reason"] if e.get("reason_public") else HIDDEN_REASON}
            for e in data["evidence"]
        ]
    playing = _leagues_of(reads, lambda entry: entry == name).get(name, [])
    return {
        **data,
        "output_public": public,
        "output_shown": owner or public,
        "owner": owner,
        "leagues": [_standing(reads, league, name) for league in playing],
    }


def _version_summary(v: Version) -> dict[str, Any]:
    pf = v.preflight
    return {
        "name": v.name,
        "number": v.number,
        "state": v.state,
        "note": printable.line(v.note),
        "submitted": v.submitted,
        "source_hash": v.source_hash,
        "language": printable.line(str(v.manifest.get("language", ""))),
        "protocol": printable.line(str(v.manifest.get("protocol", ""))),
        "build_seconds": v.build_seconds,
        "preflight": printable.deep({k: pf[k] for k in ("passed", "games", "planned", "problems", "league")})
        if pf
        else None,
        "faults": len(v.evidence),
    }


def _leagues_of(reads: Reads, wanted: Callable[[str], bool]) -> dict[str, list[League]]:
    """name -> the leagues an entry of that name is in (preflights last), for every ``wanted`` name."""
    found: dict[str, list[League]] = {}
    for lid in reads.leagues.league_ids():
        league = reads.leagues.load(lid)
        for name in filter(wanted, league.bots):
            found.setdefault(name, []).append(league)
    for leagues in found.values():
        leagues.sort(key=lambda league: (bool(league.preflight), league.league_id))
    return found


def _standing(reads: Reads, league: League, name: str) -> dict[str, Any]:
    """The version in one league: its fitted rating and interval, games, conduct, and quarantine if any."""
    row = reads.results.standing(league.league_id, name)
    ranked = fitted(reads.results, league)["ratings"] if row is not None else []
    mine = next((r for r in ranked if r["bot"] == name), None)
    return {
        "league": league.league_id,
        "preflight": bool(league.preflight),
        "players": league.rules.players,
        "teams": [list(t) for t in league.rules.teams],
        "initial": league.initial,
        "games": row.games if row else 0,
        "rating": mine["rating"] if mine else None,
        "interval": mine["interval"] if mine else None,
        "timeouts": row.timeouts if row else 0,
        "illegal": row.illegal if row else 0,
        "forfeits": row.forfeits if row else 0,
        "quarantine": printable.deep(reads.leagues.quarantined(league.league_id).get(name)),
    }
