"""A sandbox for a bot's program from what Debian ships and the kernel offers: bubblewrap and cgroups.

No container daemon. Each run of a program gets:

- **namespaces** (``bwrap --unshare-all``): its own network with only a loopback
  (it talks to the bridge over its stdin and stdout, nothing else), its own
  processes, IPC, hostname and user, and no way to make more
  (``--disable-userns`` and the seccomp filter);
- **nothing of the host's environment**: whoever starts the sandbox, with
  whatever variables, bwrap (the sandbox's pid 1, readable from inside) is
  started with the program's variables only (:meth:`Sandbox.environment`), and
  its arguments (which name the machine's folders) come from a memory file, so
  ``/proc/1/environ`` and ``/proc/1/cmdline`` show nothing of the host;
- **a read-only view** of the machine's toolchain (``/usr`` and the few files of
  ``/etc`` that programs need to start), its own folder read-only at ``/bot``
  (the working directory), a read-only ``/dev`` with only ``null``, ``zero``,
  ``full``, ``random``, ``urandom``, ``tty`` and ``pts``, and private writable
  ``/scratch``, ``/tmp`` and ``/dev/shm``: three tmpfs (in memory), each of
  ``scratch_mb`` and at most ``scratch_files`` files and folders, mounted in a
  mount namespace of the run's own (so the machine never sees them): nothing
  else of the machine is there, so no other bot's files and no arena secret;
- **a seccomp filter** (:mod:`programs.seccomp`) refusing the system calls a bot
  never needs (namespaces, mounts, ptrace, keyrings, bpf, ...);
- **an unprivileged user** (``nobody`` when the arena runs as root);
- **a cgroup** (v1 or v2, whichever the machine mounts) limiting memory,
  processes and CPU share, whose counters say afterwards why it ended (memory
  limit, process limit) and how much CPU it used;
- **rlimits**: CPU seconds, file size, open files, no core dumps.

:class:`Sandbox` is a launcher for :class:`~programs.child.ChildProgram`: it wraps the
command line, explains an exit, and removes its cgroup when the run is over.
:func:`unavailable` says why sandboxes cannot be made here, if they cannot.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import seccomp
from .cgroups import (
    CGROUP_ROOT,
    V1_CONTROLLERS,
    cgroup_version,
    counter,
    empty_and_remove,
    owner_tag,
    read,
    write,
)

NOBODY = 65534
ETC = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "passwd",
    "group",
    "nsswitch.conf",
    "perl",
    "python3",
    "python3.11",
)
"""What of ``/etc`` a program's runtime needs (the loader's cache, ``alternatives`` behind ``/usr/bin`` names)."""
ETC_TOOLCHAINS = ("java-*-openjdk", "maven", "ssl/certs")
"""Patterns (under ``/etc``) of what toolchains under ``/usr`` keep in ``/etc`` and link to from there:
a JDK's ``conf/`` (its security policy, without which ``javac`` and ``java`` stop at once), Maven's
settings, the public CA certificates. Bound read-only where this machine has them; never a secret
(``/etc/ssl/private`` is not bound) and nothing of the host's own configuration."""

