"""How a host runs a bot: an SDK client on a thread of its own, or a sandboxed program of the bot's own.

- :class:`ClientRunner`: an SDK client in the host's process: the reference bots,
  and JSON-lines versions, whose program runs sandboxed once a game
  (:class:`HostedProgram`, through the bridge of :mod:`programs.bridge`);
- :class:`ServiceRunner`: a gRPC version, a long-running program of its own in
  one sandbox, reaching the arena through a relayed socket (:mod:`hosting.relay`),
  with the SDKs lent read-only (:mod:`hosting.sdk`).

Either way, what a program gets wrong becomes evidence on its version, in two
parts kept apart: the reason, in the arena's own words only (its exit status, the
sandbox's reason, "the answer was not JSON"), which anyone may read; and the
program's own words (its last lines of output, the answer it wrote), which only its
owner reads unless the owner shows them to everyone (:func:`web.queries.hosted_version`).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from bots.reconnect import BotRejected
from bots.sdk import BotClient
from bots.turns import Clock
from engine_service.rules import Observation, Play
from programs.bridge import BridgeError, ProgramBot
from programs.child import ChildProgram, Launcher, exit_reason
from programs.sandbox import NOBODY, Limits, Sandbox

from .relay import Relay

log = logging.getLogger("tablanette.host")
Evidence = Callable[[str, list[str]], None]
"""Keeps a fault on its version: its reason (the arena's own words, never the program's) and the
program's own words (its last lines, and the answer it wrote if that was the fault)."""
TAIL_LINES = 40
WITH_TOKEN = 'export TABLANETTE_TOKEN="$(cat /arena/token)" && exec "$@"'
"""The token reaches the program from a file only it can read, never a command line (visible in ``ps``)."""


class Runner(Protocol):
    """A version (or reference bot) connected to the arena by this host."""

    cpu: Callable[[], float] | None
    """The CPU seconds its sandboxes have used so far (None: it runs in no sandbox, e.g. a reference bot)."""

    def stop(self) -> None: ...
    def alive(self) -> bool: ...
    @property
    def faults(self) -> int:
        """Answers its program failed to give so far."""
        ...

    def output(self) -> list[str]:
        """The last lines of its program's own output (empty for a bot with no program)."""
        ...


class ClientRunner:
    """A bot played by an SDK client on a thread of this process (reference bots, JSON-lines versions)."""

    def __init__(
        self,
        client: BotClient,
        tail: Callable[[], list[str]] = list,
        on_stop: Callable[[], None] = lambda: None,
        cpu: Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self.tail = tail
        self.cpu = cpu
        self.on_stop = on_stop
        """Stops what the bot started (a JSON-lines version's programs of games still going on)."""
        self.error = ""
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"host-{client.name}")
        self.thread.start()

    def _run(self) -> None:
        try:
            self.client.run_forever()
        except BotRejected as exc:
            self.error = str(exc)
            log.error("%s: the arena refused it: %s", self.client.name, exc)

    def stop(self) -> None:
        self.client.stop()
        self.on_stop()

    def alive(self) -> bool:
        return self.thread.is_alive()

    @property
    def faults(self) -> int:
        return self.client.choose_errors

    def output(self) -> list[str]:
        return self.tail()


class HostedProgram(ProgramBot):
    """A JSON-lines version's program for one game; its first failure of the game becomes evidence: the
    error's reason (the arena's words), and the program's last error lines with the answer it wrote."""

    def __init__(
        self,
        argv: list[str],
        name: str,
        launcher: Callable[[], Launcher],
        on_fault: Evidence,
        on_program: Callable[[ChildProgram], None] = lambda _: None,
    ) -> None:
        super().__init__(argv, name, "", on_program=self._started, launcher=launcher)
        self.on_fault = on_fault
        self.also = on_program
        self.last: ChildProgram | None = None
        self.reported = False

    def _started(self, program: ChildProgram) -> None:
        self.last = program
        self.also(program)

    def choose(self, observation: Observation, clock: Clock | None = None) -> Play:
        try:
            return super().choose(observation, clock)
        except BridgeError as exc:
            if not self.reported:
                self.reported = True
                said = list(self.last.stderr_tail) if self.last else []
                self.on_fault(exc.reason, said + exc.quoted)
            raise


