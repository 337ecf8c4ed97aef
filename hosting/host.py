"""The hosting service (``tablanette host``): builds, preflights and runs the versions it is given.

One loop, every ``POLL_S``, over every hosted version in Redis:

- a version *submitted* (or left *building* by a host that died) is built
  (:mod:`hosting.build`), then goes to *preflight*, or to *build-failed* with the
  build's log and why;
- a version in *preflight* or *ready* is run: connected to the arena under its
  own name ``bot@n`` with a token this host issues when it starts it (the only
  copy is in this process); a version in *preflight* also has its preflight
  league fed (:mod:`hosting.preflight`) and is judged at its end;
- a version that failed or was quarantined is stopped.

Each version is held by one host at a time through a lease in Redis
(:meth:`store.versions.Versions.claim`), renewed every loop: when a host dies,
another takes its versions over after ``LEASE_S``. The reference bots the
preflights play against are held the same way. Builds and preflights run on
a small pool so the loop keeps renewing leases while they take their time.

What a hosted program gets wrong is kept as evidence on its version (its last
output and the sandbox's reason, once a game), for its owner to read.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import redis

from bots.base import Bot
from bots.bridge import BridgeError, ProgramBot
from bots.child import ChildProgram, Launcher
from bots.registry import make_bot
from bots.sandbox import Limits, Sandbox
from bots.sdk import BotClient, BotRejected, Clock
from engine_service.rules import Observation, Play
from store.leagues import LeagueStore
from store.tokens import BotTokens
from store.versions import PLAYABLE, Version, Versions

from . import preflight
from .build import build, is_built, version_dir
from .manifest import Manifest, ManifestError

log = logging.getLogger("tablanette.host")
POLL_S = 1.0
LEASE_S = 30.0


class Runner(Protocol):
    """A version (or reference bot) connected to the arena by this host."""

    def stop(self) -> None: ...
    def alive(self) -> bool: ...
    @property
    def faults(self) -> int:
        """Answers its program failed to give so far."""
        ...


class ClientRunner:
    """A bot played by an SDK client on a thread of this process (reference bots, JSON-lines versions)."""

    def __init__(self, client: BotClient) -> None:
        self.client = client
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

    def alive(self) -> bool:
        return self.thread.is_alive()

    @property
    def faults(self) -> int:
        return self.client.choose_errors


class HostedProgram(ProgramBot):
    """A JSON-lines version's program for one game; its first failure of the game becomes evidence."""

    def __init__(
        self,
        argv: list[str],
        name: str,
        version: str,
        launcher: Callable[[], Launcher],
        on_fault: Callable[[str, list[str]], None],
    ) -> None:
        super().__init__(argv, name, version, on_program=self._started, launcher=launcher)
        self.on_fault = on_fault
        self.last: ChildProgram | None = None
        self.reported = False

    def _started(self, program: ChildProgram) -> None:
        self.last = program

    def choose(self, observation: Observation, clock: Clock | None = None) -> Play:
        try:
            return super().choose(observation, clock)
        except BridgeError as exc:
            if not self.reported:
                self.reported = True
                self.on_fault(str(exc), list(self.last.stderr_tail) if self.last else [])
            raise


