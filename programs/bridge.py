"""Bots in any language: the JSON-lines bridge between a program's stdin/stdout and the arena.

``tablanette bot bridge --as NAME -- ./mybot ARGS`` connects to the arena as bot
``NAME`` with the Python SDK and, for each game, runs ``./mybot ARGS`` and speaks
the JSON-lines protocol with it (docs/jsonlines.md): a ``start`` line, one
``turn`` line per turn of its seat, each answered by one line naming a legal
play, and an ``end`` line, after which its input is closed. A program needs no
gRPC library, only lines of JSON: any language will do.

What the program gets wrong costs it a move, never the connection: an answer
that is not JSON, names no legal play or comes too late is logged with the
program's own last error lines, and the SDK answers the engine's timeout play
(a late answer is then skipped, so the next turn's answer is not taken for
it). A program that exits mid-game is started again for its next turn (turns
carry the whole observation, so it can go on), at most ``RESTARTS`` times a game.
A program that stops reading its input costs it the same: a line to it that
cannot be written by the turn's deadline (its input pipe is full) ends it
(:meth:`programs.child.ChildProgram.write_line`). Whatever it does, the program is
gone when its game ends: :meth:`ProgramBot.end_match` never waits for a turn.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bots.base import Bot, BotFault
from bots.turns import Clock
from engine_service.rules import Observation, Play, Rules
from engine_service.rules.cards import format_cards

from .child import ChildError, ChildProgram, Launcher, Running, check_runnable
from .sandbox import Limits, Sandbox, unavailable

log = logging.getLogger("tablanette.bridge")
PROTOCOL = 1
RESTARTS = 2
"""Times a game's program may be started again after it exited mid-game."""
LATE_S = 0.25
"""Seconds past the turn's deadline the bridge still waits (the arena has timed the turn out by then)."""
END_S = 1.0
"""How long the ``end`` line may wait for room, and the program to exit after it, before it is killed."""


class BridgeError(BotFault):
    """The program's answer cannot be played (the SDK then answers the timeout play).

    Its text (``str``) is for a log and may quote the program. Kept apart: ``reason``, what went wrong in
    the arena's own words only (what anyone may be shown), and ``quoted``, the program's own words the
    error is about (the answer it wrote), for its owner; its last error lines are the caller's to keep
    (:attr:`programs.child.ChildProgram.stderr_tail`, or a crash's :attr:`ProgramBot.crashes`).
    """


def _cards(mask: int) -> list[str]:
    return format_cards(mask).split() if mask else []


def turn_message(obs: Observation, time_left_ms: int, clock: str = "wall", time_bank_ms: int = 0) -> dict[str, Any]:
    """The ``turn`` line for ``obs``: the seat's whole view, its legal plays, and its time (on ``clock``;
    ``time_bank_ms`` of it is the match's time bank)."""
    return {
        "type": "turn",
        "seat": obs.seat,
        "team": obs.team,
        "turn": obs.turn,
        "deal_index": obs.deal_index,
        "dealer": obs.dealer,
        "round": obs.round,
        "rounds_left": obs.rounds_left,
        "hand": _cards(obs.hand),
        "table": _cards(obs.table),
        "piles": [_cards(p) for p in obs.piles],
        "hand_counts": list(obs.hand_counts),
        "plays": [{"seat": p.seat, "play": str(p.play), "bonus": p.bonus, "auto": p.auto} for p in obs.plays],
        "deal_bonus": list(obs.deal_bonus),
        "scores": list(obs.scores),
        "unseen": _cards(obs.unseen),
        "stock_count": obs.stock_count,
        "legal_plays": [str(p) for p in obs.legal_plays],
        "time_left_ms": time_left_ms,
        "time_bank_ms": min(time_bank_ms, time_left_ms),
        "clock": clock,
    }


