"""gRPC SDK bots in local games: programs started by ``tablanette match`` that connect to its own engine.

A program written with any SDK (Node, C++, Java, Python, a client generated from
the ``.proto``) is started as the arena's hosts start a hosted gRPC bot: with its
token in ``TABLANETTE_TOKEN``, the engine's address in ``TABLANETTE_ADDRESS`` and
its name in ``TABLANETTE_BOT_NAME``. The engine is :class:`engine_service.local_engine.LocalEngine`
in this process (no Redis), and the program is waited for until its session is
open. It plays every game of the series its entry has a seat in.

Everything it says is its own business: its output goes to a log file (named at
the end when it fails), and only a printable last line of it is ever quoted. It
runs in a process group of its own, stopped whole at the end, and gets SIGTERM if
this command dies. A program that exits is started again before the next game (its
turns meanwhile are the engine's: a bot gone past its grace period), its old token
revoked, each restart a fault of its entry; after :data:`MAX_RESTARTS` the series
stops with why.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from programs.child import stop_with_parent
from store import printable

if TYPE_CHECKING:
    from engine_service.local_engine import LocalEngine

CONNECT_TIMEOUT_S = 60.0
"""How long a program may take from its start to its session (a JVM or a first npm import takes seconds)."""
TAIL_BYTES = 8192
"""How much of the end of a program's log is read for its last words."""
MAX_RESTARTS = 5
"""Restarts of one program in a series before the series stops."""


class ProgramError(Exception):
    """A gRPC program that cannot play: it would not start, exited before it connected, or kept dying."""


@dataclass
class Program:
    """One entry's program: its command, the name it logs in as, its process and its log."""

    name: str
    argv: Sequence[str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    sessions: set[str] = field(default_factory=set)
    """Every session it has opened: a new start waits for a new one."""
    restarts: int = 0
    faults: list[str] = field(default_factory=list)
    """Why it had to be started again (the arena's words: its exit status), one a restart."""

    def last_words(self) -> str:
        """The last non-empty line it wrote, printable and short (never its raw bytes; only the log's tail is
        read, however much it wrote)."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(max(log.seek(0, os.SEEK_END) - TAIL_BYTES, 0))
                lines = log.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        said = [line.strip() for line in lines if line.strip()]
        return printable.line(said[-1], 200) if said else ""


class ConnectedPrograms:
    """The programs of a series and the local engine they connect to (``async with``)."""

    def __init__(self, programs: Mapping[str, Sequence[str]], cwd: Path | None = None) -> None:
        """``programs``: each entry's label -> its command (argv)."""
        from engine_service.local_engine import LocalEngine  # gRPC's server: only once a program is named

        self.engine: LocalEngine = LocalEngine()
        self.logs = Path(tempfile.mkdtemp(prefix="tablanette-grpc-"))
        self.cwd = cwd
        self.programs = [Program(name, argv, self.logs / f"{_file_name(name)}.log") for name, argv in programs.items()]

    async def __aenter__(self) -> ConnectedPrograms:
        try:
            await self.engine.start()
        except BaseException:
            shutil.rmtree(self.logs, ignore_errors=True)
            await self.engine.stop()
            raise
        try:
            for program in self.programs:
                await self._start(program)
        except BaseException:
            await self.close()  # its output is kept: the error names it
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
        if not any(p.faults for p in self.programs):  # nothing went wrong: nothing of theirs to read later
            shutil.rmtree(self.logs, ignore_errors=True)

    def settle(self) -> None:
        """After the last game: a program that has exited meanwhile is a fault of its entry too."""
        for program in self.programs:
            code = program.process.poll() if program.process is not None else None
            if code is not None:
                program.faults.append(f"its program {_ended(code)}")

    async def ensure(self) -> None:
        """Before a game: start again every program that has exited (a fault of its entry)."""
        for program in self.programs:
            code = program.process.poll() if program.process is not None else None
            if code is None:  # running (if it is reconnecting, the engine's grace period covers it)
                continue
            if program.restarts >= MAX_RESTARTS:
                raise ProgramError(
                    f"bot {program.name}: its program stopped {program.restarts + 1} times; the last time "
                    f"{_ended(code)}{_quoted(program)} (its output: {program.log_path})"
                )
            program.restarts += 1
            program.faults.append(f"its program {_ended(code)}; it was started again")
            _stop(program)
            self.engine.revoke(program.name)  # whatever it left behind holds no session and no token any more
            await self._start(program)

    async def _start(self, program: Program) -> None:
        env = {
            **os.environ,
            "TABLANETTE_TOKEN": self.engine.issue(program.name),
            "TABLANETTE_ADDRESS": self.engine.address,
            "TABLANETTE_BOT_NAME": program.name,
        }
        with program.log_path.open("ab") as out:
            try:
                program.process = subprocess.Popen(
                    stop_with_parent(program.argv),  # gone with this command, however it ends
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,  # its own process group: a wrapper's children are stopped with it
                )
            except OSError as exc:
                raise ProgramError(f"bot {program.name}: cannot start {program.argv[0]!r}: {exc.strerror}") from None
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        while (entry := self.engine.connected(program.name)) is None or entry.session_id in program.sessions:
            code = program.process.poll()
            if code is not None:
                raise ProgramError(
                    f"bot {program.name}: its program {_ended(code)} before it connected{_quoted(program)} "
                    f"(its output: {program.log_path})"
                )
            if time.monotonic() > deadline:
                raise ProgramError(
                    f"bot {program.name}: its program did not connect within {CONNECT_TIMEOUT_S:g} s (it is given "
                    f"TABLANETTE_ADDRESS, TABLANETTE_TOKEN and TABLANETTE_BOT_NAME){_quoted(program)} "
                    f"(its output: {program.log_path})"
                )
            await asyncio.sleep(0.05)
        program.sessions.add(entry.session_id)

    async def close(self) -> None:
        for program in self.programs:
            _stop(program)
        await self.engine.stop()


def _stop(program: Program) -> None:
    """Stop the program and everything it started (its process group): SIGTERM, then SIGKILL after 3 s."""
    process = program.process
    if process is None:
        return
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(3)
    _signal_group(process.pid, signal.SIGKILL)  # what is left of the group (a wrapper's children)
    process.wait()


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _ended(code: int | None) -> str:
    if code is None:
        return "is still running"
    return f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"


def _quoted(program: Program) -> str:
    said = program.last_words()
    return f"; its last words: {said!r}" if said else ""


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:64] or "bot"
