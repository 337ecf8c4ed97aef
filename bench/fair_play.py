"""Fair play, measured: can a bot learn a hidden card, and does it win by it?

Runs real leagues (an engine service, two Celery workers, the web ladder, bots
connected over gRPC) with the cheater of :mod:`bench.cheater`, its honest twin
(the same program, no channels) and greedy, then scores the cheater's
predictions of its opponent's hand against the records:

- ``default``: ``league create NAME`` and nothing else (secret deals; with
  connected bots, independent ones). The cheater must predict at chance and be no
  stronger than its honest twin.
- ``public``: ``--seed S --deals mirrored``, the cheater told S: the control,
  showing the measurement sees a cheater when there is one to see.
- ``forced``: a secret league forced to mirrored deals: the memory channel works
  (that is why the arena does not mirror deals for bots it does not run), the
  twin's record and live stream stay held back, and the second-sight check sees
  the cheater's advantage.

A prediction is one card named as being in the opponent's hand; by chance it is
right with probability hand size / cards unseen (the hypergeometric rate, exact
whatever the deal). ``z`` is (right - expected) / its standard deviation under
chance. Margins are points a match (the bot's total minus its opponent's), with
a 95% interval; the cheater's edge is its mean margin against greedy minus its
honest twin's.

    python -m bench.fair_play                # a few minutes: the sizes the test uses
    python -m bench.fair_play --games 120    # more games a pairing in the default league
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.kit import temp_arena
from cli.local import LocalArena
from engine_service.rules import mask_of, parse_cards
from scheduler.outcomes import Outcome
from store.results import LeagueResults

T95 = 1.96
TARGET = 31
"""Points a match is played to: short matches, many of them."""


@dataclass
class Predictions:
    """A cheater's predictions of hidden cards, scored."""

    made: int = 0
    right: int = 0
    expected: float = 0.0
    variance: float = 0.0
    by_channel: dict[str, int] = field(default_factory=dict)
    """Predictions by the channel that gave the cards (``none``: a random draw)."""
    leaks: list[dict[str, Any]] = field(default_factory=list)
    """Lines where a channel answered that must not have: the live stream of a game dealt the same cards."""
    turns: int = 0

    @property
    def rate(self) -> float:
        return self.right / self.made if self.made else 0.0

    @property
    def chance(self) -> float:
        return self.expected / self.made if self.made else 0.0

    @property
    def z(self) -> float:
        return (self.right - self.expected) / math.sqrt(self.variance) if self.variance else 0.0

    def line(self) -> str:
        channels = ", ".join(f"{k} {v}" for k, v in sorted(self.by_channel.items()))
        return (
            f"{self.made} predictions on {self.turns} turns: {self.rate:.1%} right, chance {self.chance:.1%}, "
            f"z = {self.z:+.1f} (from: {channels}); leaks: {len(self.leaks)}"
        )


def score(log: Path, records: dict[str, dict[str, Any]]) -> Predictions:
    """Score the cheater's log against the records (game id -> record) of its league's games."""
    out = Predictions()
    for raw in log.read_text().splitlines() if log.exists() else []:
        line = json.loads(raw)
        record = records.get(line["game"])
        if "leak" in line:  # a twin's live stream answered: a leak where the twin was dealt the same cards
            twin = records.get(line["game"].split("/")[0] + "/" + line["twin"])
            if record is not None and twin is not None and twin["seed"] == record["seed"]:
                out.leaks.append(line)
            continue
        if record is None:
            continue
        hand = mask_of(parse_cards(record["deals"][line["deal"]]["hands"][line["round"]][line["of"]]))
        guess = mask_of(parse_cards(line["guess"]))
        k, u = len(line["guess"]), line["unseen"]
        # the next seat holds k of the u unseen cards; a guess of k of them is hypergeometric by chance
        p = k / u
        out.turns += 1
        out.made += k
        out.right += bin(guess & hand).count("1")
        out.expected += k * p
        out.variance += k * p * (1 - p) * (u - k) / (u - 1) if u > 1 else 0.0
        out.by_channel[line["channel"]] = out.by_channel.get(line["channel"], 0) + k
    return out


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, xs: Sequence[float]) -> Interval:
        m = statistics.fmean(xs) if xs else 0.0
        half = T95 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else math.inf
        return cls(m, m - half, m + half, len(xs))

    def __str__(self) -> str:
        return f"{self.mean:+.1f} [{self.low:+.1f}, {self.high:+.1f}] (n = {self.n})"


def margins(outcomes: Iterable[Outcome], bot: str, against: str | None = None) -> list[float]:
    """``bot``'s margin (its points minus its opponent's) in each of its two-seat matches (against ``against``)."""
    out: list[float] = []
    for o in outcomes:
        teams = [t[0] for t in o.teams]
        if bot in teams and (against is None or against in teams):
            me = teams.index(bot)
            out.append(float(o.points[me] - o.points[1 - me]))
    return out


def difference(a: Sequence[float], b: Sequence[float]) -> Interval:
    """The mean of ``a`` minus the mean of ``b``, with a 95% (Welch) interval."""
    d = statistics.fmean(a) - statistics.fmean(b)
    half = T95 * math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    return Interval(d, d - half, d + half, len(a) + len(b))


