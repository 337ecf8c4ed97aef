"""What bench/standing.py plays and fills: a field of simulated bots, its history, instant games, and a league
in Redis as the ledger would have left it (the parts the ladder page reads)."""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import redis

from engine_service.rules import Rules
from scheduler.ladder import publish
from scheduler.pairings import PlannedMatch
from scheduler.ratings import Fit, Outcome
from scheduler.standing import StandingPlanner
from store.leagues import League, LeagueStore
from store.results import LeagueResults
from store.units import mirror_unit

ELO = 400 / math.log(10)
TREND = 30
"""Rated matches kept per bot for its sparkline (the page reads the last 30)."""


@dataclass
class Field:
    """Bots of known strength (natural-log units) and their results so far."""

    names: list[str]
    strength: dict[str, float]
    outcomes: list[Outcome]
    rng: random.Random = field(default_factory=lambda: random.Random(9))

    @property
    def true_rank(self) -> dict[str, int]:
        order = sorted(self.names, key=lambda b: -self.strength[b])
        return {b: i + 1 for i, b in enumerate(order)}

    def rank_correlation(self, fit: Fit) -> float:
        """Spearman's correlation of the fit's order with the true one (bots that played)."""
        fitted = [r.bot for r in fit.ratings if r.games]
        truth = self.true_rank
        true = np.array([truth[b] for b in fitted], dtype=float)
        got = np.arange(1, len(fitted) + 1, dtype=float)
        return float(np.corrcoef(np.argsort(np.argsort(true)), got)[0, 1])

    def play(self, m: PlannedMatch) -> Outcome:
        """An instant game: ``m``'s first seat wins with the Bradley-Terry chance of the true strengths."""
        a, b = m.seats
        won = self.rng.random() < 1 / (1 + math.exp(self.strength[b] - self.strength[a]))
        placing, points = ((1.0, 0.0), (101, 70)) if won else ((0.0, 1.0), (70, 101))
        return Outcome(m.match_id, mirror_unit(m.seed, m.seats), ((a,), (b,)), placing, points)


def history(bots: int, results: int, seed: int) -> Field:
    """``results`` results of ``bots`` bots in mirrored pairs: between neighbours in the true order (1 to 4
    places apart) or, one pair in twenty, any two bots."""
    rng = np.random.default_rng(seed)
    names = [f"bot{i:05d}" for i in range(bots)]
    strength = rng.normal(0.0, 1.2, bots)
    order = np.argsort(-strength)
    place = np.empty(bots, dtype=np.int64)
    place[order] = np.arange(bots)
    units = results // 2
    a = rng.integers(0, bots, units)
    step = rng.integers(1, 5, units) * rng.choice([-1, 1], units)
    far = rng.random(units) < 0.05
    other = np.where(far, rng.integers(0, bots, units), place[a] + step)
    other = np.clip(other, 0, bots - 1)
    b = order[other]
    b = np.where(b == a, order[(place[a] + 1) % bots], b)
    chance = 1 / (1 + np.exp(strength[b] - strength[a]))
    wins = rng.random((units, 2)) < chance[:, None]  # per game of the pair, whether a wins
    outcomes = []
    for u in range(units):
        x, y = names[a[u]], names[b[u]]
        unit = f"h{u}"
        for g, seats in ((0, (x, y)), (1, (y, x))):
            first_won = wins[u, g] if g == 0 else not wins[u, g]
            placing, points = ((1.0, 0.0), (101, 70)) if first_won else ((0.0, 1.0), (70, 101))
            outcomes.append(Outcome(f"{unit}/g{g + 1}", unit, ((seats[0],), (seats[1],)), placing, points))
    return Field(names, dict(zip(names, map(float, strength), strict=True)), outcomes)


@dataclass
class Played:
    """What :func:`play` timed: each decision, each refit (apart from the decisions), and folding the results."""

    decisions: list[float] = field(default_factory=list)
    refits: list[float] = field(default_factory=list)
    fold_s: float = 0.0
    matches: int = 0


def play(planner: StandingPlanner, fld: Field, more: int) -> Played:
    """Let the planner choose and instantly play at least ``more`` results, then refit (warm)."""
    planned: list[PlannedMatch] = []
    out = Played()
    decisions, refits = out.decisions, out.refits
    played = 0
    while played < more:
        if planner.tally.count - planner.fitted_at >= planner.refit_after():
            start = time.perf_counter()
            planner.refit()
            refits.append(time.perf_counter() - start)
        start = time.perf_counter()
        new = planner.more((), planned, [])
        decisions.append(time.perf_counter() - start)
        out.matches += len(new)
        planned += new
        results = [fld.play(m) for m in new]
        fld.outcomes += results
        start = time.perf_counter()
        planner.absorb(planned, results)
        out.fold_s += time.perf_counter() - start
        played += len(results)
        if not new:
            raise RuntimeError("the planner planned nothing with its whole queue free")
    start = time.perf_counter()
    planner.refit()
    refits.append(time.perf_counter() - start)
    return out


def fill_league(
    client: redis.Redis, prefix: str, league_id: str, fld: Field, planner: StandingPlanner
) -> tuple[float, float]:
    """A standing league under ``prefix`` as its ledger and scheduler would leave it, for the ladder page: its
    settings and bots, every outcome, each bot's form, counts and last rated matches; then the ladder its
    scheduler publishes. Seconds to fill, and to publish."""
    start = time.perf_counter()
    store = LeagueStore(client, prefix)
    store.create(League(league_id, Rules.preset("tablic"), "standing", bots=fld.names, seed=league_id))
    store.write_plan(store.load(league_id), [])
    keys = store.keys(league_id)
    pipe = client.pipeline(transaction=False)
    for k in range(0, len(fld.outcomes), 10_000):
        chunk = fld.outcomes[k : k + 10_000]
        pipe.rpush(keys.outcomes, *(json.dumps(_ledger_form(o), separators=(",", ":")) for o in chunk))
        pipe.execute()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    recent: dict[str, list[str]] = defaultdict(list)
    for o in fld.outcomes:
        (a,), (b,) = o.teams
        winner, loser = (a, b) if o.placing[0] > o.placing[1] else (b, a)
        counts[winner].update(games=1, wins=1, points=101)
        counts[loser].update(games=1, losses=1, points=70)
    for o in reversed(fld.outcomes):
        for (bot,) in o.teams:
            if len(recent[bot]) < TREND:
                recent[bot].append(o.match_id)
    for i, bot in enumerate(fld.names):
        form = 1500 + fld.strength[bot] * ELO
        pipe.zadd(keys.form, {bot: form})
        pipe.hset(keys.stats(bot), mapping=dict(counts[bot]) | {"last_played": time.time()})
        if recent[bot]:
            pipe.rpush(keys.bot_matches(bot), *(f"{mid}\t{form:.2f}" for mid in reversed(recent[bot])))
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    filled = time.perf_counter() - start
    start = time.perf_counter()
    publish(LeagueResults(client, prefix), store.load(league_id), planner.shown(), planner.tally.count)
    return filled, time.perf_counter() - start


def _ledger_form(o: Outcome) -> list[Any]:
    """An outcome as the ledger stores it: ``[match, unit, teams, placing, points]``."""
    return [o.match_id, o.unit, [list(t) for t in o.teams], list(o.placing), list(o.points)]
