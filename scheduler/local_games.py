"""Games on this machine between any bots, played as the arena plays them: ``tablanette match``.

Each game is played by the arena's one :class:`~engine_service.driver.MatchDriver`
(its rules, its time control, its timeouts and forfeits, its records), asking
bots in this process through :class:`scheduler.in_process.InProcessTransport`: a
built-in bot, an author's Python class, or a program over JSON lines (sandboxed
or not: that is the entry's factory's business). No Redis, no Celery, no engine
service.

Deals are mirrored by default as in :func:`scheduler.selfplay.seating`: the
games of a rotation share one deal, every entry taking every seat on the same
cards, so the luck of the deal cancels out. The results are fitted as a league's
are (:func:`scheduler.ratings.fit_ratings`, a mirrored pair one unit), so what
is printed carries an interval.

>>> from bots import make_bot
>>> entries = [Entry("greedy", lambda seed: make_bot("greedy", seed)), Entry("random", lambda s: make_bot("random", s))]
>>> series = play_series(Rules.preset("tablic"), entries, games=4, seed="doc")
>>> [s.games for s in series.stats.bots], series.moves > 0, len(series.outcomes)
([4, 4], True, 4)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bots import Bot
from bots.base import result_of
from engine_service.driver import MatchDriver, Response
from engine_service.rules import GameRecord, Rules
from engine_service.time_control import TimeControl
from engine_service.turn_builder import game_started
from programs.bridge import ProgramBot
from scheduler.in_process import InProcessTransport, Seat
from scheduler.ratings import Fit, Outcome, fit_ratings, outcome_of
from scheduler.selfplay import BotStats, SelfPlayStats, labels_of, seating, tally
from store import printable
from tablanette.v1 import arena_pb2 as apb

from .connected_programs import ConnectedPrograms

if TYPE_CHECKING:
    from engine_service.local_engine import LocalEngine

SAMPLE_CHARS = 300
"""The most of a bot's own words one fault's sample keeps."""
SEED_CHARS = 100
"""A series' seed names its games (``SEED/game-N``), and a game id on the wire is at most 128 characters."""


@dataclass(frozen=True)
class Entry:
    """One side of the match: a label, and how to make its bot for a game (from a seed), or the command of
    a gRPC SDK program that plays all its games through the local engine (:mod:`scheduler.connected_programs`)."""

    label: str
    make: Callable[[str], Bot] | None = None
    threaded: bool = False
    """Its bot may hang or take long (a program, an author's class): asked on a thread of its own."""
    program: tuple[str, ...] = ()
    """A gRPC program's command (then no ``make``): started once, connected to the local engine as ``label``."""

    def __post_init__(self) -> None:
        if (self.make is None) == (not self.program):
            raise ValueError(f"entry {self.label!r}: give it either a bot to make or a gRPC program to start")


@dataclass
class Conduct:
    """What the arena saw of one entry over the series."""

    moves: int = 0
    timeouts: int = 0
    illegal: int = 0
    forfeits: int = 0
    faults: int = 0
    """Answers it failed to give, each played for it as the engine's timeout play."""
    reasons: dict[str, int] = field(default_factory=dict)
    """Each reason a fault was given (the arena's words), and how often."""
    crashes: int = 0
    """Times its program ended mid-game (exited, was killed, closed its output) and had to be started again or
    left its seat to the engine: counted once each, however many turns it then missed."""
    crashed: dict[str, int] = field(default_factory=dict)
    """Why its program ended (the arena's words), and how often."""
    samples: dict[str, str] = field(default_factory=dict)
    """For a reason of a fault or a crash, what the bot itself said the first time (the answer it wrote, its
    last error lines), made printable (:func:`store.printable.line`): never its raw text."""

    def add_fault(self, reason: str, quoted: Sequence[str] = ()) -> None:
        self.faults += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        self._sample(reason, quoted)

    def add_crash(self, reason: str, quoted: Sequence[str] = ()) -> None:
        self.crashes += 1
        self.crashed[reason] = self.crashed.get(reason, 0) + 1
        self._sample(reason, quoted)

    def _sample(self, reason: str, quoted: Sequence[str]) -> None:
        said = printable.line(" | ".join(q for q in quoted if q), SAMPLE_CHARS)
        if said and reason not in self.samples:
            self.samples[reason] = said


@dataclass
class Series:
    """What a series of games gave: results per entry, its outcomes for the rating model, and conduct."""

    stats: SelfPlayStats
    conduct: list[Conduct]
    outcomes: list[Outcome] = field(default_factory=list)
    moves: int = 0

    def fit(self) -> Fit:
        """The entries' ratings with 95% intervals, fitted as a league's are."""
        return fit_ratings(self.outcomes, [b.name for b in self.stats.bots])


def too_few(named: int, seats: int, example: str = "BOT") -> str:
    """Why ``named`` bots cannot play a ``seats``-seat series ('' when they can): each seat takes a bot of its own
    (one bot in every seat plays nobody, and its results, all against itself, rate nothing); self-play is the
    same bot named once a seat (``example``: a bot to spell that with)."""
    if named >= seats:
        return ""
    twice = " ".join(f"--bot {example}" for _ in range(seats))
    return (
        f"a match needs {seats} bots for its {seats} seats, and {named} {'was' if named == 1 else 'were'} named: "
        f"add --bot options (to play a bot against itself, name it once a seat: {twice})"
    )


