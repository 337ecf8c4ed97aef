"""The luck section of ``bench/rating.py``: the games each way of scoring needs to order a close pair.

A close pair (``greedy`` against ``greedy:eps=0.05``) plays games two ways, in the
same run: on **independent** deals (every game its own deal, seats alternating)
and **mirrored** (one deal played in every seat rotation: two games for two
seats, three for three). Every game is rated by the arena's luck estimator
(:func:`engine_service.rules.luck_of_match`, its default samples). Per game the
pair's difference is A's margin minus B's (raw points, or skill = raw minus luck);
a mirrored unit's is the mean over its games. Then, per way of scoring, the games
needed to order the pair at 95% (two-sided, z = 1.96):

    n = games per unit * (z * sd of a unit / mu)^2

where ``mu`` is the pair's mean difference estimated from *every* game played
(independent and mirrored, raw: the luck-adjusted means estimate the same number,
the estimator being unbiased), so the ratios between the methods are ratios of
variances. Plain win/loss is the same with A's score against B (1, 1/2, 0) and
``mu`` its mean minus 1/2.

The section also prints the scale of the value function's differences that would
have left skill the least spread on its games, beside the arena's
(:data:`engine_service.rules.luck.SCALE`, ``V_FACTOR * K / (K + 1)`` at K = 8
samples): the way to rebuild ``V_FACTOR`` (the best scale times 9/8).

Each ratio against its target is a ratio of two estimates from a few hundred
games, and ``mu`` (above all the win/loss ``mu``, a few hundredths of a point of
score) is itself uncertain; so every ratio is printed with a 95% bootstrap
interval (the independent games and the mirrored units resampled, everything
recomputed, ``RESAMPLES`` times). A target is *met* when the whole interval is
within it, *NOT met* when the whole interval is beyond it, and *undecided*
otherwise: more units decide it.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from bots import make_bot, play_match
from engine_service.rules import Rules, luck_of_match
from engine_service.rules.luck import DEFAULT_SAMPLES, SCALE, V_FACTOR

Z = 1.96
RESAMPLES = 1000
PAIR = ("greedy", "greedy:eps=0.05")


@dataclass(frozen=True)
class Game:
    """One game's figures for the pair (A's view): raw and skill differences, A's score against B."""

    raw: float
    skill: float
    score: float
    luck_cpu: float


def play_one(task: tuple[str, int, str, tuple[str, ...]]) -> Game:
    """Play one game (``seats`` name a spec per seat, A's and B's among them) and rate it."""
    preset, players, seed, seats = task
    rules = Rules.preset(preset, players=players)
    match = play_match(rules, seed, [make_bot(spec, f"{seed}/{s}/{spec}") for s, spec in enumerate(seats)])
    start = time.process_time()
    luck = luck_of_match(match, seed)
    cpu = time.process_time() - start
    a, b = (rules.team_of(seats.index(name)) for name in PAIR)
    x_a, x_b = match.totals[a], match.totals[b]
    score = 1.0 if x_a > x_b else 0.5 if x_a == x_b else 0.0
    return Game(luck.raw[a] - luck.raw[b], luck.skill[a] - luck.skill[b], score, cpu)


def rotations(players: int, extra: str) -> list[tuple[str, ...]]:
    """Every seat rotation of A, B (and the third player ``extra`` at three seats)."""
    base = [*PAIR, extra][:players]
    return [tuple(base[(s + r) % players] for s in range(players)) for r in range(players)]


def play_all(preset: str, players: int, units: int, extra: str, seed: str) -> tuple[list[Game], list[list[Game]]]:
    """``units * players`` independent games and ``units`` mirrored units, on every core."""
    rots = rotations(players, extra)
    k = len(rots)
    tasks = [(preset, players, f"{seed}/ind/{g}", rots[g % k]) for g in range(units * k)]
    tasks += [(preset, players, f"{seed}/mir/{u}", rots[r]) for u in range(units) for r in range(k)]
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        games = list(pool.map(play_one, tasks, chunksize=8))
    independent, mirrored = games[: units * k], games[units * k :]
    return independent, [mirrored[u * k : (u + 1) * k] for u in range(units)]


def variance(values: list[float]) -> float:
    """The sample variance (floats; ``statistics.variance`` is exact and too slow to bootstrap)."""
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def games_needed(units: list[float], per_unit: int, mu: float) -> float:
    """Games to order the pair at 95%: per_unit * (z * sd / mu)^2 (inf if mu is 0)."""
    return per_unit * Z**2 * variance(units) / mu**2 if mu else math.inf


def figures(independent: list[Game], mirrored: list[list[Game]]) -> dict[str, dict[str, float]]:
    """Variance per game (or per unit) and the games each method needs."""
    every = independent + [g for unit in mirrored for g in unit]
    mu = statistics.fmean(g.raw for g in every)
    mu_score = statistics.fmean(g.score for g in every) - 0.5
    k = len(mirrored[0])
    methods = {
        "independent, raw margin": ([g.raw for g in independent], 1, mu),
        "independent, luck-adjusted": ([g.skill for g in independent], 1, mu),
        "mirrored, raw margin": ([statistics.fmean(g.raw for g in u) for u in mirrored], k, mu),
        "mirrored + luck-adjusted": ([statistics.fmean(g.skill for g in u) for u in mirrored], k, mu),
        "independent, win/loss": ([g.score for g in independent], 1, mu_score),
    }
    return {
        name: {"variance": variance(v), "per_unit": per, "mean": m, "games": games_needed(v, per, m)}
        for name, (v, per, m) in methods.items()
    }


