"""What the benchmarks share: an arena of real processes on a private key prefix."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cli.local import LocalArena

REDIS_URL = os.environ.get("TABLANETTE_REDIS_URL", "redis://127.0.0.1:6379/0")


def temp_arena(name: str) -> LocalArena:
    """An arena on ``REDIS_URL`` under a fresh prefix, logging to a temporary folder (``close()`` it)."""
    return LocalArena(Path(tempfile.mkdtemp(prefix=f"{name}-")), REDIS_URL, f"bench-{name}-{secrets.token_hex(4)}")


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system, every thread) process ``pid`` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class CpuMeter:
    """The CPU seconds process ``pid`` used inside :meth:`counting` blocks, added up."""

    pid: int
    seconds: float = 0.0

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        start = cpu_seconds(self.pid)
        try:
            yield
        finally:
            self.seconds += cpu_seconds(self.pid) - start


def counting(meter: CpuMeter | None) -> contextlib.AbstractContextManager[None]:
    """``meter.counting()``, or nothing to count when there is no meter."""
    return meter.counting() if meter is not None else contextlib.nullcontext()
