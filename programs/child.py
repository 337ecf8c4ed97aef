"""A child program spoken to in lines: started so that it dies with us, read without ever blocking us.

:class:`ChildProgram` runs a command with its standard input, output and error
as pipes. Lines it writes on standard output are read by a thread of their own
into a queue, so :meth:`ChildProgram.read_line` waits at most its timeout; a
line longer than ``max_line``, or more than ``max_pending`` lines nobody has
read, end the program (a flood must not grow our memory). Standard error is kept
as its last lines, for a report when it fails.

Its standard input is written without ever blocking us either: the pipe is
non-blocking and :meth:`ChildProgram.write_line` has a deadline. A program that
stops reading fills the pipe (64 KiB, or less: a program may shrink its own);
a line that cannot be written in time ends it (killed, "it stopped reading its
input"). :meth:`ChildProgram.stop` never waits on a pipe: a program with a
write pending is killed before its input is closed, and every wait is bounded.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

STOP_WITH_PARENT = (
    "import ctypes, os, sys\n"
    "parent = int(sys.argv[1])\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, 15)  # PR_SET_PDEATHSIG: SIGTERM when the parent dies\n"
    "if os.getppid() != parent: sys.exit(0)  # it died already\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)
"""A child first runs this (then execs the real program) so that it stops when its parent dies, however it
dies. Not a ``preexec_fn``: Python code between fork and exec can deadlock a parent with threads (gRPC's)."""


def stop_with_parent(argv: Sequence[str]) -> list[str]:
    """``argv`` wrapped so that the program gets SIGTERM when this process dies (Linux; elsewhere unchanged)."""
    if sys.platform != "linux":
        return list(argv)
    return [sys.executable, "-c", STOP_WITH_PARENT, str(os.getpid()), *argv]


class Launcher(Protocol):
    """How a program is started: a sandbox (:class:`programs.sandbox.Sandbox`) or :class:`Plain`."""

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv``; it must make the program die with this process."""
        ...

    def explain(self, status: int | None) -> str | None:
        """Why a run that ended with ``status`` ended, beyond the status itself (None: nothing to add)."""
        ...

    def close(self) -> None:
        """The run is over: release what it held."""
        ...


class Plain:
    """No sandbox: the program as it is, stopped when this process dies."""

    def __init__(self, cwd: str | Path | None = None) -> None:
        self.cwd = cwd

    def wrap(self, argv: Sequence[str]) -> list[str]:
        check_runnable(argv[0], self.cwd)
        return stop_with_parent(argv)

    def explain(self, status: int | None) -> str | None:
        return None

    def close(self) -> None:
        pass


class ChildError(RuntimeError):
    """The program cannot answer: it exited, closed its output, flooded it, or was never started.

    Its text (``str``) is for a log and may quote the program (its last error lines); ``reason`` is the
    arena's own words only (how it ended, the sandbox's reason): what may be shown to anyone.
    """

    def __init__(
        self, message: str, reason: str | None = None, quoted: Sequence[str] = (), ended: bool = False
    ) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason
        """Why, in the arena's own words (the whole message when it quotes nothing of the program's)."""
        self.quoted = list(quoted)
        """The program's own words the error is about (its last error lines), raw: made printable before shown."""
        self.ended = ended
        """The program has ended (exited, was killed, closed its output): not a refusal of one line."""


def check_runnable(program: str, cwd: str | Path | None = None) -> None:
    """A clear error now for a program that is not there (the wrapper would only exit with status 1)."""
    if "/" in program:
        path = Path(cwd or ".") / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ChildError(f"cannot start {program}: no such executable file")
    elif shutil.which(program) is None:
        raise ChildError(f"cannot start {program}: not found on PATH")


_EOF = object()
WRITE_TIMEOUT_S = 1.0
"""The default deadline of a line written to a program (a program that reads its input takes it at once)."""
WAKE_S = 0.05
"""How often a write waiting for room in the pipe looks whether the program is being stopped."""
EXIT_WAIT_S = 5.0
"""The most :meth:`ChildProgram.stop` waits for a killed program's exit status (it never waits forever)."""