ENTER = (
    "import ctypes, json, os, resource, sys\n"
    "os.environ.clear()  # nothing of whoever started us goes further\n"
    "cfg = json.loads(sys.argv[1])\n"
    "for procs in cfg['cgroups']:\n"
    "    with open(procs, 'w') as fh: fh.write(str(os.getpid()))\n"
    "for name, soft, hard in cfg['rlimits']:\n"
    "    resource.setrlimit(getattr(resource, name), (soft, hard))\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def check(result, what):\n"
    "    if result != 0: sys.exit(f'the sandbox cannot {what}: {os.strerror(ctypes.get_errno())}')\n"
    "check(libc.unshare(0x20000), 'have a mount namespace of its own')  # CLONE_NEWNS\n"
    "check(libc.mount(None, b'/', None, 0x4000 | 0x40000, None), 'make its mounts private')  # MS_REC|MS_PRIVATE\n"
    "for path, options in cfg['mounts']:  # its sized tmpfs, gone with the namespace\n"
    "    check(libc.mount(b'tmpfs', path.encode(), b'tmpfs', 0x2 | 0x4, options.encode()), f'mount {path}')\n"
    "if os.getuid() == 0 and cfg['uid'] is not None:\n"
    "    os.setgroups([]); os.setgid(cfg['uid']); os.setuid(cfg['uid'])\n"
    "if not os.access(cfg['dir'], os.R_OK | os.X_OK):\n"
    "    sys.exit(f\"the sandbox runs the program as uid {os.getuid()}, who cannot read {cfg['dir']}: \"\n"
    "             'make it and the folders above it readable by others (chmod o+rx)')\n"
    "libc.prctl(1, 9)  # PR_SET_PDEATHSIG (after setuid, which clears it)\n"
    "if os.getppid() != cfg['parent']: sys.exit(0)\n"
    "def memfd(data):\n"
    "    fd = os.memfd_create('sandbox', 0); os.write(fd, data); os.lseek(fd, 0, os.SEEK_SET)\n"
    "    os.set_inheritable(fd, True); return str(fd)\n"
    "args = ['--seccomp', memfd(bytes.fromhex(cfg['seccomp'])), *cfg['bwrap']]\n"
    "argv = [cfg['bwrap_path'], '--args', memfd(b''.join(a.encode() + b'\\0' for a in args)), '--', *cfg['argv']]\n"
    "os.execve(argv[0], argv, cfg['env'])\n"
)
"""Run first in the child, as root (``python -I -S``, its environment dropped at once): join the cgroup, set
rlimits, make a mount namespace of its own and mount the run's sized tmpfs there (bwrap cannot set a tmpfs's
inode count), drop to the sandbox's user, die with the parent, then exec bwrap with the program's environment
only, its arguments and seccomp filter in memory files (``/proc/1/cmdline`` inside is ``bwrap --args N -- COMMAND``)."""


@dataclass(frozen=True)
class Limits:
    """What one run of a program may use."""

    memory_mb: int = 256
    """Memory, scratch and /tmp included (they are in memory); past it the kernel kills the program."""
    pids: int = 32
    """Processes and threads at once."""
    cpus: float = 1.0
    """CPU share, in cores."""
    cpu_seconds: int = 600
    """CPU time over the whole run (a game); SIGXCPU past it."""
    file_mb: int = 16
    """Largest file it may write."""
    open_files: int = 64
    scratch_mb: int = 32
    """Size of /scratch, of /tmp and of /dev/shm, each (memory, so inside ``memory_mb`` too)."""
    scratch_files: int = 4096
    """Files and folders /scratch, /tmp and /dev/shm may each hold (the tmpfs's inodes)."""


class SandboxError(RuntimeError):
    """A sandbox cannot be made here (see :func:`unavailable`)."""


def unavailable() -> str | None:
    """Why no sandbox can be made on this machine, or None if one can."""
    if sys.platform != "linux":
        return "sandboxes need Linux namespaces and cgroups"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    if _bwrap_version() < (0, 8):
        return "bubblewrap is older than 0.8.0, which is needed for --disable-userns (Debian 12 ships 0.8.0)"
    if cgroup_version() is None:
        return f"no cgroup filesystem at {CGROUP_ROOT}"
    if os.geteuid() != 0:
        return "making cgroups needs root (or a delegated cgroup): run the bridge as root"
    return seccomp.unsupported()


SCRATCH = ("tmp", "scratch", "shm")
"""The run's tmpfs, mounted (in the run's own mount namespace) on folders of these names under :func:`mount_points`."""


@functools.cache
def mount_points() -> Path:
    """The folder under which every run mounts its tmpfs, in its own mount namespace (so all runs share it, and
    the machine only ever sees it empty): ``/run/tablanette-sandbox``, root's and no one else's."""
    base = Path("/run" if os.path.isdir("/run") else tempfile.gettempdir()) / "tablanette-sandbox"
    base.mkdir(mode=0o755, exist_ok=True)
    for name in SCRATCH:
        (base / name).mkdir(mode=0o755, exist_ok=True)
    for path in (base, *(base / name for name in SCRATCH)):
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise SandboxError(f"{path} must be a folder of root's that no one else may write")
    return base


