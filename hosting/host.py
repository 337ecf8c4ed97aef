"""The hosting service (``tablanette host``): builds, preflights and runs the versions it is given.

One loop, every ``POLL_S``, over every hosted version in Redis:

- a version *submitted* (or left *building* by a host that died) is built
  (:mod:`hosting.build`), then goes to *preflight*, or to *build-failed* with the
  build's log and why;
- a version in *preflight*, or *ready* and in a league not yet over, is run:
  connected to the arena under its own name ``bot@n`` with a token this host
  issues when it starts it (the only copy is in this process); a version in
  *preflight* also has its preflight league fed (:mod:`hosting.preflight`) and is
  judged at its end;
- a version that failed, or that no league needs any more, is stopped.

Each version is held by one host at a time through a lease in Redis
(:meth:`store.versions.Versions.claim`), renewed every loop: when a host dies,
another takes its versions over after ``LEASE_S``. The reference bots the
preflights play against are held the same way. Builds and preflights run on
a small pool so the loop keeps renewing leases while they take their time.

What a hosted program gets wrong is kept as evidence on its version (its last
output and the sandbox's reason, once a game), for its owner to read.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import redis

from bots.base import Bot
from bots.registry import make_bot
from bots.sandbox import Limits, Sandbox, SandboxError
from bots.sdk import BotClient, parse_addresses
from store.leagues import LeagueStore
from store.tokens import BotTokens
from store.versions import Version, Versions, split_version

from . import preflight, sdk
from .build import build, is_built, version_dir
from .manifest import Manifest, ManifestError
from .runners import ClientRunner, HostedProgram, Runner, ServiceRunner

log = logging.getLogger("tablanette.host")
POLL_S = 1.0
LEASE_S = 5.0
"""A version's lease, renewed every ``POLL_S``: short enough that when a host dies, another has
its bots back within the engine's grace period (10 s by default), so their games go on."""
RESTART_WAIT_S = (1.0, 60.0)
"""A program that keeps ending is started again after 1 s, doubling to at most 60 s."""
WANTED_EVERY_S = 3.0
"""How often the host looks for the leagues that need its ready versions."""
ACTIVE = ("created", "running", "waiting", "paused")
"""League states in which its versions are run (a retried league runs again and brings them back)."""
OUTPUT_EVERY_S = 3.0
"""How often a version's latest output is written to its page."""
PREFLIGHT_ENDINGS = 3
"""Times a version's program may end during its preflight before the preflight stops (and fails)."""
SERVICE_CPU_S = 7 * 24 * 3600
"""A gRPC version's CPU-time limit: it runs for as long as it is hosted (its CPU share is what limits it)."""


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
        self.starts: dict[str, tuple[float, int]] = {}
        """name -> when it was last started (monotonic) and how many times in a row it has ended."""
        self.sdk = self.root / "sdk"
        self.outputs: dict[str, list[str]] = {}
        self.output_at = 0.0
        self.jobs: dict[tuple[str, str], Future[None]] = {}
        """(``build`` or ``preflight``, version) -> the job doing it."""
        self.wanted: set[str] = set()
        """Ready versions a league not yet over has (a ready version is run only while one needs it)."""
        self.wanted_at = -WANTED_EVERY_S
        self.ended: dict[str, int] = {}
        """version -> times its program has ended while this host ran it."""
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="host-job")
        self.stopping = threading.Event()

    # ----------------------------------------------------------- the loop

    def run(self, poll_s: float = POLL_S) -> None:
        """Tend every version until :meth:`stop`; then stop everything this host runs."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)  # the sandbox's user must reach the versions' folders
        sdk.stage(self.sdk)
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
        """Stop every bot this host runs and remove the SDKs it staged (the built versions stay, for a restart)."""
        self.pool.shutdown(wait=True, cancel_futures=True)
        for name in list(self.runners):
            self._stop_running(name)
        shutil.rmtree(self.sdk, ignore_errors=True)

    def step(self) -> None:
        """One pass: the reference bots, then every version."""
        for bot, builtin in preflight.REFERENCE.items():
            self._keep(bot, functools.partial(self._reference, bot, builtin))
        if time.monotonic() - self.wanted_at >= WANTED_EVERY_S:
            self.wanted_at = time.monotonic()
            self._refresh_wanted()
        for version in self.versions.all():
            self._tend(version)
        if time.monotonic() - self.output_at >= OUTPUT_EVERY_S:
            self.output_at = time.monotonic()
            self._keep_output()
        for key, job in list(self.jobs.items()):
            if job.done():
                del self.jobs[key]
                if exc := job.exception():
                    log.error("host %s: the %s of %s failed: %r", self.name, *key, exc)

    def _keep_output(self) -> None:
        """Write each running version's latest output to its version (when it changed)."""
        for name, runner in list(self.runners.items()):
            if split_version(name) is None:
                continue  # a reference bot
            output = runner.output()
            if output and output != self.outputs.get(name):
                self.outputs[name] = output
                self.versions.set_output(name, output)

    def _tend(self, v: Version) -> None:
        name = v.name
        if v.state in ("submitted", "building"):
            if self.versions.claim(name, self.name, self.lease_s) and ("build", name) not in self.jobs:
                self.jobs["build", name] = self.pool.submit(self._build, name)
        elif v.state == "preflight" or (v.state == "ready" and name in self.wanted):
            if ("build", name) in self.jobs:  # a local build of a version another host built; then it runs
                self.versions.claim(name, self.name, self.lease_s)
                return
            if not is_built(self.root, name, v.source_hash):
                if self.versions.claim(name, self.name, self.lease_s):
                    self.jobs["build", name] = self.pool.submit(self._build, name, False)
                return
            self._keep(name, lambda: self._start_version(v))
            if v.state == "preflight" and name in self.runners and ("preflight", name) not in self.jobs:
                self.jobs["preflight", name] = self.pool.submit(self._preflight, name)
        elif name in self.runners:  # failed, or no league needs it now
            self._stop_running(name)
            self.versions.release(name, self.name)

    def _refresh_wanted(self) -> None:
        """The ready versions some league still needs: those of every league not yet over."""
        wanted: set[str] = set()
        for lid in self.leagues.league_ids():
            league = self.leagues.load(lid)
            if league.status in ACTIVE and not league.preflight:
                wanted.update(bot for bot in league.bots if split_version(bot))
        self.wanted = wanted

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
        now = time.monotonic()
        started, ends = self.starts.get(name, (0.0, 0))
        if runner is not None and runner.alive():
            if ends and now - started > RESTART_WAIT_S[1]:
                self.starts[name] = (started, 0)  # it has kept running: the next end starts the pauses afresh
            return
        wait = min(RESTART_WAIT_S[0] * 2 ** (ends - 1), RESTART_WAIT_S[1]) if ends else 0.0
        if now - started < wait:
            return
        if runner is not None:
            self.ended[name] = self.ended.get(name, 0) + 1
            log.warning("host %s: %s stopped; starting it again (pause %.0f s)", self.name, name, wait)
        self.starts[name] = (now, ends + 1 if runner is not None else 0)
        try:
            self.runners[name] = start()
        except (ManifestError, OSError, SandboxError) as exc:
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

        log.info("host %s: running %s (%s, %s)", self.name, name, manifest.language or "?", manifest.protocol)
        if manifest.protocol == "grpc":
            return ServiceRunner(
                name,
                folder.parent,
                manifest.run,
                dataclasses.replace(limits, cpu_seconds=SERVICE_CPU_S),
                self.tokens.reissue(name),
                parse_addresses(self.address),
                self.sdk,
                {**sdk.ENV, "TABLANETTE_MAX_GAMES": str(manifest.max_games)},
                evidence,
                self.ca,
            )

        latest: list[HostedProgram] = []

        def program() -> Bot:
            made = HostedProgram(manifest.run, name, lambda: Sandbox(folder, limits, name), evidence)
            latest[:] = [made]
            return made

        def tail() -> list[str]:  # the error output of the last game's program
            last = latest[0].last if latest else None
            return list(last.stderr_tail) if last is not None else []

        return ClientRunner(self._client(name, program, manifest.max_games), tail)

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
        archive = self.versions.source(name)
        result = build(self.root, name, manifest, archive, v.source_hash, sdk=self.sdk, cancel=self.stopping)
        if self.stopping.is_set():
            return  # built again by whichever host takes the version next
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
        """Play the version's preflight league and judge it (cut short once its program has ended
        ``PREFLIGHT_ENDINGS`` times: it would only keep the reference bots waiting)."""
        runner = self.runners.get(name)
        faults_before = runner.faults if runner else 0
        ended_before = self.ended.get(name, 0)

        def endings() -> int:
            return self.ended.get(name, 0) - ended_before

        def enough() -> bool:
            return self.stopping.is_set() or endings() >= PREFLIGHT_ENDINGS

        status = preflight.play(self.leagues, name, self.enqueue, should_stop=enough)
        if self.stopping.is_set() or self.versions.holder(name) != self.name:
            return  # judged by whoever plays it to the end
        runner = self.runners.get(name)
        faults = max((runner.faults if runner else 0) - faults_before, 0)
        passed, report = preflight.judge(self.leagues, name, status, faults, endings())
        v = self.versions.require(name)
        v.preflight = report
        v.state, v.note = ("ready", "") if passed else ("preflight-failed", "; ".join(report["problems"]))
        self.versions.save(v)
        if not passed:
            self.leagues.cancel(report["league"])  # its unplayed matches are not waited for
        log.info("host %s: %s %s its preflight", self.name, name, "passed" if passed else "failed")

    def _fail(self, name: str, state: str, why: str) -> None:
        self.versions.set_state(name, state, why)
        log.error("host %s: %s: %s", self.name, name, why)