def parse_answer(line: str, legal: Sequence[Play]) -> Play:
    """The play an answer line names: ``{"play": INDEX}`` into the legal plays, or ``{"play": "9C:AH,8H"}``."""
    said = f"its answer: {line[:200]!r}"

    def wrong(message: str, reason: str) -> BridgeError:
        """The error for an answer that cannot be played: the answer is quoted, the reason is not."""
        return BridgeError(message, reason, [said])

    try:
        answer = json.loads(line)
    except ValueError:
        raise wrong(f"the answer is not JSON: {line[:200]!r}", "the answer was not JSON") from None
    if not isinstance(answer, dict) or "play" not in answer:
        raise wrong(f'the answer must be an object with a "play": {line[:200]!r}', 'the answer had no "play"')
    chosen = answer["play"]
    if isinstance(chosen, int) and not isinstance(chosen, bool):
        if not 0 <= chosen < len(legal):
            raise wrong(
                f"play index {chosen} is out of range: there are {len(legal)} legal plays",
                f"its play index was out of range: there are {len(legal)} legal plays",
            )
        return legal[chosen]
    if isinstance(chosen, str):
        try:
            play = Play.parse(chosen)
        except ValueError as exc:
            raise wrong(f"cannot read the play {chosen!r}: {exc}", "its play could not be read") from None
        if play not in legal:
            raise wrong(
                f"{play} is not a legal play here; legal: {', '.join(map(str, legal))}",
                "it named a play that is not legal here",
            )
        return play
    raise wrong(
        f'"play" must be an index or a play such as "9C:AH,8H", not {chosen!r}',
        '"play" was neither an index nor a play such as "9C:AH,8H"',
    )


class ProgramBot(Bot):
    """A bot whose every decision comes from a program over JSON lines; one run of it per game."""

    def __init__(
        self,
        argv: Sequence[str],
        name: str = "bridged",
        version: str = "",
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        on_program: Callable[[ChildProgram], None] | None = None,
        launcher: Callable[[], Launcher] | None = None,
    ) -> None:
        self.argv, self.cwd, self.env = list(argv), cwd, env
        self.launcher = launcher
        """Makes each run's launcher (a fresh sandbox, say); None: the program runs as it is."""
        self.name, self.version = name, version
        self.on_program = on_program
        """Told of every program started (the bridge stops them all when it stops)."""
        self.program: ChildProgram | None = None
        self.rules: Rules | None = None
        self.seat = 0
        self.starts = 0
        self.owed = 0
        """Turns that timed out whose answers are still to come: the next lines are theirs, and are skipped."""
        self.over = False
        """The game has ended: no program is started for it any more."""
        self.crashes: list[ChildError] = []
        """Why each run of its program that ended before the game did ended (its ``quoted``: its last error
        lines), found on the turn it ended or on the next one; each run once."""
        self._ended: list[ChildProgram] = []
        self._lock = threading.Lock()
        """One turn at a time (:meth:`end_match` never takes it: a turn may be waiting on its program)."""

    def new_match(self, rules: Rules, seat: int) -> None:
        self.rules, self.seat = rules, seat  # the program starts with the first turn, on a turn thread
        self.over = False

    def _running(self, ends: float) -> ChildProgram:
        """The game's program, started (and sent its ``start`` line by ``ends``, monotonic) if it is not running."""
        if self.over:
            raise BridgeError("the game is over")
        program = self.program
        if program is not None and program.alive():
            return program
        if program is not None:  # it has ended: release its run (a sandbox's cgroup) now
            why = program.failure()
            self._crashed(program, why)
            program.stop(grace=0)
            self.program = None
            if self.starts > RESTARTS:
                again = f"it was started {self.starts} times this game and is not started again"
                raise BridgeError(f"{why}; {again}", f"{why.reason}; {again}")
            log.warning("%s: %s; starting it again", self.name, why)
        elif self.starts > RESTARTS:
            again = f"it was started {self.starts} times this game; it is not started again"
            raise BridgeError(f"{self.argv[0]}: {again}", again)
        self.starts += 1
        self.owed = 0
        launcher = self.launcher() if self.launcher is not None else None
        self.program = program = ChildProgram(self.argv, self.cwd, self.env, launcher=launcher)
        if self.on_program is not None:
            self.on_program(program)
        if self.over:  # the game ended while it started (end_match saw no program, or this one: stopped twice)
            program.stop(grace=0)
            raise BridgeError("the game is over")
        rules = self.rules or Rules.preset()
        start = {"type": "start", "protocol": PROTOCOL, "seat": self.seat, "rules": rules.to_dict()}
        program.write_line(json.dumps(start), timeout=ends - time.monotonic())
        return program

    def choose(self, observation: Observation, clock: Clock | None = None) -> Play:
        with self._lock:
            # On the CPU clock the program's CPU time is metered by its host, not here: its time left is
            # the whole budget, and the bridge waits for its answer until the turn's wall-clock cap.
            remaining = clock.wall_remaining() if clock is not None else 10.0
            left = (clock.budget if clock.cpu else remaining) if clock is not None else remaining
            ends = time.monotonic() + remaining + LATE_S  # for every write and read of the turn
            try:
                program = self._running(ends)
                kind = "cpu" if clock is not None and clock.cpu else "wall"
                bank_ms = int(clock.bank * 1000) if clock is not None else 0
                turn = json.dumps(turn_message(observation, int(left * 1000), kind, bank_ms))
                program.write_line(turn, timeout=ends - time.monotonic())  # not taken in time: it is not reading
                while True:
                    line = program.read_line(ends - time.monotonic())
                    if line is None:
                        self.owed += 1
                        late = f"it gave no answer within the turn's {remaining:.2f} s"
                        raise BridgeError(f"{self.argv[0]}: {late}", late)
                    if self.owed:  # the late answer to an earlier turn
                        self.owed -= 1
                        continue
                    if line:
                        return parse_answer(line, observation.legal_plays)
            except ChildError as exc:
                if exc.ended and self.program is not None:
                    self._crashed(self.program, exc)
                raise BridgeError(str(exc), exc.reason) from None  # its last error lines: the crash's, kept above

    def _crashed(self, program: ChildProgram, why: ChildError) -> None:
        """Keep why ``program`` ended mid-game, once a run (its turn and the next one may both find it ended)."""
        if not any(p is program for p in self._ended):
            self._ended.append(program)
            self.crashes.append(why)

    def end_match(self, result: Mapping[str, Any]) -> None:
        """Tell the program the result, close its input, and let it go (killed if it lingers, or if it
        does not take the ``end`` line within ``END_S``). Never waits for a turn still going on: the
        program is gone when its game ends, whatever it does."""
        self.over = True
        program, self.program = self.program, None
        if program is None:
            return
        with contextlib.suppress(ChildError):  # it has gone already, or it does not read
            program.write_line(json.dumps({"type": "end", **result}), timeout=END_S)
        program.stop(grace=END_S)