class Sandbox:
    """One run of a program in a sandbox; a launcher for :class:`~programs.child.ChildProgram`."""

    def __init__(
        self,
        program_dir: str | Path,
        limits: Limits = Limits(),
        name: str = "bot",
        writable: bool = False,
        binds: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``writable``: the program may write its folder (a build); ``binds``: more folders of the
        machine it sees read-only (machine path -> path inside: an SDK, the folder of the arena's
        socket); ``env``: variables it gets (never secrets: a command line is visible to all in ``ps``)."""
        if why := unavailable():
            raise SandboxError(why)
        self.program_dir = Path(program_dir).resolve()
        if not self.program_dir.is_dir():
            raise SandboxError(f"the program's folder {program_dir} is not a folder")
        self.limits = limits
        self.writable = writable
        self.binds = dict(binds or {})
        self.env = dict(env or {})
        self.id = f"{name}-{secrets.token_hex(4)}-{owner_tag()}".replace("@", "_")
        self.version = cgroup_version()
        self.mounts = mount_points()
        self._closed_cpu: float | None = None
        self.groups = self._make_cgroups()

    # ----------------------------------------------------------- cgroups

    def _make_cgroups(self) -> dict[str, Path]:
        """controller -> this run's cgroup folder (v2: one folder for all)."""
        lim = self.limits
        period = 100_000
        quota = max(int(lim.cpus * period), 1000)
        if self.version == 2:
            base = CGROUP_ROOT / "tablanette"
            base.mkdir(exist_ok=True)
            write(base / "cgroup.subtree_control", "+memory +pids +cpu")
            group = base / self.id
            group.mkdir()
            write(group / "memory.max", str(lim.memory_mb << 20))
            write(group / "memory.swap.max", "0", optional=True)
            write(group / "pids.max", str(lim.pids))
            write(group / "cpu.max", f"{quota} {period}")
            return {c: group for c in V1_CONTROLLERS}
        groups = {}
        for controller in V1_CONTROLLERS:  # cpu and cpuacct are often one hierarchy (cpu,cpuacct)
            group = (CGROUP_ROOT / controller).resolve() / "tablanette" / self.id
            group.mkdir(parents=True, exist_ok=True)
            groups[controller] = group
        write(groups["memory"] / "memory.limit_in_bytes", str(lim.memory_mb << 20))
        write(groups["memory"] / "memory.memsw.limit_in_bytes", str(lim.memory_mb << 20), optional=True)
        write(groups["pids"] / "pids.max", str(lim.pids))
        write(groups["cpu"] / "cpu.cfs_period_us", str(period))
        write(groups["cpu"] / "cpu.cfs_quota_us", str(quota))
        return groups

    def _procs_files(self) -> list[str]:
        return sorted({str(g / "cgroup.procs") for g in self.groups.values()})

    def memory_killed(self) -> int:
        """Times the kernel killed a process of this run for memory."""
        return counter(
            self.groups["memory"] / ("memory.events" if self.version == 2 else "memory.oom_control"), "oom_kill"
        )

    def pids_refused(self) -> int:
        """Times this run was refused a new process or thread."""
        return counter(self.groups["pids"] / "pids.events", "max")

    def cpu_seconds(self) -> float:
        """CPU time this run has used, from its cgroup's counters (not the wall clock); kept once closed."""
        if self._closed_cpu is not None:
            return self._closed_cpu
        if self.version == 2:
            used = counter(self.groups["cpu"] / "cpu.stat", "usage_usec") / 1e6
        else:
            used = int(read(self.groups["cpuacct"] / "cpuacct.usage") or 0) / 1e9
        closed = self._closed_cpu  # closed while we read: its cgroup may be gone, its total is kept
        return closed if closed is not None else used

    @property
    def closed(self) -> bool:
        return self._closed_cpu is not None

    # ----------------------------------------------------------- the launcher

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` (as seen inside: the program's folder is ``/bot``) sandboxed.

        Whatever environment it is started with, the sandbox gets none of it: bwrap (the sandbox's
        pid 1) and the program get :meth:`environment` only."""
        lim = self.limits
        rlimits = [
            ("RLIMIT_CPU", lim.cpu_seconds, lim.cpu_seconds + 1),
            ("RLIMIT_FSIZE", lim.file_mb << 20, lim.file_mb << 20),
            ("RLIMIT_NOFILE", lim.open_files, lim.open_files),
            ("RLIMIT_CORE", 0, 0),
        ]
        base = self.mounts
        options = f"size={lim.scratch_mb << 20},nr_inodes={lim.scratch_files},uid={NOBODY},gid={NOBODY}"
        mounts = [(str(base / name), f"{options},mode={'0755' if name == 'scratch' else '1777'}") for name in SCRATCH]
        bwrap = ["--die-with-parent", "--unshare-all", "--unshare-user", "--disable-userns", "--new-session"]
        bwrap += ["--cap-drop", "ALL", "--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                bwrap += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                bwrap += ["--ro-bind", top, top]
        for name in ETC:
            if os.path.exists(f"/etc/{name}"):
                bwrap += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        for path in _toolchain_etc():
            bwrap += ["--ro-bind", path, path]
        bwrap += ["--dev", "/dev", "--remount-ro", "/dev", "--bind", str(base / "shm"), "/dev/shm"]
        bwrap += ["--proc", "/proc", "--bind", str(base / "tmp"), "/tmp", "--bind", str(base / "scratch"), "/scratch"]
        bwrap += ["--bind" if self.writable else "--ro-bind", str(self.program_dir), "/bot", "--chdir", "/bot"]
        for outside, inside in self.binds.items():
            bwrap += ["--ro-bind", outside, inside]
        bwrap += ["--remount-ro", "/"]  # the sandbox's own root too: only /scratch, /tmp and /dev/shm take writes
        bwrap += ["--clearenv"]
        for key, value in self.environment().items():
            bwrap += ["--setenv", key, value]
        cfg = {
            "cgroups": self._procs_files(),
            "rlimits": rlimits,
            "uid": NOBODY,
            "parent": os.getpid(),
            "dir": str(self.program_dir),
            "mounts": mounts,
            "seccomp": _filter().hex(),
            "bwrap_path": _bwrap(),
            "bwrap": bwrap,
            "argv": list(argv),
            "env": self.environment(),
        }
        return [sys.executable, "-I", "-S", "-c", ENTER, json.dumps(cfg)]

    def environment(self) -> dict[str, str]:
        """All the variables the program gets, and bwrap too (no value of the machine's own)."""
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/scratch",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            **self.env,
        }

    def explain(self, status: int | None) -> str | None:
        """Why the run ended, from the cgroup's counters and the exit status (None: nothing to add)."""
        why = []
        if self.memory_killed():
            why.append(f"the sandbox's memory limit ({self.limits.memory_mb} MB) was reached: the kernel killed it")
        if self.pids_refused():
            why.append(f"it hit the process limit ({self.limits.pids}): new processes were refused")
        signum = status - 128 if status is not None and status > 128 else None  # bwrap: 128 + the signal
        if signum == signal.SIGXCPU:
            why.append(f"its CPU time limit ({self.limits.cpu_seconds} s) was reached")
        elif signum in _SIGNALS and not why:
            why.append(f"it was killed by {signal.Signals(signum).name}")
        return "; ".join(why) or None

    def close(self) -> None:
        """Kill whatever of the run is left and remove its cgroup."""
        if self._closed_cpu is not None:
            return
        self._closed_cpu = self.cpu_seconds()
        empty_and_remove(self.groups.values())


_SIGNALS = {s.value for s in signal.Signals}


@functools.cache
def _filter() -> bytes:
    return seccomp.program()


@functools.cache
def _bwrap_version() -> tuple[int, ...]:
    """bubblewrap's version, e.g. (0, 8, 0); (0,) if it cannot tell."""
    try:
        said = subprocess.run([_bwrap(), "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError, SandboxError):
        return (0,)
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", said)
    return tuple(int(n) for n in found.groups() if n is not None) if found else (0,)


@functools.cache
def _bwrap() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError("bubblewrap is not installed (Debian: apt-get install bubblewrap)")
    return os.path.realpath(path)


def _toolchain_etc() -> list[str]:
    """The paths of :data:`ETC_TOOLCHAINS` this machine has, sorted (a JDK's ``/etc/java-17-openjdk``)."""
    return sorted(p for pattern in ETC_TOOLCHAINS for p in glob.glob(f"/etc/{pattern}") if os.path.isdir(p))