class ChildProgram:
    """One run of a command; see the module's doc."""

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        max_line: int = 1 << 16,
        stderr_lines: int = 40,
        launcher: Launcher | None = None,
        max_pending: int = 64,
    ) -> None:
        if not argv:
            raise ValueError("no command given")
        self.argv = list(argv)
        self.launcher = launcher or Plain(cwd)
        self.max_line = max_line
        self.max_pending = max_pending
        """Lines written and not yet read past which the program is flooding (and is killed)."""
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._lines: queue.Queue[object] = queue.Queue()
        self._why_ended = ""
        self._writing = threading.Lock()
        """Held while a line is written (at most its deadline); the input is closed only under it."""
        self._closing = threading.Event()
        """Set by :meth:`stop`: a write waiting for room gives up at once."""
        self._waiting = False
        """A line is waiting for room in its input: the program has not read what it was given."""
        self._released = threading.Lock()
        """Taken once, by the first stop to finish: its launcher is released once."""
        reading, self._input = os.pipe()  # ours, not Popen's buffered writer: a write never blocks us
        try:
            try:
                self.proc = subprocess.Popen(
                    self.launcher.wrap(self.argv),
                    stdin=reading,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=cwd,
                    env=dict(env) if env is not None else None,
                )
            finally:
                os.close(reading)
        except BaseException as exc:  # whatever stopped the start (a launcher's own error too): nothing is left
            os.close(self._input)
            self.launcher.close()
            if isinstance(exc, OSError):
                raise ChildError(f"cannot start {self.argv[0]}: {exc}") from None
            raise
        os.set_blocking(self._input, False)
        threading.Thread(target=self._read_stdout, daemon=True, name=f"child-{self.proc.pid}-out").start()
        threading.Thread(target=self._read_stderr, daemon=True, name=f"child-{self.proc.pid}-err").start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            while line := self.proc.stdout.readline(self.max_line + 1):
                if len(line) > self.max_line and not line.endswith(b"\n"):
                    self._why_ended = f"it wrote a line longer than {self.max_line} bytes"
                elif self._lines.qsize() >= self.max_pending:
                    self._why_ended = f"it wrote more than {self.max_pending} lines that nobody asked for"
                else:
                    self._lines.put(line.decode("utf-8", errors="replace").strip())
                    continue
                self.proc.kill()  # a flood: it must not grow our memory
                break
        except (OSError, ValueError):
            pass
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        try:
            while line := self.proc.stderr.readline(4096):  # bounded: a line without end is read in pieces
                self.stderr_tail.append(line[:500].decode("utf-8", errors="replace").rstrip())
        except (OSError, ValueError):
            pass

    def write_line(self, text: str, timeout: float = WRITE_TIMEOUT_S) -> None:
        """Send one line (``text`` must hold no newline) within ``timeout`` seconds, or raise :class:`ChildError`.

        A line the program has not taken in time (its input pipe stays full: it stopped reading) ends
        it: it is killed, and it "stopped reading its input". The wait is bounded however it behaves.
        """
        ends = time.monotonic() + max(timeout, 0.0)
        # A write takes microseconds unless it waits for room: a line is never queued behind one that waits.
        if not self._writing.acquire(timeout=min(max(timeout, 0.0), WAKE_S)):
            why = "an earlier line to it is still waiting: it is not reading its input"
            raise ChildError(f"{self.argv[0]}: {why}", why)
        try:
            outcome = self._write(text.encode() + b"\n", ends)
        finally:
            self._writing.release()
        if outcome == "late" and not self._closing.is_set():
            self._kill(f"it stopped reading its input (a line to it found no room for {timeout:.2f} s): it was killed")
        if outcome == "closed" and self.alive():
            raise ChildError(
                f"{self.argv[0]}: its input is closed (it is being stopped)",
                "its input is closed (it is being stopped)",
            )
        if outcome != "written":
            raise self.failure()

    def _write(self, data: bytes, ends: float) -> str:
        """Write ``data`` to its input by ``ends`` (monotonic), under ``_writing``: ``written``, ``late``,
        ``closed`` (its input is closed, or it is being stopped) or ``broken`` (it has gone)."""
        left = memoryview(data)
        while left:
            if self._input < 0:
                return "closed"
            try:
                left = left[os.write(self._input, left) :]
                continue
            except BlockingIOError:  # the pipe is full: it has not read what it was given
                pass
            except OSError:  # a broken pipe: it has gone
                return "broken"
            wait = ends - time.monotonic()
            if self._closing.is_set():
                return "closed"
            if wait <= 0:
                return "late"
            self._waiting = True
            try:
                select.select([], [self._input], [], min(wait, WAKE_S))
            finally:
                self._waiting = False
        return "written"

    def _kill(self, why: str = "") -> None:
        """End it now, saying why (the first reason given is the one kept)."""
        if why and not self._why_ended and self.alive():
            self._why_ended = why
        with contextlib.suppress(OSError):
            self.proc.kill()

    def _close_input(self) -> None:
        """Close its input (it reads an end of file); never while a line is being written."""
        with self._writing:
            if self._input >= 0:
                os.close(self._input)
                self._input = -1

    def read_line(self, timeout: float) -> str | None:
        """The next line it writes (stripped), or None if none comes within ``timeout`` seconds."""
        try:
            line = self._lines.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None
        if line is _EOF:
            self._lines.put(_EOF)  # every later read says so too
            raise self.failure()
        assert isinstance(line, str)
        return line

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ended(self) -> str:
        """Why it cannot answer, with its exit status and last error lines (a log's line)."""
        return str(self.failure())

    def failure(self) -> ChildError:
        """Why it cannot answer, as an error: its text quotes its last error lines, its ``reason`` does not
        (its exit status, the sandbox's reason, or why the arena ended it)."""
        try:
            status = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            status = None
        if self._why_ended:
            why = self._why_ended
        elif status is None:
            why = "it closed its output"
        else:
            why = exit_reason(status)
        if more := self.launcher.explain(status):
            why += f" ({more})"
        tail = " | ".join(self.stderr_tail)
        said = f"its last error output: {tail}" if tail else ""
        return ChildError(f"{self.argv[0]}: {why}" + (f"; {said}" if said else ""), why, [said] if said else [], True)

    def stop(self, grace: float = 1.0) -> None:
        """Close its input (the polite way to say: done), kill it if it has not exited after ``grace`` s,
        and release what its launcher held (a sandbox's cgroup). Never blocks on a pipe: a program that
        a line is still waiting for (it does not read) is killed first, then its input is closed.
        Safe to call from any thread, and again."""
        self.begin_stop()
        self.finish_stop(time.monotonic() + grace)

    def begin_stop(self) -> None:
        """The first half of :meth:`stop`: its input closed, a stuck program killed (several programs
        can be stopped at once: begin each, then finish each, with one grace period for all)."""
        self._closing.set()
        if self._waiting:  # a line is waiting for room: it is not reading (a write in progress takes microseconds)
            self._kill("it was stopped while it was not reading its input")
        self._close_input()  # a waiting write gives up within WAKE_S once _closing is set

    def finish_stop(self, deadline: float) -> None:
        """The second half of :meth:`stop`: killed if it has not exited by ``deadline`` (monotonic), then
        its launcher released."""
        try:
            self.proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            self._kill()
            with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL: only a kernel stall delays it
                self.proc.wait(timeout=EXIT_WAIT_S)
        if self._released.acquire(blocking=False):
            self.launcher.close()