def run_bridge(
    argv: Sequence[str],
    name: str,
    address: str,
    token: str | None,
    max_games: int = 4,
    ca: str | None = None,
    version: str = "",
    sandbox: Limits | None = None,
    folder: str = ".",
) -> int:
    """Connect as ``name`` and play every game through a run of ``argv``, until SIGTERM or Ctrl-C.

    With ``sandbox``, each run is sandboxed with those limits (:mod:`programs.sandbox`): ``folder`` is
    then the program's folder, seen read-only as ``/bot`` (its working directory), and ``argv`` is
    read from inside the sandbox (``python3 bot.py``, ``./mybot``).
    """
    import sys

    from bots.client_command import NO_TOKEN, run_until_stopped  # the gRPC client: only this command needs it
    from bots.sdk import BotClient
    from store import printable

    if not token:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    if not argv:
        print("error: give the program to run after `--`, e.g. `-- ./mybot`", file=sys.stderr)
        return 2
    if sandbox is not None:
        if why := unavailable():
            print(f"error: cannot sandbox here: {why}", file=sys.stderr)
            return 2
        if not Path(folder).is_dir():
            print(f"error: the program's folder {folder} is not a folder", file=sys.stderr)
            return 2
    else:
        try:
            check_runnable(argv[0])
        except ChildError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    printable.log_printably(logging.INFO)
    running = Running()

    def sandboxed() -> Launcher:
        assert sandbox is not None
        return Sandbox(folder, sandbox, name)

    def new_player() -> Bot:
        return ProgramBot(argv, name, version, on_program=running.add, launcher=sandboxed if sandbox else None)

    tls = Path(ca).read_bytes() if ca else None
    client = BotClient(new_player, address, token, name=name, max_games=max_games, tls_ca=tls)
    try:
        return run_until_stopped(client, f"bridged: {' '.join(argv)}")
    finally:
        running.stop_all()
