"""A standing ladder at 10,000 bots and 1,000,000 results: the fit, the pairing, the intervals and the ladder
page, each beside its baseline in the same run.

Simulated bots of known strength (natural-log units, normal with sd 1.2: about 210 Elo) and instant games
(Bradley-Terry on the true strengths: no engine). The history is 1,000,000 results in mirrored pairs, each
between ladder neighbours (one to four places apart in the true order) or, one pair in twenty, between any
two bots: the graph a standing ladder's neighbour pairing and newcomers' placements make. Then:

- **fit**: the standing planner's fold of the history into running sums (:mod:`scheduler.duel_tally`) and a
  fit from zero (*cold*), then 1,000 more results chosen by the planner and played, and its *warm* refit
  (target: under a second), as a ratio to the cold one. Baseline: :func:`scheduler.ratings.fit_ratings`, the
  fit every other league runs, at a tenth of the size (it holds a dense bots x bots matrix: at 10,000 bots
  800 MB and half a minute a Newton step), beside the tally's cold and warm fits at that size.
- **pairing**: the planner's decisions while those 1,000 results are played (without its refits, then with
  them amortized), per match planned. Baseline: one match played in-process by the cheapest real bots
  (greedy against random, a whole tablic match, no engine service, no network): choosing a match must cost
  far less than playing it.
- **intervals**: the conditional standard deviations (:mod:`scheduler.information`, from the sparse
  information's diagonal) at 10,000 bots. Baseline: the Wald covariance (a dense pseudo-inverse) at
  :data:`~scheduler.information.MARGINAL_MAX` bots, with the median ratio of the two standard deviations
  there (the conditional one is never wider: what it leaves out).
- **fitted history**: what recording each bot's fitted rating over time costs the scheduler at each publish
  (:mod:`store.rating_history`, one script call): the first (every bot new), one where nothing moved (the
  filter only), one where every bot moved, and the worst, where every bot's line passes 200 points and is
  thinned at once; and the memory a bot's full line takes. Baseline: the publish it rides on, same run.
- **ladder page**: ``GET /api/leagues/L/ladder?limit=100`` through the web app's own code (FastAPI's
  TestClient on :func:`web.app.create_app`) over a Redis prefix this bench fills: the league, its million
  outcomes, each bot's counts, form and last 30 rated matches, and the ladder its scheduler publishes
  (:func:`scheduler.ladder.publish`, timed too). Baselines: the same page of a 100-bot standing ladder
  filled the same way, and ``/api/health``, in the same run.

Run: ``python bench/standing.py [--quick] [--bots N] [--results N] [--json]`` (needs Redis at
TABLANETTE_REDIS_URL or 127.0.0.1:6379; uses its own key prefix and deletes it). ``--quick``: 2,000 bots
and 200,000 results. The full run takes a few minutes and about 3 GB of memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.kit import REDIS_URL
from bench.standing_kit import Field, fill_league, history, play
from engine_service.rules import Rules
from scheduler.duel_tally import DuelTally
from scheduler.information import MARGINAL_MAX, conditional_sd
from scheduler.offline import play_planned
from scheduler.pairings import pair_of_games
from scheduler.ratings import fit_ratings
from scheduler.standing import StandingPlanner
from store.leagues import League

MORE = 1_000
"""Results played between the cold fit and the warm one."""
MAX_POINTS_SHOWN = 200
"""Publishes timed for the fitted history (store.rating_history.MAX_POINTS: every line fills and thins)."""


def clock(work: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = work()
    return time.perf_counter() - start, out


def fit_section(field: Field, planner: StandingPlanner) -> dict[str, Any]:
    """Cold fit (fold + maximize from zero), then MORE results the planner chooses, then the warm refit."""
    fold_s, _ = clock(lambda: planner.absorb([], field.outcomes))
    cold_s, cold = clock(planner.refit)
    played = play(planner, field, MORE)
    warm = played.refits[-1] + played.fold_s
    top = [r.bot for r in cold.ratings[:10]]
    return {
        "bots": len(field.names),
        "results": len(field.outcomes),
        "fold_s": fold_s,
        "cold_maximize_s": cold_s,
        "cold_s": fold_s + cold_s,
        "warm_s": warm,
        "warm_over_cold": warm / (fold_s + cold_s),
        "warm_over_cold_maximize": warm / cold_s,
        "rank_correlation": field.rank_correlation(cold),
        "top_true_ranks": [field.true_rank[b] for b in top],
        "warm_fold_s": played.fold_s,
        "decisions": played.decisions,
        "matches": played.matches,
        "refits": played.refits,
    }


def baseline_fit(bots: int, results: int) -> dict[str, Any]:
    """``fit_ratings`` against the tally, cold and warm, at a size both can do."""
    small = history(bots, results, seed=11)
    old_s, _ = clock(lambda: fit_ratings(small.outcomes[:-MORE], intervals=False))
    tally = DuelTally()
    cold_s, last = clock(lambda: (tally.add(small.outcomes[:-MORE]), tally.fit())[1])
    start = dict(zip(tally.names, last.theta, strict=True))
    warm_s, _ = clock(lambda: (tally.add(small.outcomes[-MORE:]), tally.fit(start=tally.start(start)))[1])
    return {"bots": bots, "results": results, "fit_ratings_s": old_s, "tally_cold_s": cold_s, "tally_warm_s": warm_s}


def pairing_baseline(repeat: int) -> float:
    """Seconds to play one real match (tablic, to its target score) of the built-in greedy and random bots,
    in-process: the least a match costs the arena (no engine service, no network, the quickest bots)."""
    rules = Rules.preset("tablic")
    times = []
    for i in range(repeat):
        m = pair_of_games("a", "b", "bench", f"m{i}", i)[0]
        times.append(clock(lambda m=m: play_planned(rules, {"a": "greedy", "b": "random"}, m))[0])
    return statistics.median(times)


def interval_section(field: Field, planner: StandingPlanner) -> dict[str, Any]:
    """Conditional sd at full size; the dense Wald covariance at MARGINAL_MAX bots, and the two compared."""
    fit = planner.fit
    assert fit is not None and fit.model is not None
    model, theta = fit.model, fit.theta
    conditional_s, _ = clock(lambda: conditional_sd(model.information(theta, sparse=True)))
    size = min(MARGINAL_MAX, len(field.names))
    small = history(size, size * 100, seed=5)
    tally = DuelTally()
    tally.add(small.outcomes)
    sub = tally.fit()
    assert sub.model is not None
    dense = sub.model.information(sub.theta)
    wald_s, cov = clock(lambda: np.linalg.pinv(dense, hermitian=True))
    small_conditional_s, sd = clock(lambda: conditional_sd(sub.model.information(sub.theta, sparse=True)))
    n = len(sub.theta)
    centring = np.eye(n) - 1 / n
    marginal = np.sqrt(np.diag(centring @ cov @ centring.T))
    return {
        "bots": len(field.names),
        "conditional_s": conditional_s,
        "wald_bots": n,
        "wald_s": wald_s,
        "conditional_at_wald_bots_s": small_conditional_s,
        "wald_extrapolated_s": wald_s * (len(field.names) / n) ** 3,
        "median_conditional_over_marginal_sd": float(np.median(sd / marginal)),
    }


def page_section(field: Field, planner: StandingPlanner, repeat: int) -> dict[str, Any]:
    """The ladder page's latency at full size beside a 100-bot ladder's and /api/health, same app, same run."""
    import redis
    from fastapi.testclient import TestClient

    from cli.local import clear_prefix
    from web.app import create_app

    client = redis.Redis.from_url(REDIS_URL)
    prefix = f"bench-standing-{int(time.time())}"
    try:
        fill_s, publish_s = fill_league(client, prefix, "big", field, planner)
        small = history(100, 20_000, seed=3)
        tiny = StandingPlanner(League("tiny", Rules.preset("tablic"), "standing", bots=small.names))
        tiny.absorb([], small.outcomes)
        tiny.refit()
        fill_league(client, prefix, "tiny", small, tiny)
        lines = history_section(client, prefix, planner)
        with TestClient(create_app(client, prefix)) as web:
            out = {"fill_s": fill_s, "publish_s": publish_s, "history": lines}
            for name, url in (
                ("big", "/api/leagues/big/ladder?limit=100"),
                ("big_page_50", "/api/leagues/big/ladder?limit=100&offset=5000"),
                ("small", "/api/leagues/tiny/ladder?limit=100"),
                ("health", "/api/health"),
            ):
                first, reply = clock(lambda url=url: web.get(url))
                reply.raise_for_status()
                times = [clock(lambda url=url: web.get(url).raise_for_status())[0] for _ in range(repeat)]
                out[name] = {"first_ms": first * 1000, "median_ms": statistics.median(times) * 1000}
            out["big_rows"] = len(web.get("/api/leagues/big/ladder?limit=100").json()["rows"])
            return out
    finally:
        clear_prefix(client, prefix)
        client.close()


def history_section(client: Any, prefix: str, planner: StandingPlanner) -> dict[str, Any]:
    """The fitted points of every bot of the big ladder written as its scheduler writes them at a publish
    (:meth:`scheduler.standing_feed.StandingKeeper.record`): first, unchanged, all moved, all thinned at once."""
    from scheduler.standing_feed import StandingKeeper
    from store.keys import Keys
    from store.leagues import LeagueStore
    from store.rating_history import Point, RatingHistory

    store = LeagueStore(client, prefix)
    league, fit, count = store.load("big"), planner.shown(), planner.tally.count
    keeper = StandingKeeper(store, "big", planner)
    now = time.time()
    first_s, first = clock(lambda: keeper.record(league, fit, count, now))
    still_s, still = clock(lambda: keeper.record(league, fit, count, now + 5))
    lines = RatingHistory(client, prefix)
    moved, thinned = [], []
    for k in range(1, MAX_POINTS_SHOWN + 1):  # every bot moves at every refit (lock-step): every line fills and thins
        points = {b: Point(p.at + 5 * k, count + k, p.rating + k % 2 * 2, p.low, p.high) for b, p in first.items()}
        seconds, lists = clock(lambda points=points: lines.record("big", points))
        moved.append(seconds)
        thinned.append(lists)
    full = Keys(prefix).league("big").fitted_history(next(iter(first)))
    worst = max(range(len(moved)), key=moved.__getitem__)
    return {
        "bots": len(first),
        "first_s": first_s,
        "unchanged_s": still_s,
        "unchanged_written": len(still),
        "moved_s": statistics.median(moved),
        "worst_s": moved[worst],
        "worst_thinned": thinned[worst],
        "most_thinned": max(thinned),
        "thinned": sum(thinned),
        "full_bot_bytes": max(
            int(client.memory_usage(Keys(prefix).league("big").fitted_history(b)) or 0) for b in first
        ),
        "points": int(client.llen(full)),
    }


def report_history(h: dict[str, Any], publish_s: float) -> None:
    print(f"\nfitted rating over time (one script call a publish; baseline: the publish, {publish_s:.2f} s)")
    print(f"  first publish, {h['bots']:,} bots recorded (last points read first): {h['first_s'] * 1000:.0f} ms")
    print(f"  a publish where nothing moved ({h['unchanged_written']} written): {h['unchanged_s'] * 1000:.0f} ms")
    print(
        f"  every bot moved, {MAX_POINTS_SHOWN} publishes in lock-step: median {h['moved_s'] * 1000:.0f} ms;"
        f" the slowest {h['worst_s'] * 1000:.0f} ms ({h['worst_thinned']:,} lines thinned in it; at most"
        f" {h['most_thinned']:,} in one, {h['thinned']:,} in all)"
    )
    print(
        f"  memory: a full line at most {h['full_bot_bytes']:,} bytes; {h['bots']:,} full lines about"
        f" {h['full_bot_bytes'] * h['bots'] / 1e6:.0f} MB"
    )


def report(fit: dict[str, Any], base: dict[str, Any], pairing: dict[str, Any], ivs: dict[str, Any], page: Any) -> None:
    print(f"standing ladder: {fit['bots']:,} bots, {fit['results']:,} simulated results (instant bots)")
    print("\nfit (win/loss, Bradley-Terry with mirrored units)")
    print(
        f"  cold: fold the results {fit['fold_s']:.2f} s + maximize from zero {fit['cold_maximize_s']:.2f} s"
        f" = {fit['cold_s']:.2f} s"
    )
    print(
        f"  warm, after {MORE:,} more results (fold {fit['warm_fold_s'] * 1000:.0f} ms + refit): {fit['warm_s']:.3f} s"
        f" = {fit['warm_over_cold']:.3f} of the cold fit ({'under' if fit['warm_s'] < 1 else 'OVER'} the 1 s target)"
    )
    print(
        f"  (the refit alone against the cold maximize, both on running sums: {fit['warm_over_cold_maximize']:.2f};"
        " most of what a warm fit saves is rereading the results)"
    )
    print(f"  order found: Spearman {fit['rank_correlation']:.3f} with the true strengths")
    print(
        f"  baseline at {base['bots']:,} bots and {base['results']:,} results:"
        f" fit_ratings {base['fit_ratings_s']:.2f} s;"
        f" the tally cold {base['tally_cold_s']:.2f} s, warm {base['tally_warm_s']:.3f} s"
        f" ({base['fit_ratings_s'] / base['tally_warm_s']:.0f}x less than fit_ratings)"
    )
    print("\npairing decisions")
    print(
        f"  {pairing['matches']:,} matches planned in {pairing['calls']} decisions:"
        f" {pairing['per_match_ms']:.2f} ms a match ({pairing['per_call_ms']:.1f} ms a decision);"
        f" with the warm refits amortized {pairing['amortized_ms']:.2f} ms a match"
    )
    print(
        f"  baseline: playing one tablic match in-process (greedy vs random) {pairing['play_ms']:.1f} ms:"
        f" a decision costs {pairing['amortized_ms'] / pairing['play_ms']:.3f} of a match"
    )
    print("\nintervals")
    print(f"  conditional sd at {ivs['bots']:,} bots: {ivs['conditional_s'] * 1000:.0f} ms")
    print(
        f"  baseline: the Wald covariance (dense pseudo-inverse) at {ivs['wald_bots']:,} bots {ivs['wald_s']:.2f} s"
        f" (conditional there {ivs['conditional_at_wald_bots_s'] * 1000:.1f} ms); at {ivs['bots']:,} bots it would"
        f" take about {ivs['wald_extrapolated_s']:.0f} s (n^3)"
    )
    print(
        f"  conditional / marginal sd at {ivs['wald_bots']:,} bots:"
        f" median {ivs['median_conditional_over_marginal_sd']:.2f}"
        " (narrower: the opponents' own uncertainty left out)"
    )
    if page:
        print("\nladder page (web app, TestClient, Redis)")
        print(
            f"  filled Redis in {page['fill_s']:.1f} s; the scheduler published the ladder in {page['publish_s']:.2f} s"
        )
        for name, what in (
            ("big", f"{fit['bots']:,} bots, top 100"),
            ("big_page_50", "rows 5,001-5,100"),
            ("small", "100 bots (baseline)"),
            ("health", "/api/health (baseline)"),
        ):
            p = page[name]
            print(f"  {what}: {p['median_ms']:.1f} ms median (first request {p['first_ms']:.1f} ms)")
        report_history(page["history"], page["publish_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bots", type=int, default=10_000)
    ap.add_argument("--results", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="2,000 bots, 200,000 results")
    ap.add_argument("--no-page", action="store_true", help="skip the ladder page (no Redis needed)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    bots, results = (2_000, 200_000) if args.quick else (args.bots, args.results)
    field = history(bots, results, seed=1)
    planner = StandingPlanner(League("big", Rules.preset("tablic"), "standing", bots=field.names), ahead=64)
    fit = fit_section(field, planner)
    calls = len(fit["decisions"])
    spent = sum(fit["decisions"])
    pairing = {
        "calls": calls,
        "matches": fit["matches"],
        "per_match_ms": 1000 * spent / max(fit["matches"], 1),
        "per_call_ms": 1000 * spent / max(calls, 1),
        "amortized_ms": 1000 * (spent + sum(fit["refits"])) / max(fit["matches"], 1),
        "play_ms": 1000 * pairing_baseline(20),
    }
    base = baseline_fit(max(bots // 10, 200), max(results // 10, 20_000))
    ivs = interval_section(field, planner)
    page = None if args.no_page else page_section(field, planner, repeat=30)
    if args.json:
        figures = {
            "cold_fit_s": fit["cold_s"],
            "warm_fit_s": fit["warm_s"],
            "fit_ratings_s": base["fit_ratings_s"],
            "decision_ms_a_match": pairing["amortized_ms"],
            "play_ms_a_match": pairing["play_ms"],
            "conditional_sd_s": ivs["conditional_s"],
            "wald_s": ivs["wald_s"],
            "page_ms": page["big"]["median_ms"] if page else None,
            "small_page_ms": page["small"]["median_ms"] if page else None,
            "history_moved_ms": page["history"]["moved_s"] * 1000 if page else None,
            "publish_s": page["publish_s"] if page else None,
        }
        detail = {"fit": fit, "baseline_fit": base, "pairing": pairing, "intervals": ivs, "page": page}
        print(json.dumps(figures | {"detail": detail}))
    else:
        report(fit, base, pairing, ivs, page)


if __name__ == "__main__":
    main()
