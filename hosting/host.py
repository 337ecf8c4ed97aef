"""The hosting service (``tablanette host``): builds, preflights and runs the versions it is given.

One loop, every ``POLL_S``, over every hosted version in Redis:

- a version *submitted* (or left *building* by a host that died) is built
  (:mod:`hosting.build`), then goes to *preflight*, or to *build-failed* with the
  build's log and why;
- a version in *preflight*, or *ready* and in a league not yet over, is built
  here if it is not yet (even while another host runs it: a standby build, so a
  takeover never waits for a build) and run:
  connected to the arena under its own name ``bot@n`` with a token this host
  issues when it starts it (and retires when it stops it); a version in
  *preflight* also has its preflight league fed (:mod:`hosting.preflight`) and is
  judged at its end;
- a version that failed, or that no league needs any more, is stopped.

Each version is held by one host at a time through a lease in Redis
(:meth:`store.versions.Versions.claim`), renewed every loop: when a host dies,
another takes its versions over after ``LEASE_S``. The reference bots the
preflights play against are held the same way. Builds and preflights run on
threads of their own, so the loop keeps renewing leases while they take their
time: at most ``builds`` builds (``TABLANETTE_HOST_BUILDS``) and ``preflights``
preflights (``TABLANETTE_HOST_PREFLIGHTS``) at once, each kind with its own
slots, and at most one build and one preflight per bot at a time, so that builds
that hang (each stopped at its deadline, ``TABLANETTE_HOST_BUILD_SECONDS``) never
take every slot, nor hold up a preflight. A job waits in Redis (its version's
state) until a slot is free, never in a queue here.

:meth:`Host.stop` (SIGTERM) ends the loop; :meth:`Host.close` then stops every
bot at once and waits for its jobs at most ``JOBS_GRACE_S`` (a build is cancelled
within about a second; one that hangs anyway is left behind, on a daemon thread
that does not keep the process), so the host stops within seconds whatever its
bots do.

What a hosted program gets wrong is kept as evidence on its version (its last
output and the sandbox's reason, once a game), for its owner to read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import secrets
import shutil
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import redis

from bots.base import Bot
from bots.registry import make_bot
from bots.sdk import BotClient, parse_addresses
from programs.cgroups import sweep_stale
from programs.child import Running
from programs.sandbox import Limits, Sandbox, SandboxError
from store.leagues import LeagueError, LeagueStore
from store.sessions import internal_secret_sync
from store.tokens import BotTokens, TokenError
from store.versions import Version, Versions, split_version

from . import preflight, sdk
from .build import BUILD_TIMEOUT_S, build, is_built, version_dir
from .jobs import Jobs
from .manifest import Manifest, ManifestError
from .meter import CpuMeter, CpuTally
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
UNBUILDABLE_S = 600.0
"""How long a host leaves a version it failed to build locally (built fine elsewhere) to other hosts."""
SWEEP_EVERY_S = 60.0
"""How often a host sweeps the sandbox cgroups that dead owners left (any host's, bridges' too)."""
SERVICE_CPU_S = 7 * 24 * 3600
"""A gRPC version's CPU-time limit: it runs for as long as it is hosted (its CPU share is what limits it)."""
BUILDS = 3
"""Builds at once on a host: two that hang (until their deadline) leave a slot for every other bot's build;
more would crowd the machine (a build may use 2 cores and 2 GB)."""
PREFLIGHTS = 4
"""Preflights at once on a host (each feeds a small league; its games run on the workers)."""
JOBS_GRACE_S = 3.0
"""How long a stopping host waits for its builds and preflights to notice (a build checks every second)."""
STOP_GRACE_S = 6.0
"""How long a stopping host waits for its bots to stop (all at once; a gRPC program gets 3 s to exit)."""


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
        builds: int = BUILDS,
        preflights: int = PREFLIGHTS,
        build_timeout_s: float = BUILD_TIMEOUT_S,
    ) -> None:
        self.r, self.prefix = client, prefix
        self.address, self.ca = address, ca
        self.root = Path(root)
        self.enqueue = enqueue
        self.name = name or f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(3)}"
        """Unique even for two hosts with one hostname and pid (containers sharing a network)."""
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
        self.builds, self.preflights = Jobs("build", builds), Jobs("preflight", preflights)
        self.build_timeout_s = build_timeout_s
        self.wanted: set[str] = set()
        """Ready versions a league not yet over has (a ready version is run only while one needs it)."""
        self.wanted_at = -WANTED_EVERY_S
        self.unbuildable: dict[str, float] = {}
        """version -> until when (monotonic) this host does not try it again (it would not build here)."""
        self.ended: dict[str, int] = {}
        """version -> times its program has ended while this host ran it."""
        self.stopping = threading.Event()
        self.swept_at = 0.0
        self.meter: CpuMeter | None = None
        """The CPU time of the versions running here, offered to the engine replicas (leagues on the CPU clock)."""

    # ----------------------------------------------------------- the loop

    def run(self, poll_s: float = POLL_S) -> None:
        """Tend every version until :meth:`stop`; then stop everything this host runs."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)  # the sandbox's user must reach the versions' folders
        sdk.stage(self.sdk)
        self._sweep()
        log.info("host %s: hosting under %s, arena at %s", self.name, self.root, self.address)
        self.meter = CpuMeter(parse_addresses(self.address), lambda: internal_secret_sync(self.r, self.prefix), self.ca)
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
        """Stop every bot this host runs, all at once, and remove the SDKs it staged (the built versions
        stay, for a restart; an empty folder goes). Bounded: it waits for its bots at most
        ``STOP_GRACE_S`` and for its jobs (cancelled by :attr:`stopping`) at most ``JOBS_GRACE_S``."""
        self.stopping.set()
        stoppers = {name: self._stop_soon(name) for name in list(self.runners)}
        jobs_by = time.monotonic() + JOBS_GRACE_S
        for jobs in (self.builds, self.preflights):
            if hung := jobs.wait(jobs_by):
                log.warning("host %s: stopping without waiting for the %s of %s", self.name, jobs.kind, hung)
        stop_by = time.monotonic() + STOP_GRACE_S
        for name, stopper in stoppers.items():
            stopper.join(timeout=max(stop_by - time.monotonic(), 0.0))
            if stopper.is_alive():
                log.warning("host %s: %s has not stopped; its lease runs out by itself", self.name, name)
                continue
            with contextlib.suppress(redis.RedisError):
                self.versions.release(name, self.name)  # another host may take it at once
        if self.meter is not None:
            self.meter.close()
        shutil.rmtree(self.sdk, ignore_errors=True)
        with contextlib.suppress(OSError):  # a host that built nothing leaves nothing behind
            self.root.rmdir()

    def step(self) -> None:
        """One pass: the reference bots, then every version."""
        for bot, builtin in preflight.REFERENCE.items():
            self._keep(bot, functools.partial(self._reference, bot, builtin))
        if time.monotonic() - self.wanted_at >= WANTED_EVERY_S:
            self.wanted_at = time.monotonic()
            self._refresh_wanted()
        for version in self.versions.all():
            try:
                self._tend(version)
            except redis.RedisError:
                raise
            except Exception:  # one version's trouble must not stop the others (nor the host)
                log.exception("host %s: could not tend %s", self.name, version.name)
        if time.monotonic() - self.swept_at >= SWEEP_EVERY_S:
            self._sweep()
        if time.monotonic() - self.output_at >= OUTPUT_EVERY_S:
            self.output_at = time.monotonic()
            self._keep_output()
        for key, job in list(self.jobs.items()):
            if job.done():
                del self.jobs[key]
                if exc := job.exception():
                    log.error("host %s: the %s of %s failed: %r", self.name, *key, exc)

    def _sweep(self) -> None:
        """Remove the sandbox cgroups a killed process left behind, and kill what outlived its owner."""
        self.swept_at = time.monotonic()
        if swept := sweep_stale():
            log.info("host %s: removed %d sandbox cgroup(s) a killed process left behind", self.name, swept)

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
            if ("build", name) not in self.jobs and self.builds.room(name):
                if self.versions.claim(name, self.name, self.lease_s):
                    self._start_job(self.builds, name, functools.partial(self._build, name))
            elif ("build", name) in self.jobs:
                self.versions.claim(name, self.name, self.lease_s)
        elif v.state == "preflight" or (v.state == "ready" and name in self.wanted):
            if ("build", name) in self.jobs:  # a local build of a version another host built; then it runs
                self.versions.claim(name, self.name, self.lease_s)
                return
            if not is_built(self.root, name, v.source_hash):
                if self.unbuildable.get(name, 0.0) > time.monotonic():
                    return
                # Built here even while another host runs it (a standby build): should that host die,
                # this one runs the version as soon as its lease runs out, not after a build that may
                # outlast the engine's grace period. The lease is taken only if nobody holds it.
                if self.builds.room(name):
                    self.versions.claim(name, self.name, self.lease_s)
                    self._start_job(self.builds, name, functools.partial(self._build, name, False))
                return
            self._keep(name, lambda: self._start_version(v))
            preflighting = v.state == "preflight" and name in self.runners
            if preflighting and ("preflight", name) not in self.jobs and self.preflights.room(name):
                self._start_job(self.preflights, name, functools.partial(self._preflight, name))
        elif name in self.runners:  # failed, or no league needs it now
            self._stop_running(name)
            self.versions.release(name, self.name)

    def _start_job(self, jobs: Jobs, name: str, work: Callable[[], None]) -> None:
        self.jobs[jobs.kind, name] = jobs.start(name, work)

    def _refresh_wanted(self) -> None:
        """The ready versions some league still needs: those of every league not yet over."""
        wanted: set[str] = set()
        for lid in self.leagues.league_ids():
            try:
                league = self.leagues.load(lid)
            except LeagueError:  # being created or deleted right now
                continue
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
                self._stop_running(name, retire_token=False)
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
        self.runners.pop(name, None)
        try:
            self.runners[name] = started_now = start()
            if self.meter is not None and started_now.cpu is not None:
                self.meter.claim(name, started_now.cpu)
        except (ManifestError, OSError, SandboxError) as exc:  # e.g. its command is not on the machine
            log.error("host %s: cannot start %s: %s", self.name, name, exc)
            self.starts[name] = (now, ends + 1)  # tried again after the same pauses as a program that ends
            self.ended[name] = self.ended.get(name, 0) + 1
            if split_version(name):  # its manifest's fault is its owner's to read; the host's own stays in the log
                why = str(exc) if isinstance(exc, ManifestError) else "the host's own fault (the host's log says which)"
                self.versions.add_evidence(name, f"the host could not start it: {why}", [])

    def _stop_soon(self, name: str) -> threading.Thread:
        """:meth:`_stop_running` on a thread of its own (a host stops its bots all at once)."""
        stopper = threading.Thread(target=self._stop_running, args=(name,), daemon=True, name=f"host-stop-{name}")
        stopper.start()
        return stopper

    def _stop_running(self, name: str, retire_token: bool = True) -> None:
        """Stop it here, and retire its token (the next host to run it issues its own); not when the
        lease was lost: the token may then be the new holder's."""
        runner = self.runners.pop(name, None)
        if self.meter is not None:
            self.meter.release(name)
        if runner is not None:
            runner.stop()
            if retire_token:
                with contextlib.suppress(TokenError, redis.RedisError):
                    self.tokens.revoke(name)

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
                folder,
                manifest.run,
                dataclasses.replace(limits, cpu_seconds=SERVICE_CPU_S),
                self.tokens.reissue(name),
                parse_addresses(self.address),
                self.sdk,
                {**sdk.ENV, "TABLANETTE_MAX_GAMES": str(manifest.max_games)},
                evidence,
                self.ca,
                secret=lambda: internal_secret_sync(self.r, self.prefix),
            )

        running, cpu = Running(), CpuTally()

        def launcher() -> Sandbox:
            return cpu.add(Sandbox(folder, limits, name, binds={str(self.sdk): "/sdk"}, env=sdk.ENV))

        def program() -> Bot:
            return HostedProgram(manifest.run, name, launcher, evidence, running.add)

        def tail() -> list[str]:  # the error output of the last game's program
            last = running.last()
            return list(last.stderr_tail) if last is not None else []

        return ClientRunner(self._client(name, program, manifest.max_games), tail, running.stop_all, cpu.seconds)

    # ----------------------------------------------------------- jobs

    def _build(self, name: str, first: bool = True) -> None:
        """Build ``name`` here; ``first``: it is the version's build (its log and outcome are kept)."""
        try:
            self._build_here(name, first)
        except Exception as exc:  # the host's own trouble (disk, permissions): say so, never retry forever
            log.exception("host %s: building %s failed", self.name, name)
            if first:
                self._fail(name, "build-failed", f"the host could not build it: {exc!r}")
            else:
                self._cannot_run_here(name, f"{exc!r}")

    def _build_here(self, name: str, first: bool) -> None:
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
        result = build(
            self.root, name, manifest, archive, v.source_hash, self.build_timeout_s, sdk=self.sdk, cancel=self.stopping
        )
        if self.stopping.is_set():
            return  # built again by whichever host takes the version next
        if not first:
            if not result.ok:
                self._cannot_run_here(name, result.why)
            return

        def built(v: Version) -> None:
            v.build_log, v.build_seconds = result.log, round(result.seconds, 2)
            v.state, v.note = ("preflight", "") if result.ok else ("build-failed", result.why)

        self.versions.update(name, built)
        if not result.ok:
            self.versions.release(name, self.name)
        log.info("host %s: %s %s", self.name, name, "built" if result.ok else f"failed to build: {result.why}")

    def _cannot_run_here(self, name: str, why: str) -> None:
        """A version built elsewhere that does not build here: leave it to other hosts for a while."""
        log.error("host %s: %s was built elsewhere but does not build here (%s); leaving it", self.name, name, why)
        self.unbuildable[name] = time.monotonic() + UNBUILDABLE_S
        self.versions.release(name, self.name)

    def _preflight(self, name: str) -> None:
        """Play the version's preflight league and judge it (cut short once its program has ended
        ``PREFLIGHT_ENDINGS`` times: it would only keep the reference bots waiting, or when this host
        loses the version's lease: its new holder plays it on)."""
        ended_before = self.ended.get(name, 0)

        def endings() -> int:
            return self.ended.get(name, 0) - ended_before

        def enough() -> bool:
            return self.stopping.is_set() or endings() >= PREFLIGHT_ENDINGS or self.versions.holder(name) != self.name

        status = preflight.play(self.leagues, name, self.enqueue, should_stop=enough)
        if self.stopping.is_set() or self.versions.holder(name) != self.name:
            return  # judged by whoever plays it to the end
        since = status.started_at or 0.0
        faults = [e for e in self.versions.require(name).evidence if e["at"] >= since]  # kept in Redis: any host's
        passed, report = preflight.judge(self.leagues, name, status, len(faults), endings())

        def judged(v: Version) -> None:
            v.preflight = report
            v.state, v.note = ("ready", "") if passed else ("preflight-failed", "; ".join(report["problems"]))

        self.versions.update(name, judged)
        if not passed:
            self.leagues.cancel(report["league"])  # its unplayed matches are not waited for
        log.info("host %s: %s %s its preflight", self.name, name, "passed" if passed else "failed")

    def _fail(self, name: str, state: str, why: str) -> None:
        self.versions.set_state(name, state, why)
        log.error("host %s: %s: %s", self.name, name, why)
