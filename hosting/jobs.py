"""A host's builds, or its preflights: each on a daemon thread of its own, a few at once, one per bot.

Builds that hang (until their deadline) must not take every slot: a kind of
job has its own slots, and a bot at most one of them, so two bots' hung builds
leave a slot for every other bot's. A job never waits in a queue here (its
version waits in Redis, in its state, for the host's next pass), and a job that
hangs never keeps a stopping host's process alive (its thread is a daemon).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from store.versions import split_version


class Jobs:
    """Builds, or preflights: at most ``size`` at once, and one per bot (see the module's doc)."""

    def __init__(self, kind: str, size: int) -> None:
        if size < 1:
            raise ValueError(f"{kind}: at least one at a time, not {size}")
        self.kind, self.size = kind, size
        self.running: dict[str, Future[None]] = {}
        """version -> its job, while it runs."""

    def _prune(self) -> None:
        self.running = {name: job for name, job in self.running.items() if not job.done()}

    def room(self, version: str) -> bool:
        """Whether a job for ``version`` may start now: a slot is free and no other version of its bot has a job."""
        self._prune()
        if version in self.running or len(self.running) >= self.size:
            return False
        bot = _bot_of(version)
        return not any(_bot_of(name) == bot for name in self.running)

    def start(self, version: str, work: Callable[[], None]) -> Future[None]:
        job: Future[None] = Future()
        job.set_running_or_notify_cancel()

        def run() -> None:
            try:
                work()
            except BaseException as exc:  # kept on the future; the host's loop logs it
                job.set_exception(exc)
            else:
                job.set_result(None)

        self.running[version] = job
        threading.Thread(target=run, daemon=True, name=f"host-{self.kind}-{version}").start()
        return job

    def wait(self, deadline: float) -> list[str]:
        """Wait for the running jobs until ``deadline`` (monotonic); the versions whose jobs still run."""
        for job in list(self.running.values()):
            with contextlib.suppress(Exception):
                job.exception(timeout=max(deadline - time.monotonic(), 0.0))
        self._prune()
        return sorted(self.running)


def _bot_of(version: str) -> str:
    split = split_version(version)
    return split[0] if split else version