class ServiceRunner:
    """A gRPC version: its program, started once, sandboxed, connected through a relayed socket.

    ``folder`` is the version's built source on this host (seen as ``/bot``); each
    run gets a fresh folder of its own seen as ``/arena``: the socket and the token
    file (removed when the run ends).
    When the program ends, :attr:`ended` says why and the evidence is kept; the
    host starts it again (after a pause that grows while it keeps ending).
    """

    def __init__(
        self,
        name: str,
        folder: Path,
        argv: Sequence[str],
        limits: Limits,
        token: str,
        addresses: Sequence[str],
        sdk: Path,
        env: Mapping[str, str],
        on_fault: Evidence,
        ca: bytes | None = None,
        secret: Callable[[], str] | None = None,
    ) -> None:
        self.name = name
        self.on_fault = on_fault
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self.ended = ""
        self._stopping = False
        self._done = threading.Event()
        self._cleaning = threading.Lock()
        # A folder of its own for each run, on a short path (a socket's path may not pass 107 bytes):
        # a run that ends cannot take the socket of the run that replaces it.
        self.arena = Path(tempfile.mkdtemp(prefix="tablanette-arena-"))
        self.relay: Relay | None = None
        self.sandbox: Sandbox | None = None
        self.cpu: Callable[[], float] | None = None
        try:
            self.arena.chmod(0o755)
            token_file = self.arena / "token"
            fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            with os.fdopen(fd, "w") as fh:
                fh.write(token)
            if os.geteuid() == 0:
                os.chown(token_file, NOBODY, NOBODY)
            # the relay tells the replicas this version's connections are its own (limited per bot)
            self.relay = Relay(self.arena / "engine.sock", addresses, ca, bot=name, secret=secret)
            variables = {"TABLANETTE_ADDRESS": "unix:/arena/engine.sock", "TABLANETTE_BOT_NAME": name, **env}
            binds = {str(sdk): "/sdk", str(self.arena): "/arena"}
            self.sandbox = Sandbox(folder, limits, name, binds=binds, env=variables)
            self.cpu = self.sandbox.cpu_seconds
            self.proc = subprocess.Popen(
                self.sandbox.wrap(["/bin/sh", "-c", WITH_TOKEN, "sh", *argv]),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except BaseException:
            self._cleanup()
            raise
        threading.Thread(target=self._watch, daemon=True, name=f"host-{name}").start()

    def _watch(self) -> None:
        """Keep its last lines (read in bounded pieces), and when it ends, say why and clean up."""
        assert self.proc.stdout is not None and self.sandbox is not None
        with contextlib.suppress(OSError, ValueError):
            while line := self.proc.stdout.readline(4096):
                self.tail.append(line[:500].decode("utf-8", errors="replace").rstrip())
        status = self.proc.wait()
        why = exit_reason(status)
        if more := self.sandbox.explain(status):
            why += f" ({more})"
        self.ended = why
        self._cleanup()
        if not self._stopping:
            log.warning("%s: %s; its last output: %s", self.name, why, " | ".join(list(self.tail)[-5:]))
            self.on_fault(why, list(self.tail))
        self._done.set()

    def _cleanup(self) -> None:
        """Release the run's sandbox (killing what is left of it), its relay and its folder (the token)."""
        with self._cleaning:
            if self.sandbox is not None:
                self.sandbox.close()
            if self.relay is not None:
                self.relay.close()
            shutil.rmtree(self.arena, ignore_errors=True)

    def alive(self) -> bool:
        """True until the run has ended *and* been cleaned up (so a new run never overlaps it)."""
        return not self._done.is_set()

    def output(self) -> list[str]:
        return list(self.tail)

    @property
    def faults(self) -> int:
        return 0  # its own SDK answers for it; what it gets wrong the arena counts (timeouts, illegal plays)

    def stop(self) -> None:
        self._stopping = True
        self.proc.terminate()
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._cleanup()  # kills whatever of it is left, even what left its output open
        self._done.wait(timeout=10)