def play_series(
    rules: Rules,
    entries: Sequence[Entry],
    games: int,
    seed: str = "match",
    control: TimeControl | None = None,
    mirrored: bool = True,
    on_record: Callable[[GameRecord], None] | None = None,
    on_game: Callable[[int], None] | None = None,
) -> Series:
    """Play ``games`` games between ``entries`` (seated by :func:`scheduler.selfplay.seating`)."""
    if short := too_few(len(entries), rules.players, entries[0].label if entries else "BOT"):
        raise ValueError(short)
    if games < 1:
        raise ValueError(f"play at least one game, not {games}")
    if len(seed) > SEED_CHARS:
        raise ValueError(f"a seed is at most {SEED_CHARS} characters, not {len(seed)}")
    control = control or TimeControl.of_rules(rules)
    labels = labels_of([e.label for e in entries])
    series = Series(SelfPlayStats([BotStats(label) for label in labels]), [Conduct() for _ in entries])
    started = time.perf_counter()

    async def play_games(programs: ConnectedPrograms | None) -> None:
        for g in range(games):
            if programs is not None:
                await programs.ensure()
            seats, deal = seating(len(entries), rules.players, g)
            deal_seed = f"{seed}/{deal if mirrored else g}"
            table = (rules, entries, labels, series, control)
            driver, seated = await _play_one(table, g, seats, deal_seed, seed, programs)
            if on_record is not None:
                on_record(driver.record(seated))
            if on_game is not None:
                on_game(g)

    async def play_all() -> None:
        commands = {labels[e]: entry.program for e, entry in enumerate(entries) if entry.program}
        if not commands:
            await play_games(None)
            return
        async with ConnectedPrograms(commands) as programs:
            try:
                await play_games(programs)
                programs.settle()
            finally:
                for program in programs.programs:  # a crash of its, never a turn: the engine played those
                    said = [f"its last words: {words}"] if (words := program.last_words()) else []
                    for reason in program.faults:
                        series.conduct[labels.index(program.name)].add_crash(reason, said)

    _run(play_all)
    series.stats.seconds = time.perf_counter() - started
    return series


def _run(play: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``play`` to its end in an event loop of its own (on a thread of its own when the caller is in one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(play())
        return
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, play()).result()


async def _play_one(
    table: tuple[Rules, Sequence[Entry], list[str], Series, TimeControl],
    g: int,
    seats: list[int],
    deal_seed: str,
    seed: str,
    programs: ConnectedPrograms | None,
) -> tuple[MatchDriver, list[str]]:
    """Play game ``g`` and add it to ``series``; its driver and its seats' labels (for its record)."""
    rules, entries, labels, series, control = table
    game_id = f"{seed}/game-{g + 1}"
    seated = [labels[e] for e in seats]
    bots: list[Bot | None] = []
    for s, e in enumerate(seats):
        make = entries[e].make
        bots.append(make(f"{seed}/{g}/{s}") if make is not None else None)
    for s, bot in enumerate(bots):
        if bot is not None:
            bot.new_match(rules, s)
    driver = MatchDriver(rules, deal_seed, game_id, control)
    local = InProcessTransport(
        rules,
        [Seat(bot, entries[e].threaded) if bot is not None else None for bot, e in zip(bots, seats, strict=True)],
        observe=lambda: driver.observation,
    )
    remote = {s: seated[s] for s, bot in enumerate(bots) if bot is None}
    transport: InProcessTransport | Table = local
    if remote:
        assert programs is not None
        transport = Table(local, remote, programs.engine, game_started(rules, seated, game_id), control)
    try:
        await driver.play(transport)
    finally:
        local.close()
        if driver.over:
            for bot in bots:
                if bot is not None:
                    bot.end_match(result_of(driver.match))
            if remote:
                assert programs is not None
                await programs.engine.game_over(driver.match, game_id, list(remote.items()))
    tally(series.stats, rules, seats, driver.match)
    series.moves += len(driver.times)
    for s, e in enumerate(seats):
        c, seen, seat = series.conduct[e], driver.conduct[s], local.seats[s]
        c.moves += seen.moves
        c.timeouts += seen.timeouts
        c.illegal += seen.illegal
        c.forfeits += seen.forfeit
        if seat is not None:
            for reason in seat.faults:
                c.add_fault(reason, seat.quoted.get(reason, ()))
        if isinstance(bot := bots[s], ProgramBot):
            for why in bot.crashes:
                c.add_crash(why.reason, why.quoted)
    series.outcomes.append(outcome_of(game_id, deal_seed, seated, driver.match, luck=False))
    return driver, seated


class Table:
    """The driver's transport for a game with gRPC programs at it: a seat whose bot is in this process is
    asked by :class:`scheduler.in_process.InProcessTransport`, one whose bot is a program connected to the local
    engine is asked through the engine's gateway (the turn on the wire, its clock, its grace period)."""

    def __init__(
        self,
        local: InProcessTransport,
        remote: dict[int, str],
        engine: LocalEngine,
        game: apb.GameStarted,
        control: TimeControl,
    ) -> None:
        self.local, self.remote, self.engine, self.control = local, remote, engine, control
        self.games: dict[int, apb.GameStarted] = {}
        for seat in remote:
            self.games[seat] = apb.GameStarted()
            self.games[seat].CopyFrom(game)
            self.games[seat].seat = seat

    async def ask(self, seat: int, turn: apb.Turn) -> Response:
        bot = self.remote.get(seat)
        if bot is None:
            return await self.local.ask(seat, turn)
        return await self.engine.ask(bot, self.games[seat], turn, self.control)