@dataclass
class Stage:
    """An arena with an engine, two workers, the web ladder and the bots of the fair-play leagues."""

    arena: LocalArena
    samples: int = 8
    """The cheater's (and its honest twin's) look-ahead: the strong bot's determinizations a turn."""
    web: str = ""
    port: int = 0
    logs: dict[str, Path] = field(default_factory=dict)

    def start(self) -> Stage:
        _, self.port = self.arena.start_engine()
        _, web_port = self.arena.start_web()
        self.web = f"http://127.0.0.1:{web_port}"
        for i in (1, 2):  # two workers: the two games of a mirrored deal run at the same time
            self.arena.start_worker(f"w{i}")
        return self

    def cheater(self, name: str, *args: str) -> Path:
        """A cheater (or, with ``--honest``, its honest twin) connected as ``name``; its prediction log."""
        log = self.arena.workdir / f"{name}.jsonl"
        argv = [sys.executable, "-m", "bench.cheater", "--name", name, "--address", f"127.0.0.1:{self.port}"]
        token = self.arena.add_bot(name)
        self.arena.spawn(
            f"bot-{name}", [*argv, "--web", self.web, "--log", str(log), *args], {"TABLANETTE_TOKEN": token}
        )
        self.logs[name] = log
        return log

    def greedy(self, name: str) -> None:
        self.arena.start_python_bot("greedy", name, self.arena.add_bot(name), self.port)

    def league(self, name: str, bots: Sequence[str], games: int, *create: str) -> dict[str, Any]:
        """Create and play a league (round robin, ``games`` a pairing); its ``league status --json``."""
        self.arena.wait_connected(*bots, timeout=60)
        commands = [
            ["league", "create", name, "--games", str(games), "--rule", f"target={TARGET}", *create],
            ["league", "add-bot", name, *bots],
            ["league", "start", name, "--window", "4"],
        ]
        for cmd in commands:
            done = self.arena.tablanette(*cmd, timeout=1800)
            if done.returncode:
                raise RuntimeError(f"tablanette {' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")
        status = self.arena.tablanette("league", "status", name, "--json")
        return dict(json.loads(status.stdout))

    def records(self, league: str) -> dict[str, dict[str, Any]]:
        return {r["id"]: dict(r) for r in LeagueResults(self.arena.redis, self.arena.prefix).records(league)}

    def outcomes(self, league: str) -> list[Outcome]:
        return [Outcome.from_json(o) for o in LeagueResults(self.arena.redis, self.arena.prefix).outcomes(league)]


@dataclass
class Findings:
    """What the three leagues showed (see the module's doc)."""

    default: Predictions
    edge: Interval
    head_to_head: Interval
    public: Predictions
    forced: Predictions
    forced_status: dict[str, Any]
    lines: list[str] = field(default_factory=list)


def run(stage: Stage, games: int = 40, control_games: int = 6, forced_games: int = 40) -> Findings:
    """The three leagues on ``stage`` (cheater ``mole``, its honest twin ``fair``, ``greedy``); what they showed."""
    mole, twin = stage.cheater("mole"), stage.cheater("fair", "--honest")
    stage.cheater("spy", "--known-seed", "open-secret")
    stage.greedy("greedy")
    lines: list[str] = []

    default_status = stage.league("fair-default", ["mole", "fair", "greedy"], games)
    records, outcomes = stage.records("fair-default"), stage.outcomes("fair-default")
    default = score(mole, records)
    honest = score(twin, records)
    edge = difference(margins(outcomes, "mole", "greedy"), margins(outcomes, "fair", "greedy"))
    head = Interval.of(margins(outcomes, "mole", "fair"))
    lines += [
        f"default league (league create NAME; deals {default_status['deals']['dealt']}, "
        f"{'secret' if default_status['deals']['secret'] else 'PUBLIC'}):",
        f"  cheater: {default.line()}",
        f"  honest twin: {honest.line()}",
        f"  margin against greedy: cheater {Interval.of(margins(outcomes, 'mole', 'greedy'))}, "
        f"honest {Interval.of(margins(outcomes, 'fair', 'greedy'))}",
        f"  the cheater's edge over its honest twin, points a match: {edge}",
        f"  the cheater against its honest twin, points a match: {head}",
    ]

    stage.league("fair-public", ["spy", "greedy"], control_games, "--seed", "open-secret", "--deals", "mirrored")
    public = score(stage.logs["spy"], stage.records("fair-public"))
    lines += ["control (--seed told to the cheater, --deals mirrored):", f"  cheater: {public.line()}"]

    mole.write_text("")
    forced_status = stage.league("fair-forced", ["mole", "greedy"], forced_games, "--deals", "mirrored")
    forced = score(mole, stage.records("fair-forced"))
    lines += ["secret deals forced mirrored (the memory channel open, the records held back):", f"  {forced.line()}"]
    for s in forced_status["deals"]["second_sight"]:
        interval = s["interval"]
        shown = f"[{interval[0]:+.1f}, {interval[1]:+.1f}]" if interval else "(no interval)"
        lines.append(
            f"  second sight: {s['bot']} {s['advantage']:+.1f} {shown} over {s['deals']} deals"
            + (" FLAGGED" if s["flagged"] else "")
        )
    return Findings(default, edge, head, public, forced, forced_status, lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fair_play", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games a pairing in the default league")
    parser.add_argument("--forced-games", type=int, default=40, help="games in the forced-mirrored league")
    parser.add_argument("--samples", type=int, default=8, help="the strong look-ahead's determinizations a turn")
    args = parser.parse_args(argv)
    arena = temp_arena("fair-play")
    try:
        findings = run(Stage(arena, args.samples).start(), args.games, 6, args.forced_games)
    finally:
        arena.close()
    print("\n".join(findings.lines))


if __name__ == "__main__":
    main()