TARGETS = (
    ("independent, luck-adjusted", "independent, raw margin", 1 / 2),
    ("mirrored + luck-adjusted", "mirrored, raw margin", 2 / 3),
    ("mirrored + luck-adjusted", "independent, win/loss", 1 / 10),
)


def ratios(fig: dict[str, dict[str, float]]) -> list[float]:
    """The games of each target's method over its baseline's, in the order of ``TARGETS``. Two margins share
    ``mu``, which cancels: their ratio is taken from the variances (a resample whose ``mu`` is 0 gives no
    0/0); against win/loss it is the games' (a ``mu_score`` of 0 makes win/loss need infinitely many: 0)."""

    def ratio(a: dict[str, float], b: dict[str, float]) -> float:
        if a["mean"] == b["mean"]:
            return a["per_unit"] * a["variance"] / (b["per_unit"] * b["variance"])
        return a["games"] / b["games"] if b["games"] else math.inf

    return [ratio(fig[name], fig[base]) for name, base, _ in TARGETS]


def intervals(
    independent: list[Game], mirrored: list[list[Game]], resamples: int = RESAMPLES, seed: str = "luck-bootstrap"
) -> list[tuple[float, float]]:
    """A 95% percentile-bootstrap interval for each ratio of :func:`ratios`."""
    rng = random.Random(seed)
    draws: list[list[float]] = [[] for _ in TARGETS]
    for _ in range(resamples):
        fig = figures(rng.choices(independent, k=len(independent)), rng.choices(mirrored, k=len(mirrored)))
        for drawn, ratio in zip(draws, ratios(fig), strict=True):
            drawn.append(ratio)
    out = []
    for drawn in draws:
        drawn.sort()
        out.append((drawn[int(0.025 * resamples)], drawn[min(resamples - 1, int(0.975 * resamples))]))
    return out


def verdict(low: float, high: float, target: float) -> str:
    """Met when the whole interval is within the target, NOT met when it is wholly beyond it."""
    return "met" if high <= target else "NOT met" if low > target else "undecided (more units decide it)"


def report(
    title: str, fig: dict[str, dict[str, float]], bounds: list[tuple[float, float]], games: int, cpu: float
) -> list[str]:
    """The section's lines: every method's figures, each target beside its baseline with its interval."""
    lines = [f"\n{title} ({games} games; luck estimate {1000 * cpu:.0f} ms CPU per game)"]
    for name, f in fig.items():
        unit = "per game" if f["per_unit"] == 1 else f"per unit of {f['per_unit']:.0f} games"
        lines.append(f"  {name:28s} variance {f['variance']:9.2f} {unit:22s} -> {f['games']:8.0f} games")
    for (name, base, target), ratio, (low, high) in zip(TARGETS, ratios(fig), bounds, strict=True):
        lines.append(
            f"  {name} / {base}: {ratio:.3f} (95% interval {low:.3f}-{high:.3f}; target <= {target:.2f}) "
            f"{verdict(low, high, target)}"
        )
    return lines


def best_scales(independent: list[Game], mirrored: list[list[Game]]) -> tuple[float, float]:
    """The scale of V's differences (:data:`~engine_service.rules.luck.SCALE`) that would leave skill the
    least spread on these games: cov(raw, luck) / var(luck), with luck taken back to scale 1; on the
    independent games and on the mirrored units."""

    def best(pairs: list[tuple[float, float]]) -> float:
        raw, luck = [r for r, _ in pairs], [lk / SCALE for _, lk in pairs]
        return statistics.covariance(raw, luck) / variance(luck)

    units = [(statistics.fmean(g.raw for g in u), statistics.fmean(g.raw - g.skill for g in u)) for u in mirrored]
    return best([(g.raw, g.raw - g.skill) for g in independent]), best(units)


def luck_section(units: int, seed: str = "luck-bench") -> list[str]:
    """Both tables (two seats, then three): play, rate, and say what the luck adjustment buys."""
    out: list[str] = []
    for players, extra in ((2, ""), (3, "greedy:eps=0.025")):
        started = time.perf_counter()
        independent, mirrored = play_all("tablic", players, units, extra, f"{seed}/{players}")
        every = independent + [g for u in mirrored for g in u]
        cpu = statistics.fmean(g.luck_cpu for g in every)
        who = " against ".join(PAIR) + (f" (third seat {extra})" if extra else "")
        title = f"tablic, {players} players, {who}: {units} mirrored units and as many on independent deals"
        bounds = intervals(independent, mirrored)
        out += report(title, figures(independent, mirrored), bounds, len(every), cpu)
        ind, mir = best_scales(independent, mirrored)
        out.append(
            f"  the scale of V's differences that would leave skill the least spread on these games: "
            f"{ind:.2f} independent, {mir:.2f} mirrored (the arena's: {SCALE:.3f} = V_FACTOR {V_FACTOR} * "
            f"{DEFAULT_SAMPLES}/{DEFAULT_SAMPLES + 1} for {DEFAULT_SAMPLES} samples)"
        )
        out.append(f"  ({time.perf_counter() - started:.0f} s)")
    return out
