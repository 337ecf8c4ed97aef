"""Rules-engine benchmark: capture enumeration and random self-play, each beside a naive baseline.

Run from the repository root::

    python3 bench/rules.py            # default, well under a minute
    python3 bench/rules.py --quick    # CI smoke, a few seconds
    python3 -m bench.rules --json     # the figures as one JSON object
    python3 bench/rules.py --profile  # also cProfile the self-play fast path

1. Capture enumeration (preset ``tablic-pagat``): a fixed, seeded set of random
   positions (a played non-Jack card on a table of 1..8 cards, the same number of
   positions for each size). ``CaptureFinder.captures`` is measured with a cold
   cache (cleared before every position, so the solving is measured) and a warm
   one (the steady state of self-play), against ``reference.naive_captures``
   (every subset of the table, each checked). Every answer of the fast finder is
   checked against the naive one.

2. Random self-play (preset ``tablic``, 2 players, uniformly random legal plays,
   one core): deals per second on the fast path (``m.deal.legal_plays()`` +
   ``m.push``), on the checked path (``m.legal_plays()`` + ``m.play``) and with
   legal plays built from ``naive_captures`` (pushed like the fast path). All three
   use the same match seeds and the same RNG, and the legal-play lists are in the
   same canonical order, so they play identical games (checked: the plays they
   share must be equal). The fast and checked runs alternate in chunks, each with
   its own capture cache starting empty, so machine load hits both alike. The
   naive run stops at a time budget (SIGALRM, even inside a position): its cost
   per position grows like 3**n with the table size n, so its rate hinges on the
   few large tables a short run meets. Deals/s counts a cut-short deal by its
   share of plays (every tablic deal has 48).

3. The capture batch path (``tablanette rules captures --batch``, whole process,
   start-up included) on 20,000 positions of the same kind (2,500 per table size,
   JSON Lines in and out), beside the in-process enumerator on the same positions
   (a fresh ``CaptureFinder``, its cache left to work as in play, one core). Each is
   timed 3 times, alternating; the medians are kept. Every batch answer is checked
   against the enumerator's.

Capture timing goes slice by slice (50 positions): naive passes (3, or 1 for a
slow slice), then cold and warm passes alternating; the median of each is kept.
Nothing here is a timing assertion: the only checks are correctness checks.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import platform
import pstats
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script (python3 bench/rules.py): make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine_service.rules.captures import CaptureFinder
from engine_service.rules.cards import CARDS, JACK, card_names, format_cards, iter_mask
from engine_service.rules.deal import DealState, PlayRecord, finder_for
from engine_service.rules.match import Match
from engine_service.rules.play import Play
from engine_service.rules.reference import naive_captures
from engine_service.rules.rules import Rules

CAPTURE_PRESET = "tablic-pagat"
SELFPLAY_PRESET = "tablic"
TABLE_SIZES = range(1, 9)
POSITION_SEED = 20240611
PLAY_SEED = 7
MATCH_SEED = "bench"
SLICE = 50
"""Capture positions per timing slice (naive, cold and warm are timed slice by slice)."""
BATCH_PER_SIZE = 2500
"""Batch-path positions per table size (20,000 in all)."""
BATCH_REPEATS = 3
NAIVE_ONE_PASS_S = 0.1
"""A naive slice slower than this is timed once, not three times."""


@dataclass(frozen=True)
class Config:
    mode: str
    positions_per_size: int
    """Capture positions per table size (1..8 cards)."""
    repeats: int
    """Passes per fast capture measurement (the median is reported)."""
    fast_deals: int
    """Deals for the fast and the checked self-play runs."""
    naive_deals: int
    """At most this many deals for the naive self-play baseline..."""
    naive_budget_s: float
    """...and at most this many seconds (it can stop inside a deal, even inside a position)."""
    chunks: int
    """The fast and checked runs alternate in this many chunks."""


QUICK = Config("quick", positions_per_size=50, repeats=3, fast_deals=300, naive_deals=10, naive_budget_s=2.0, chunks=3)
DEFAULT = Config(
    "default", positions_per_size=500, repeats=5, fast_deals=3000, naive_deals=100, naive_budget_s=15.0, chunks=10
)


# ---------------------------------------------------------------- capture enumeration

Position = tuple[int, int]  # (table mask, played card)


def capture_positions(per_size: int, seed: int) -> dict[int, list[Position]]:
    """``per_size`` random positions for each table size: a non-Jack card and a table."""
    rng = random.Random(seed)
    out: dict[int, list[Position]] = {}
    for size in TABLE_SIZES:
        bucket = out[size] = []
        for _ in range(per_size):
            card = rng.choice([c for c in range(52) if c >> 2 != JACK])
            table = 0
            for c in rng.sample([c for c in range(52) if c != card], size):
                table |= 1 << c
            bucket.append((table, card))
    return out


def _cold_pass(finder: CaptureFinder, positions: list[Position]) -> float:
    """Seconds for one pass with the cache emptied before every position (every call solves)."""
    captures, clear = finder.captures, finder._cache.clear
    start = time.perf_counter()
    for table, card in positions:
        clear()
        captures(table, card)
    return time.perf_counter() - start


def _warm_pass(finder: CaptureFinder, positions: list[Position]) -> float:
    """Seconds for one pass on a finder that has seen every position (every call hits the cache)."""
    captures = finder.captures
    start = time.perf_counter()
    for table, card in positions:
        captures(table, card)
    return time.perf_counter() - start


def _check_captures(what: str, positions: list[Position], got: list[list[int]], want: list[list[int]]) -> None:
    for (table, card), g, w in zip(positions, got, want, strict=True):
        if g != w:
            raise AssertionError(
                f"{what} disagrees with naive_captures: {CARDS[card]} on [{format_cards(table)}]: "
                f"{[format_cards(m) for m in g]} != {[format_cards(m) for m in w]}"
            )


@dataclass
class CaptureBucket:
    size: int
    positions: int
    naive_s: float
    cold_s: float
    warm_s: float


def bench_captures(cfg: Config) -> dict[str, Any]:
    rules = Rules.preset(CAPTURE_PRESET)
    buckets: list[CaptureBucket] = []
    for size, bucket in capture_positions(cfg.positions_per_size, POSITION_SEED).items():
        naive_s = cold_s = warm_s = 0.0
        cold_finder, warm_finder = CaptureFinder(rules), CaptureFinder(rules)
        # Slices interleave naive, cold and warm timing, so load drift hits all three alike.
        for first in range(0, len(bucket), SLICE):
            positions = bucket[first : first + SLICE]
            # Naive baseline, keeping its answers for the check: the median of 3 passes, or
            # 1 pass when a slice takes over NAIVE_ONE_PASS_S (7-8 card tables, seconds in all).
            naive_times = []
            while True:
                start = time.perf_counter()
                want = [naive_captures(rules, table, card) for table, card in positions]
                naive_times.append(time.perf_counter() - start)
                if len(naive_times) == 3 or naive_times[0] > NAIVE_ONE_PASS_S:
                    break
            naive_s += statistics.median(naive_times)

            # Correctness: a cold answer (cache emptied first) and a warm one (cache hit) for every position.
            cold = []
            for table, card in positions:
                cold_finder._cache.clear()
                cold.append([c.mask for c in cold_finder.captures(table, card)])
            _check_captures("CaptureFinder (cold cache)", positions, cold, want)
            for table, card in positions:
                warm_finder.captures(table, card)
            warm = [[c.mask for c in warm_finder.captures(table, card)] for table, card in positions]
            _check_captures("CaptureFinder (warm cache)", positions, warm, want)

            cold_times, warm_times = [], []
            for _ in range(cfg.repeats):
                cold_times.append(_cold_pass(cold_finder, positions))
                warm_times.append(_warm_pass(warm_finder, positions))
            cold_s += statistics.median(cold_times)
            warm_s += statistics.median(warm_times)
        buckets.append(CaptureBucket(size, len(bucket), naive_s, cold_s, warm_s))

    total = sum(b.positions for b in buckets)
    naive_rate = total / sum(b.naive_s for b in buckets)
    cold_rate = total / sum(b.cold_s for b in buckets)
    warm_rate = total / sum(b.warm_s for b in buckets)
    return {
        "preset": CAPTURE_PRESET,
        "positions": total,
        "table_sizes": [TABLE_SIZES[0], TABLE_SIZES[-1]],
        "checked_positions": total,
        "naive_per_s": naive_rate,
        "cold_per_s": cold_rate,
        "warm_per_s": warm_rate,
        "cold_ratio": cold_rate / naive_rate,
        "warm_ratio": warm_rate / naive_rate,
        "by_table_size": {
            str(b.size): {
                "positions": b.positions,
                "naive_per_s": b.positions / b.naive_s,
                "cold_per_s": b.positions / b.cold_s,
                "warm_per_s": b.positions / b.warm_s,
            }
            for b in buckets
        },
    }


# ---------------------------------------------------------------- the batch path


def bench_batch() -> dict[str, Any]:
    """``tablanette rules captures --batch`` (a whole process) against the in-process enumerator."""
    rules = Rules.preset(CAPTURE_PRESET)
    positions = [p for bucket in capture_positions(BATCH_PER_SIZE, POSITION_SEED + 1).values() for p in bucket]
    command = [sys.executable, "-c", "from cli import main; main()", "rules", "captures"]
    command += ["--preset", CAPTURE_PRESET, "--batch"]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as questions:
        for table, card in positions:
            questions.write(json.dumps({"table": card_names(table), "card": str(CARDS[card])}) + "\n")
        questions.flush()
        process_times, enum_times = [], []
        for _ in range(BATCH_REPEATS):
            start = time.perf_counter()
            done = subprocess.run([*command, questions.name], capture_output=True, text=True, check=True)
            process_times.append(time.perf_counter() - start)
            finder = CaptureFinder(rules)
            start = time.perf_counter()
            want = [finder.captures(table, card) for table, card in positions]
            enum_times.append(time.perf_counter() - start)
    got = [json.loads(line)["captures"] for line in done.stdout.splitlines()]
    expected = [[card_names(c.mask) for c in caps] for caps in want]
    if got != expected:
        bad = next(i for i, (g, w) in enumerate(zip(got, expected, strict=False)) if g != w) if got else 0
        raise AssertionError(f"the batch path disagrees with CaptureFinder at position {bad} ({len(got)} answers)")
    process_s, enum_s = statistics.median(process_times), statistics.median(enum_times)
    return {
        "preset": CAPTURE_PRESET,
        "positions": len(positions),
        "batch_process_s": process_s,
        "batch_per_s": len(positions) / process_s,
        "enumerator_s": enum_s,
        "enumerator_per_s": len(positions) / enum_s,
        "ratio": enum_s / process_s,
        "checked_positions": len(got),
    }


# ---------------------------------------------------------------- random self-play


def naive_legal_plays(deal: DealState) -> list[Play]:
    """``DealState.legal_plays`` rebuilt on ``naive_captures``, in the same canonical order."""
    rules = deal.rules
    table = deal.table
    out: list[Play] = []
    for card in iter_mask(deal.hands[deal.turn]):
        c = CARDS[card]
        if card >> 2 == JACK and rules.jack_sweeps:
            out.append(Play(c, table))
            continue
        masks = naive_captures(rules, table, card)
        if not masks:
            out.append(Play(c, 0))
            continue
        if rules.capture_optional:
            out.append(Play(c, 0))
        out.extend(Play(c, m) for m in masks)
    return out


class _OutOfTime(Exception):
    """Raised from SIGALRM to stop the naive baseline, even inside a long position."""


_Cache = dict[tuple[tuple[int, ...], int], tuple[tuple[int, int, int], ...]]


class SelfPlay:
    """Random self-play that can be run in chunks (so two paths can be timed interleaved).

    ``path`` is ``fast`` (``m.deal.legal_plays()`` + ``m.push``), ``checked``
    (``m.legal_plays()`` + ``m.play``) or ``naive`` (:func:`naive_legal_plays` +
    ``m.push``). Matches are seeded ``bench-0``, ``bench-1``...; plays are chosen
    uniformly by one seeded RNG, so every path plays the same games. Each runner
    has its own capture cache (empty at first), swapped into the engine's shared
    :func:`finder_for` finder while it runs.
    """

    def __init__(self, rules: Rules, path: str) -> None:
        self.rules = rules
        self.path = path
        self.choice = random.Random(PLAY_SEED).choice
        self.matches = [Match(rules, seed=f"{MATCH_SEED}-0")]
        self.cache: _Cache = {}
        self.deals = 0
        """Deals finished."""
        self.seconds = 0.0
        self.max_table = 0
        self.out_of_time = False
        self._armed = False

    def run(self, deals: int, budget_s: float | None = None) -> None:
        """Play ``deals`` more deals; with ``budget_s`` (where SIGALRM exists) stop after that long."""
        if self.out_of_time:
            raise RuntimeError("a run stopped by its time budget cannot go on")
        rules, path, choice, matches = self.rules, self.path, self.choice, self.matches
        finder = finder_for(rules)
        saved, finder._cache = finder._cache, self.cache
        m = matches[-1]
        counted = len(m.deals)
        target = self.deals + deals
        alarm = budget_s is not None and hasattr(signal, "setitimer")
        previous = signal.signal(signal.SIGALRM, self._on_alarm) if alarm else None
        self._armed = alarm
        start = time.perf_counter()
        try:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, budget_s or 0.0)
            while self.deals < target:
                if m.is_over:
                    m = Match(rules, seed=f"{MATCH_SEED}-{len(matches)}")
                    matches.append(m)
                    counted = 0
                if path == "fast":
                    m.push(choice(m.deal.legal_plays()))
                elif path == "checked":
                    m.play(choice(m.legal_plays()))
                else:
                    deal = m.deal
                    self.max_table = max(self.max_table, deal.table.bit_count())
                    m.push(choice(naive_legal_plays(deal)))
                if len(m.deals) != counted:
                    counted = len(m.deals)
                    self.deals += 1
        except _OutOfTime:
            self.out_of_time = True
        finally:
            self._armed = False  # first: a late alarm must not raise in here
            self.seconds += time.perf_counter() - start
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0.0)
                signal.signal(signal.SIGALRM, previous)
            finder._cache = saved

    def _on_alarm(self, signum: int, frame: object) -> None:
        if self._armed:
            raise _OutOfTime

    @property
    def plays(self) -> list[PlayRecord]:
        """Every play made, in order (a deal in progress or cut short included)."""
        out = [p for match in self.matches for d in match.deals for p in d.plays]
        last = self.matches[-1].deal
        if not last.over:
            out.extend(last.plays)
        return out

    @property
    def deals_played(self) -> float:
        """Deals played, a deal in progress counted by its share of plays (48 per deal in tablic)."""
        return len(self.plays) / (52 - self.rules.table_size)

    @property
    def per_s(self) -> float:
        return self.deals_played / self.seconds


def bench_self_play(cfg: Config) -> dict[str, Any]:
    rules = Rules.preset(SELFPLAY_PRESET, players=2)
    naive = SelfPlay(rules, "naive")
    naive.run(cfg.naive_deals, budget_s=cfg.naive_budget_s)
    fast, checked = SelfPlay(rules, "fast"), SelfPlay(rules, "checked")
    chunk = max(1, cfg.fast_deals // cfg.chunks)
    while fast.deals < cfg.fast_deals:  # interleaved chunks, so load drift hits both paths alike
        n = min(chunk, cfg.fast_deals - fast.deals)
        fast.run(n)
        checked.run(n)
    fast_plays, checked_plays, naive_plays = fast.plays, checked.plays, naive.plays
    if fast_plays != checked_plays:
        raise AssertionError("the fast and the checked path played different games from the same seeds")
    if naive_plays != fast_plays[: len(naive_plays)]:
        raise AssertionError("naive legal plays led to different games than the fast path from the same seeds")
    return {
        "preset": SELFPLAY_PRESET,
        "players": 2,
        "naive_deals": naive.deals_played,
        "naive_plays": len(naive_plays),
        "naive_seconds": naive.seconds,
        "naive_out_of_time": naive.out_of_time,
        "naive_per_s": naive.per_s,
        "naive_max_table": naive.max_table,
        "fast_deals": fast.deals,
        "fast_per_s": fast.per_s,
        "fast_plays_per_s": len(fast_plays) / fast.seconds,
        "fast_ratio": fast.per_s / naive.per_s,
        "checked_per_s": checked.per_s,
        "checked_ratio": checked.per_s / naive.per_s,
        "chunks": cfg.chunks,
        "cache_entries_after_fast_run": len(fast.cache),
        "identical_plays": len(fast_plays),
        "identical_naive_plays": len(naive_plays),
    }


def profile_fast_path(deals: int, top: int = 20) -> str:
    """cProfile of the self-play fast path (from an empty cache), top functions by own time."""
    runner = SelfPlay(Rules.preset(SELFPLAY_PRESET, players=2), "fast")
    profiler = cProfile.Profile()
    profiler.enable()
    runner.run(deals)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


# ---------------------------------------------------------------- output


def _rate(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 0.1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _times(x: float) -> str:
    return f"{_rate(x)} ×"


def report(results: dict[str, Any]) -> str:
    cap, sp, batch = results["captures"], results["self_play"], results["batch"]
    lo, hi = cap["table_sizes"]
    stop = "time budget" if sp["naive_out_of_time"] else "deal limit"
    busy = results["cpu_s"] < 0.9 * results["wall_s"]
    lines = [
        f"rules-engine benchmark ({results['mode']}; Python {results['python']}; "
        f"capture timing: medians of passes over slices of {SLICE} positions)",
        "",
        f"capture enumeration ({cap['preset']}, tables of {lo}-{hi} cards, {cap['positions']:,} positions)",
        f"  naive baseline      {_rate(cap['naive_per_s']):>11} positions/s",
        f"  fast, cold cache    {_rate(cap['cold_per_s']):>11} positions/s  ({_times(cap['cold_ratio'])} baseline)",
        f"  fast, warm cache    {_rate(cap['warm_per_s']):>11} positions/s  ({_times(cap['warm_ratio'])} baseline)",
        f"  all {cap['checked_positions']:,} answers identical to naive_captures (cold and warm)",
        "  by table size (positions/s):",
        "    cards        naive         cold         warm    cold/naive    warm/naive",
    ]
    for size, b in cap["by_table_size"].items():
        n, c, w = b["naive_per_s"], b["cold_per_s"], b["warm_per_s"]
        lines.append(
            f"    {size:>5} {_rate(n):>12} {_rate(c):>12} {_rate(w):>12} {_times(c / n):>13} {_times(w / n):>13}"
        )
    lines += [
        "",
        f"capture batch path ({batch['preset']}, {batch['positions']:,} positions, tables of {lo}-{hi} cards; "
        f"medians of {BATCH_REPEATS} alternating runs)",
        f"  in-process enumerator {_rate(batch['enumerator_per_s']):>9} positions/s  "
        f"(a fresh CaptureFinder, one core, {batch['enumerator_s']:.3f} s)",
        f"  tablanette rules captures --batch, whole process "
        f"{_rate(batch['batch_per_s'])} positions/s ({batch['batch_process_s']:.3f} s, start-up included)",
        f"  ratio                 {batch['ratio']:9.2f} × the enumerator (all {batch['checked_positions']:,} "
        "answers identical)",
        "",
        f"random self-play ({sp['preset']}, {sp['players']} players, uniformly random legal plays, one core)",
        f"  naive legal plays   {_rate(sp['naive_per_s']):>11} deals/s",
        f"  fast path           {_rate(sp['fast_per_s']):>11} deals/s   "
        f"({_times(sp['fast_ratio'])} baseline; {sp['fast_deals']:,} deals, "
        f"{_rate(sp['fast_plays_per_s'])} plays/s)",
        f"  checked path        {_rate(sp['checked_per_s']):>11} deals/s   "
        f"({_times(sp['checked_ratio'])} baseline, {sp['checked_per_s'] / sp['fast_per_s']:.2f} × fast path)",
        f"  naive run: {sp['naive_plays']:,} plays ({sp['naive_deals']:.2f} deals) in {sp['naive_seconds']:.1f} s, "
        f"stopped by its {stop}; largest table {sp['naive_max_table']} cards",
        f"  same seeds and RNG, identical games: naive's {sp['identical_naive_plays']:,} plays and checked's "
        f"{sp['identical_plays']:,} equal the fast run's",
        f"  fast and checked runs alternate in {sp['chunks']} chunks, each with its own capture cache",
        f"  (from empty; the fast run's held {sp['cache_entries_after_fast_run']:,} entries at the end)",
        "  note: the naive cost of a position grows ~3**n with the table size n, so the naive rate",
        "  hinges on the few large tables a short run meets; treat it and the ratios as rough",
        "",
        f"whole run: {results['wall_s']:.1f} s wall, {results['cpu_s']:.1f} s CPU"
        + (" (CPU well below wall: the machine was busy, so every rate is low)" if busy else ""),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="CI smoke: a few seconds")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--deals", type=int, help="deals for the fast and the checked self-play runs")
    parser.add_argument("--naive-deals", type=int, help="at most this many deals for the naive self-play")
    parser.add_argument("--naive-seconds", type=float, help="time budget of the naive self-play")
    parser.add_argument("--profile", action="store_true", help="also cProfile the self-play fast path")
    args = parser.parse_args(argv)

    cfg = QUICK if args.quick else DEFAULT
    cfg = Config(
        cfg.mode,
        cfg.positions_per_size,
        cfg.repeats,
        args.deals if args.deals is not None else cfg.fast_deals,
        args.naive_deals if args.naive_deals is not None else cfg.naive_deals,
        args.naive_seconds if args.naive_seconds is not None else cfg.naive_budget_s,
        cfg.chunks,
    )
    if cfg.fast_deals < 1 or cfg.naive_deals < 1 or cfg.naive_budget_s <= 0:
        parser.error("--deals, --naive-deals and --naive-seconds must be positive")

    start, cpu_start = time.perf_counter(), time.process_time()
    results: dict[str, Any] = {
        "mode": cfg.mode,
        "python": platform.python_version(),
        "repeats": cfg.repeats,
        "captures": bench_captures(cfg),
        "self_play": bench_self_play(cfg),
        "batch": bench_batch(),
    }
    results["wall_s"] = time.perf_counter() - start
    results["cpu_s"] = time.process_time() - cpu_start
    if args.json:
        print(json.dumps(results, sort_keys=True))
    else:
        print(report(results))
    if args.profile:
        print(profile_fast_path(cfg.fast_deals), file=sys.stderr if args.json else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
