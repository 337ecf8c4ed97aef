"""A child program spoken to in lines: started so that it dies with us, read without ever blocking us.

:class:`ChildProgram` runs a command with its standard input, output and error
as pipes. Lines it writes on standard output are read by a thread of their own
into a queue, so :meth:`ChildProgram.read_line` waits at most its timeout; a
line longer than ``max_line``, or more than ``max_pending`` lines nobody has
read, end the program (a flood must not grow our memory). Standard error is kept
as its last lines, for a report when it fails.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import shutil
import subprocess
import sys
import threading
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
    """How a program is started: a sandbox (:class:`bots.sandbox.Sandbox`) or :class:`Plain`."""

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
    """The program cannot answer: it exited, closed its output, flooded it, or was never started."""


def check_runnable(program: str, cwd: str | Path | None = None) -> None:
    """A clear error now for a program that is not there (the wrapper would only exit with status 1)."""
    if "/" in program:
        path = Path(cwd or ".") / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ChildError(f"cannot start {program}: no such executable file")
    elif shutil.which(program) is None:
        raise ChildError(f"cannot start {program}: not found on PATH")


_EOF = object()


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
        try:
            self.proc = subprocess.Popen(
                self.launcher.wrap(self.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env) if env is not None else None,
            )
        except OSError as exc:
            self.launcher.close()
            raise ChildError(f"cannot start {self.argv[0]}: {exc}") from None
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

    def write_line(self, text: str) -> None:
        """Send one line (``text`` must hold no newline)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(text.encode() + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):  # a broken pipe: it has gone
            raise ChildError(self.ended()) from None

    def read_line(self, timeout: float) -> str | None:
        """The next line it writes (stripped), or None if none comes within ``timeout`` seconds."""
        try:
            line = self._lines.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None
        if line is _EOF:
            self._lines.put(_EOF)  # every later read says so too
            raise ChildError(self.ended())
        assert isinstance(line, str)
        return line

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ended(self) -> str:
        """Why it cannot answer, with its exit status and last error lines."""
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
        return f"{self.argv[0]}: {why}" + (f"; its last error output: {tail}" if tail else "")

    def stop(self, grace: float = 1.0) -> None:
        """Close its input (the polite way to say: done), kill it if it has not exited after ``grace`` s,
        and release what its launcher held (a sandbox's cgroup)."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
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

    def add(self, program: ChildProgram) -> None:
        with self._lock:
            self._programs = [p for p in self._programs if p.alive()] + [program]

    def last(self) -> ChildProgram | None:
        """The program started last (its error output is the bot's latest)."""
        with self._lock:
            return self._programs[-1] if self._programs else None

    def stop_all(self, grace: float = 0.2) -> None:
        with self._lock:
            for program in self._programs:
                program.stop(grace=grace)