def exit_reason(status: int) -> str:
    """How a process ended, from its exit status as :mod:`subprocess` gives it (negative: a signal)."""
    return f"it exited with status {status}" if status >= 0 else f"it was killed by signal {-status}"


class Running:
    """The programs started for a bot's games (one per game), stopped together when the bot stops: the
    games cut short by a stop never get their ``end_match``, so nothing else would stop them."""

    def __init__(self) -> None:
        self._programs: list[ChildProgram] = []
        self._lock = threading.Lock()
        self._stopped = False

    def add(self, program: ChildProgram) -> None:
        """Keep ``program`` to stop with the others; one started after :meth:`stop_all` is stopped at once
        (a turn that started it as the bot stopped must not leave it behind)."""
        with self._lock:
            if not self._stopped:
                self._programs = [p for p in self._programs if p.alive()] + [program]
                return
        program.stop(grace=0)

    def last(self) -> ChildProgram | None:
        """The program started last (its error output is the bot's latest)."""
        with self._lock:
            return self._programs[-1] if self._programs else None

    def stop_all(self, grace: float = 0.2) -> None:
        """Stop every program at once: their inputs closed, one grace period for all, then killed."""
        with self._lock:
            programs, self._programs, self._stopped = self._programs, [], True
        for program in programs:
            program.begin_stop()
        deadline = time.monotonic() + grace
        for program in programs:
            program.finish_stop(deadline)
