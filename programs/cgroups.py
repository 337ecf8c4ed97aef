"""The sandboxes' cgroups on this machine: which hierarchy there is, reading and writing their files, and
whose each run's cgroup is, so one a killed process left behind is swept (:func:`sweep_stale`).

A run's cgroup is named after its owner (:func:`owner_tag`: the pid namespace, pid and start time of the
process that made it), so a sweep can tell a dead owner's leftovers (emptied and removed, their processes
killed) from a live one's. Used by :class:`programs.sandbox.Sandbox` and by the bot host at start.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import time
from collections.abc import Iterable
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")


def cgroup_version() -> int | None:
    """2 for a unified hierarchy, 1 for per-controller mounts, None if there is no cgroup filesystem."""
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return 2
    if all((CGROUP_ROOT / c / "cgroup.procs").exists() for c in V1_CONTROLLERS):
        return 1
    return None


def owner_tag() -> str:
    """This process, as the owner of the run cgroups it makes: ``o<pid namespace>.<pid>.<start time>``.

    The start time tells a dead owner from a new process that got its pid; the namespace keeps a
    sweep from judging the owners of another pid namespace (a container), whose pids it cannot see.
    """
    return _owner_tag(os.getpid())  # by pid: a forked child is an owner of its own


@functools.cache
def _owner_tag(pid: int) -> str:
    return f"o{_pid_namespace()}.{pid}.{_start_time(pid)}"


_OWNER = re.compile(r"-o(\d+)\.(\d+)\.(\d+)$")


def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _start_time(pid: int) -> int:
    """When ``pid`` started (clock ticks since boot); 0 if there is no such process."""
    stat = read(Path(f"/proc/{pid}/stat"))
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return 0


def _owner_gone(group: Path) -> bool:
    """The run's owner (a host, a bridge) is dead, in this pid namespace: what is left in it is a ghost."""
    m = _OWNER.search(group.name)
    if m is None or int(m.group(1)) != _pid_namespace():
        return False
    pid, started = int(m.group(2)), int(m.group(3))
    return started != 0 and _start_time(pid) != started  # 0: its owner could not tell its start time


def sweep_stale(min_age_s: float = 60.0) -> int:
    """Remove the run cgroups older than ``min_age_s`` that a killed process left behind (a run
    removes its own when it closes; one killed with SIGKILL cannot). Returns how many were removed.

    An empty one goes. One that still holds processes goes too (its processes killed first) when
    its owner, named in the cgroup's name (:func:`owner_tag`), is dead: a program that outlived its
    host (killed during the sandbox's own set-up, it can miss its parent's death) plays for nobody.
    Only old ones: a run fills its cgroup as soon as it makes it.
    """
    version = cgroup_version()
    if version is None:
        return 0
    bases = (
        [CGROUP_ROOT / "tablanette"]
        if version == 2
        else [(CGROUP_ROOT / c).resolve() / "tablanette" for c in V1_CONTROLLERS]
    )
    removed = 0
    now = time.time()
    for base in dict.fromkeys(bases):
        for group in base.glob("*"):
            try:
                if not group.is_dir() or now - group.stat().st_mtime <= min_age_s:
                    continue
                if read(group / "cgroup.procs").strip() and not _owner_gone(group):
                    continue
                # an owner that is gone cannot stop what is left: it goes with its cgroup
                if empty_and_remove([group]):
                    removed += 1
            except OSError:  # gone meanwhile
                continue
    return removed


def empty_and_remove(groups: Iterable[Path]) -> bool:
    """Kill every process left in ``groups`` and remove them, trying again (for about a second) while
    the processes exit; False if some group is still there."""
    ordered = sorted(set(groups), reverse=True)
    for _ in range(50):
        for pid in [p for group in ordered for p in read(group / "cgroup.procs").split()]:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        try:
            for group in ordered:
                if group.exists():
                    group.rmdir()
            return True
        except OSError:  # still busy: its processes are exiting
            time.sleep(0.02)
    return False


def write(path: Path, value: str, optional: bool = False) -> None:
    try:
        path.write_text(value)
    except OSError:
        if not optional:
            raise


def read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def counter(path: Path, key: str) -> int:
    """``key``'s value in a flat-keyed cgroup file (``key value`` lines)."""
    for line in read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value or 0)
    return 0
