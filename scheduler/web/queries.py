"""Read models for the web pages and the JSON API (Redis reads only, batched).

Each function answers one page's question with a bounded number of Redis round
trips (pipelines), whatever the league's size: the ladder reads every bot once,
the crosstable only the pairs it shows, match lists only the page asked for.
"""

from __future__ import annotations

import json
from typing import Any

import redis

from scheduler.league import LeagueError, LeagueStore
from worker.ledger import LeagueKeys, text

SPARK_POINTS = 30
CHART_POINTS = 400


def _keys(store: LeagueStore, league_id: str) -> LeagueKeys:
    if not store.r.exists(store.keys(league_id).meta):
        raise LeagueError(f"no league named {league_id!r}")
    return store.keys(league_id)


def leagues(store: LeagueStore) -> list[dict[str, Any]]:
    out = []
    for lid in store.league_ids():
        league = store.load(lid)
        st = store.status(lid)
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
            }
        )
    return out


def league_summary(store: LeagueStore, league_id: str) -> dict[str, Any]:
    league = store.load(league_id)
    st = store.status(league_id)
    return {
        "id": league_id,
        "rules": league.rules.to_record(),
        "players": league.rules.players,
        "teams": [list(t) for t in league.rules.teams],
        "format": league.format,
        "games_per_pairing": league.games,
        "mirrored": league.mirrored,
        "k": league.k,
        "initial": league.initial,
        "bots": league.bots,
        "progress": {
            **st.to_json(),
            "started_at": st.started_at,
            "finished_at": st.finished_at,
            "matches_per_second": round(st.rate, 3),
        },
    }


def ladder(store: LeagueStore, league_id: str) -> list[dict[str, Any]]:
    keys = _keys(store, league_id)
    rows = store.ladder(league_id)
    pipe = store.r.pipeline(transaction=False)
    for row in rows:
        pipe.lrange(keys.trend(row.bot), -SPARK_POINTS, -1)
    trends = pipe.execute()
    return [
        {"rank": rank, **row.to_json(), "trend": [float(x) for x in trend]}
        for rank, (row, trend) in enumerate(zip(rows, trends, strict=True), 1)
    ]


def crosstable(store: LeagueStore, league_id: str, limit: int = 30) -> dict[str, Any]:
    """Head-to-head scores among the top ``limit`` bots of the ladder."""
    keys = _keys(store, league_id)
    bots = [text(b) for b in store.r.zrevrange(keys.ladder, 0, max(limit, 1) - 1)]
    fields = [f"{a}\t{b}" for a in bots for b in bots if a != b]
    scores = store.r.hmget(keys.head_to_head, fields) if fields else []
    games = store.r.hmget(keys.head_to_head_games, fields) if fields else []
    cells: dict[str, dict[str, dict[str, float]]] = {a: {} for a in bots}
    for field, score, played in zip(fields, scores, games, strict=True):
        if played is not None:
            a, b = field.split("\t")
            cells[a][b] = {"score": float(score or 0), "games": int(played)}
    total = store.r.zcard(keys.ladder)
    return {"bots": bots, "cells": cells, "shown": len(bots), "total_bots": total}


def _match_rows(store: LeagueStore, keys: LeagueKeys, ids: list[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    pipe = store.r.pipeline(transaction=False)
    for mid in ids:
        pipe.hmget(keys.match(mid), ["status", "seats", "result", "finished_at", "elo", "round", "error", "score"])
    rows = []
    for mid, (status, seats, result, finished, elo, rnd, error, score) in zip(ids, pipe.execute(), strict=True):
        rows.append(
            {
                "match_id": mid,
                "status": text(status) if status else "planned",
                "seats": json.loads(seats) if seats else [],
                "round": int(rnd) if rnd else None,
                "result": json.loads(result) if result else None,
                "score": json.loads(score) if score else None,
                "finished_at": float(finished) if finished else None,
                "elo": [float(x) for x in json.loads(elo)] if elo else None,
                "error": text(error) if error else None,
            }
        )
    return rows


def recent_matches(store: LeagueStore, league_id: str, limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """Finished matches, newest first (``offset`` pages back)."""
    keys = _keys(store, league_id)
    total = store.r.llen(keys.finished_order)
    start, stop = -(offset + limit), -(offset + 1)
    ids = [text(m) for m in reversed(store.r.lrange(keys.finished_order, start, stop))] if offset < total else []
    rows = _match_rows(store, keys, ids)
    failed = _match_rows(store, keys, sorted(text(m) for m in store.r.smembers(keys.failed)))
    return {"total": total, "offset": offset, "matches": rows, "failed": failed}


def bot_page(store: LeagueStore, league_id: str, bot: str, limit: int = 20) -> dict[str, Any]:
    keys = _keys(store, league_id)
    row = store.ladder_row(league_id, bot)
    if row is None:
        raise LeagueError(f"no bot named {bot!r} in league {league_id!r}")
    length = store.r.llen(keys.history(bot))
    step = max(1, -(-length // CHART_POINTS))
    history = [json.loads(h) for h in store.r.lrange(keys.history(bot), 0, -1)[::step]] if length else []
    ids = [text(m) for m in reversed(store.r.lrange(keys.bot_matches(bot), -limit, -1))]
    rank = store.r.zrevrank(keys.ladder, bot)  # 0-based; typed loosely by redis-py
    return {
        "league": league_id,
        **row.to_json(),
        "rank": (rank if isinstance(rank, int) else 0) + 1,
        "history": [{"match": h["match"], "rating": round(h["rating"], 2), "at": h["at"]} for h in history],
        "history_points": length,
        "recent": _match_rows(store, keys, ids),
    }


def match_detail(store: LeagueStore, league_id: str, match_id: str) -> dict[str, Any]:
    keys = _keys(store, league_id)
    rows = _match_rows(store, keys, [match_id])
    if not store.r.exists(keys.match(match_id)):
        raise LeagueError(f"no match {match_id!r} in league {league_id!r}")
    raw = store.r.hget(keys.records, match_id)
    return {**rows[0], "record": json.loads(raw) if raw else None}


def record(store: LeagueStore, league_id: str, match_id: str) -> dict[str, Any]:
    raw = store.r.hget(_keys(store, league_id).records, match_id)
    if raw is None:
        raise LeagueError(f"match {match_id!r} of league {league_id!r} has no record (not finished)")
    data: dict[str, Any] = json.loads(raw)
    return data


def open_store(client: redis.Redis, prefix: str) -> LeagueStore:
    return LeagueStore(client, prefix)