class Host:
    """One machine's hosting service; see the module's doc."""

    def __init__(
        self,
        client: redis.Redis,
        prefix: str,
        address: str,
        root: str | Path,
        enqueue: Callable[[str, str], None],
        ca: bytes | None = None,
        name: str | None = None,
        lease_s: float = LEASE_S,
    ) -> None:
        self.r, self.prefix = client, prefix
        self.address, self.ca = address, ca
        self.root = Path(root)
        self.enqueue = enqueue
        self.name = name or f"{socket.gethostname()}/{os.getpid()}"
        self.lease_s = lease_s
        self.versions = Versions(client, prefix)
        self.tokens = BotTokens(client, prefix)
        self.leagues = LeagueStore(client, prefix)
        self.runners: dict[str, Runner] = {}
        self.jobs: dict[str, Future[None]] = {}
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="host-job")
        self.stopping = threading.Event()

    # ----------------------------------------------------------- the loop

    def run(self, poll_s: float = POLL_S) -> None:
        """Tend every version until :meth:`stop`; then stop everything this host runs."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)  # the sandbox's user must reach the versions' folders
        log.info("host %s: hosting under %s, arena at %s", self.name, self.root, self.address)
        try:
            while not self.stopping.is_set():
                try:
                    self.step()
                except redis.RedisError as exc:
                    log.warning("host %s: Redis is unreachable (%s); trying again", self.name, exc)
                self.stopping.wait(poll_s)
        finally:
            self.close()

    def stop(self) -> None:
        self.stopping.set()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        for name in list(self.runners):
            self._stop_running(name)

    def step(self) -> None:
        """One pass: the reference bots, then every version."""
        for bot, builtin in preflight.REFERENCE.items():
            self._keep(bot, functools.partial(self._reference, bot, builtin))
        for version in self.versions.all():
            self._tend(version)
        for name, job in list(self.jobs.items()):
            if job.done():
                del self.jobs[name]
                if exc := job.exception():
                    log.error("host %s: the job for %s failed: %r", self.name, name, exc)

    def _tend(self, v: Version) -> None:
        name = v.name
        if v.state in ("submitted", "building"):
            if name not in self.jobs and self.versions.claim(name, self.name, self.lease_s):
                self.jobs[name] = self.pool.submit(self._build, name)
        elif v.state in PLAYABLE:
            if name in self.jobs:  # a local build of a version another host built; then it runs
                self.versions.claim(name, self.name, self.lease_s)
                return
            if not is_built(self.root, name, v.source_hash):
                if self.versions.claim(name, self.name, self.lease_s):
                    self.jobs[name] = self.pool.submit(self._build, name, False)
                return
            self._keep(name, lambda: self._start_version(v))
            if v.state == "preflight" and name in self.runners and name not in self.jobs:
                self.jobs[name] = self.pool.submit(self._preflight, name)
        elif name in self.runners:
            self._stop_running(name)
            self.versions.release(name, self.name)

    def _keep(self, name: str, start: Callable[[], Runner]) -> None:
        """Keep ``name`` running here while this host holds its lease; stop it when the lease is lost."""
        if not self.versions.claim(name, self.name, self.lease_s):
            if name in self.runners:
                log.warning(
                    "host %s: lost the lease of %s to %s; stopping it", self.name, name, self.versions.holder(name)
                )
                self._stop_running(name)
            return
        runner = self.runners.get(name)
        if runner is not None and runner.alive():
            return
        if runner is not None:
            log.warning("host %s: %s stopped; starting it again", self.name, name)
        try:
            self.runners[name] = start()
        except (ManifestError, OSError) as exc:
            log.error("host %s: cannot start %s: %s", self.name, name, exc)

    def _stop_running(self, name: str) -> None:
        runner = self.runners.pop(name, None)
        if runner is not None:
            runner.stop()

    # ----------------------------------------------------------- starting bots

    def _client(self, name: str, factory: Callable[[], Bot], max_games: int) -> BotClient:
        token = self.tokens.reissue(name)  # the one copy of the token lives here
        return BotClient(factory, self.address, token, name=name, max_games=max_games, tls_ca=self.ca)

    def _reference(self, bot: str, builtin: str) -> Runner:
        return ClientRunner(self._client(bot, lambda: make_bot(builtin), max_games=8))

    def _start_version(self, v: Version) -> Runner:
        manifest = Manifest.from_dict(v.manifest)
        folder = version_dir(self.root, v.name) / "bot"
        limits = Limits(memory_mb=manifest.memory_mb, pids=manifest.pids, cpus=manifest.cpus)
        name = v.name

        def evidence(reason: str, output: list[str]) -> None:
            try:
                self.versions.add_evidence(name, reason, output)
            except redis.RedisError as exc:
                log.warning("%s: could not keep the evidence of a fault (%s): %s", name, exc, reason)

        def program() -> Bot:
            return HostedProgram(manifest.run, name, "", lambda: Sandbox(folder, limits, name), evidence)

        log.info("host %s: running %s (%s, %s)", self.name, name, manifest.language or "?", manifest.protocol)
        return ClientRunner(self._client(name, program, manifest.max_games))

    # ----------------------------------------------------------- jobs

    def _build(self, name: str, first: bool = True) -> None:
        """Build ``name`` here; ``first``: it is the version's build (its log and outcome are kept)."""
        v = self.versions.require(name)
        try:
            manifest = Manifest.from_dict(v.manifest)
        except ManifestError as exc:
            self._fail(name, "build-failed", str(exc))
            return
        if first:
            self.versions.set_state(name, "building", f"building on {self.name}")
        log.info("host %s: building %s", self.name, name)
        result = build(self.root, name, manifest, self.versions.source(name), v.source_hash)
        if not first:
            if not result.ok:
                log.error("host %s: %s built elsewhere but not here: %s", self.name, name, result.why)
            return
        v = self.versions.require(name)
        v.build_log, v.build_seconds = result.log, round(result.seconds, 2)
        v.state, v.note = ("preflight", "") if result.ok else ("build-failed", result.why)
        self.versions.save(v)
        log.info("host %s: %s %s", self.name, name, "built" if result.ok else f"failed to build: {result.why}")

    def _preflight(self, name: str) -> None:
        runner = self.runners.get(name)
        faults_before = runner.faults if runner else 0
        status = preflight.play(self.leagues, name, self.enqueue, should_stop=self.stopping.is_set)
        if self.stopping.is_set() or self.versions.holder(name) != self.name:
            return  # judged by whoever plays it to the end
        runner = self.runners.get(name)
        faults = (runner.faults if runner else 0) - faults_before
        passed, report = preflight.judge(self.leagues, name, status, faults)
        v = self.versions.require(name)
        v.preflight = report
        v.state, v.note = ("ready", "") if passed else ("preflight-failed", "; ".join(report["problems"]))
        self.versions.save(v)
        log.info("host %s: %s %s its preflight", self.name, name, "passed" if passed else "failed")

    def _fail(self, name: str, state: str, why: str) -> None:
        self.versions.set_state(name, state, why)
        log.error("host %s: %s: %s", self.name, name, why)
