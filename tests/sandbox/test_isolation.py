"""Nothing of the host in a sandbox, attacked from inside: a canary planted in the host's environment is
searched for everywhere a program can look (every ``/proc/*/environ`` and ``cmdline``, the memory of the
sandbox's pid 1, a build's log); what would leave the sandbox (new namespaces, mounts, ptrace, keyrings,
bpf, typing into a terminal) fails with EPERM; ``/dev`` is read-only but its devices work; ``/tmp``,
``/scratch`` and ``/dev/shm`` stop at their size and file count; a build that makes 100,000 files is
stopped with a clear note and removed. Each probe also runs outside the sandbox, where it must see
what the sandbox hides: a probe that could not find the canary proves nothing."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import readable_folder

from hosting import build as builds
from hosting.manifest import Manifest
from hosting.runners import ServiceRunner
from hosting.source import pack
from programs import seccomp
from programs.child import ChildProgram
from programs.sandbox import Limits, Sandbox, mount_points, unavailable

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")

CANARY = f"canary-{secrets.token_hex(8)}"
REDIS_URL = f"redis://:{CANARY}-password@127.0.0.1:6379/0"

SNOOP = r"""
import glob, json, os, re, subprocess, sys
canary = re.compile(rb"canary-[0-9a-f]{16}")
seen = {"read": [], "found": [], "pid1_memory": 0}
def look(path, data):
    seen["read"].append(path)
    seen["found"] += [f"{path}: {m.group().decode()}" for m in canary.finditer(data)]
for path in ["/proc/self/environ", *glob.glob("/proc/[0-9]*/environ"), *glob.glob("/proc/[0-9]*/cmdline")]:
    try:
        with open(path, "rb") as fh:
            look(path, fh.read())
    except OSError:
        pass
look("env", subprocess.run(["env"], capture_output=True).stdout)
try:  # the whole readable memory of pid 1 (outside, as the control: of this very process)
    pid = sys.argv[1]
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if "r" not in perms:
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            seen["pid1_memory"] += len(data)
            look(f"/proc/{pid}/mem", data)
except OSError as exc:
    seen["pid1_memory_error"] = str(exc)
seen["fds"] = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))  # the listing's own is one of them
with open("/proc/1/cmdline", "rb") as fh:
    seen["pid1_cmdline"] = fh.read().decode(errors="replace").split("\0")
print(json.dumps(seen))
"""

PROBE = r"""
import ctypes, errno, json, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def err(result):
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
def syscall(nr, *args):
    return err(libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args)))
N = {"unshare": 272, "setns": 308, "keyctl": 250, "bpf": 321, "perf_event_open": 298, "clone": 56,
     "clone3": 435, "process_vm_readv": 310, "fsopen": 430, "open_tree": 428, "userfaultfd": 323,
     "io_uring_setup": 425}
got = {}
harmful = sys.argv[1] == "all"  # outside the sandbox, only what harms nothing
pid = os.fork()
if pid == 0:  # each namespace try in a child of its own: on success it would change this process
    os._exit(0 if libc.unshare(0x10000000) == 0 else 1)  # CLONE_NEWUSER
got["unshare_user"] = "ok" if os.waitpid(pid, 0)[1] == 0 else "refused"
got["unshare_cmd"] = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True).stderr.strip()
got["keyctl"] = syscall(N["keyctl"], 0, -3, 0)  # KEYCTL_GET_KEYRING_ID of the session keyring: harmless
got["bpf"] = syscall(N["bpf"], 0, 0, 0)  # BPF_MAP_CREATE with no attributes
got["clone3"] = syscall(N["clone3"], 0, 0)  # no arguments: EFAULT or EINVAL where it is allowed
got["fsopen"] = syscall(N["fsopen"], 0, 0)
got["open_tree"] = syscall(N["open_tree"], -100, 0, 0)
got["io_uring_setup"] = syscall(N["io_uring_setup"], 0, 0)
got["tiocsti"] = err(libc.ioctl(0, 0x5412, ctypes.c_char_p(b"x")))  # stdin is a pipe: ENOTTY where allowed
if harmful:
    got["unshare_mount"] = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True).stderr.strip()
    got["mount"] = err(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
    got["ptrace_pid1"] = err(libc.ptrace(16, 1, None, None))  # PTRACE_ATTACH
    got["process_vm_readv"] = syscall(N["process_vm_readv"], 1, 0, 0, 0, 0, 0)
    got["setns"] = syscall(N["setns"], 0, 0)
    got["perf_event_open"] = syscall(N["perf_event_open"], 0, 0, -1, -1, 0)
    got["userfaultfd"] = syscall(N["userfaultfd"], 0)
    got["clone_newuser"] = syscall(N["clone"], 0x10000000 | 17, 0, 0, 0, 0)
    got["clone_newnet_high_bits"] = syscall(N["clone"], (1 << 32) | 0x40000000 | 17, 0, 0, 0, 0)
    # what a bot does need: processes, threads, pipes
    got["subprocess"] = subprocess.run(["sh", "-c", "echo fine"], capture_output=True, text=True).stdout.strip()
    import threading
    t = threading.Thread(target=lambda: None); t.start(); t.join()
    got["thread"] = "ok"
    child = os.fork()
    if child == 0:
        os._exit(7)
    got["fork"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
print(json.dumps(got))
"""


@pytest.fixture
def folder() -> Iterator[Path]:
    with readable_folder("isolation-test") as where:
        yield where


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> str:
    """The canary in this process's environment: every sandbox below is launched from it."""
    monkeypatch.setenv("TABLANETTE_CANARY", CANARY)
    monkeypatch.setenv("TABLANETTE_REDIS_URL", REDIS_URL)
    return CANARY


def sandboxed(folder: Path, argv: list[str], limits: Limits | None = None) -> tuple[int, str, str]:
    """Run ``argv`` in a sandbox over ``folder``, started with this process's whole environment."""
    box = Sandbox(folder, limits or Limits(), "isolation", env={"TABLANETTE_BOT_NAME": "snoop"})
    try:
        done = subprocess.run(box.wrap(argv), capture_output=True, text=True, timeout=120, env=dict(os.environ))
        return done.returncode, done.stdout, done.stderr
    finally:
        box.close()


def test_no_value_of_the_host_environment_is_seen_anywhere_inside(folder: Path, canary: str) -> None:
    (folder / "snoop.py").write_text(SNOOP)
    # the control: the same probe outside, started like the sandbox is (from this process), finds it
    outside = json.loads(subprocess.run([sys.executable, str(folder / "snoop.py"), "self"], **_out()).stdout)
    assert any(canary in hit for hit in outside["found"]), outside["found"][:3]
    assert outside["pid1_memory"] > 0

    status, out, err = sandboxed(folder, ["python3", "/bot/snoop.py", "1"])
    assert status == 0, err
    inside = json.loads(out)
    assert inside["found"] == [], inside["found"]
    assert "/proc/1/environ" in inside["read"] and "/proc/self/environ" in inside["read"]
    assert inside["pid1_memory"] > 1 << 20, inside  # it could read bwrap's memory, and nothing of ours is there
    assert canary not in out and REDIS_URL not in out and "6379" not in out
    assert inside["pid1_cmdline"][:2] == [os.path.realpath("/usr/bin/bwrap"), "--args"]  # no host folder listed
    assert str(folder) not in " ".join(inside["pid1_cmdline"])
    assert inside["fds"] == [0, 1, 2, 3]  # nothing of the launcher's open files (bwrap's memory files are closed)


def test_a_child_program_and_a_build_started_from_the_host_see_nothing_of_it_either(folder: Path, canary: str) -> None:
    (folder / "snoop.py").write_text(SNOOP)
    program = ChildProgram(
        ["python3", "/bot/snoop.py", "1"], launcher=Sandbox(folder, Limits(), "child"), env=dict(os.environ)
    )
    line = program.read_line(60)
    program.stop()
    assert line is not None and canary not in line and json.loads(line)["found"] == []

    src = folder / "src"
    src.mkdir()
    (src / "snoop.py").write_text(SNOOP)
    (src / "bot.toml").write_text('run = ["./bot"]\nbuild = ["sh", "-c", "python3 snoop.py 1 && touch bot"]\n')
    archive, digest = pack(src)
    result = builds.build(folder / "hosted", "snoop@1", Manifest.load(src), archive, digest, timeout_s=60)
    assert result.ok, result.log
    assert canary not in result.log and '"found": []' in result.log


def test_a_hosted_grpc_program_prints_nothing_of_its_host(folder: Path, canary: str) -> None:
    """The host's own runner (started from a process with the canary), its program's output kept as evidence."""
    (folder / "bot").mkdir()
    (folder / "sdk").mkdir()
    (folder / "bot" / "snoop.sh").write_text(
        "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f | cut -c1-400; done; env\n"
    )
    faults: list[tuple[str, list[str]]] = []
    done = threading.Event()
    runner = ServiceRunner(
        "snoop@1",
        folder / "bot",
        ["sh", "/bot/snoop.sh"],
        Limits(),
        "the-bots-own-token",
        ["127.0.0.1:9"],  # never dialled: the program does not connect
        folder / "sdk",
        {},
        lambda why, tail: (faults.append((why, tail)), done.set()),
    )
    try:
        assert done.wait(60), "the program did not end"
    finally:
        runner.stop()
    lines = faults[0][1]
    assert "TABLANETTE_BOT_NAME=snoop@1" in lines and "HOME=/scratch" in lines  # it did print its environment
    assert not [line for line in lines if canary in line or "6379" in line], lines


def test_the_kernel_refuses_what_a_bot_never_needs_and_allows_what_it_does(folder: Path) -> None:
    (folder / "probe.py").write_text(PROBE)
    control = json.loads(subprocess.run([sys.executable, str(folder / "probe.py"), "harmless"], **_out()).stdout)
    assert control["unshare_user"] == "ok" and control["unshare_cmd"] == ""  # the machine allows them
    assert control["tiocsti"] == "ENOTTY" and control["clone3"] in ("EFAULT", "EINVAL")

    status, out, err = sandboxed(folder, ["python3", "/bot/probe.py", "all"])
    assert status == 0, err
    got = json.loads(out)
    refused = {
        k: v
        for k, v in got.items()
        if k not in ("unshare_user", "unshare_cmd", "unshare_mount", "subprocess", "thread", "fork")
    }
    assert refused == {k: "ENOSYS" if k == "clone3" else "EPERM" for k in refused}, got
    assert got["unshare_user"] == "refused" and "Operation not permitted" in got["unshare_cmd"]
    assert "Operation not permitted" in got["unshare_mount"]
    assert (got["subprocess"], got["thread"], got["fork"]) == ("fine", "ok", 7)


def test_another_abi_kills_the_process(folder: Path) -> None:
    x32 = "import ctypes; ctypes.CDLL(None).syscall(0x40000000 | 39); print('alive')"  # x32 getpid
    status, out, err = sandboxed(folder, ["python3", "-c", x32])
    assert "alive" not in out and status == 128 + 31, (status, out, err)  # SIGSYS


def test_dev_is_read_only_its_devices_work_and_dev_shm_is_bounded(folder: Path) -> None:
    script = (
        "import json, os\n"
        "got = {}\n"
        "for name in ('/dev/foo', '/dev/null2'):\n"
        "    try: open(name, 'w'); got[name] = 'ok'\n"
        "    except OSError as exc: got[name] = exc.strerror\n"
        "with open('/dev/null', 'w') as fh: fh.write('x' * 1000)\n"
        "got['zero'] = open('/dev/zero', 'rb').read(4).hex()\n"
        "got['urandom'] = len(open('/dev/urandom', 'rb').read(16))\n"
        "wrote = 0\n"
        "try:\n"
        "    with open('/dev/shm/big', 'wb') as fh:\n"
        "        for _ in range(64): fh.write(b'x' * (1 << 20)); fh.flush(); wrote += 1\n"
        "except OSError as exc: got['shm_error'] = exc.strerror\n"
        "got['shm_mb'] = wrote\n"
        "os.remove('/dev/shm/big')\n"
        "n = 0\n"
        "try:\n"
        "    while True: open(f'/dev/shm/f{n}', 'w').close(); n += 1\n"
        "except OSError as exc: got['shm_files_error'] = exc.strerror\n"
        "got['shm_files'] = n\n"
        "print(json.dumps(got))\n"
    )
    status, out, err = sandboxed(folder, ["python3", "-c", script], Limits(scratch_mb=8, scratch_files=300))
    assert status == 0, err
    got = json.loads(out)
    assert got["/dev/foo"] == got["/dev/null2"] == "Read-only file system"
    assert got["zero"] == "00000000" and got["urandom"] == 16
    assert got["shm_error"] == "No space left on device" and got["shm_mb"] <= 8
    assert got["shm_files_error"] == "No space left on device" and 290 <= got["shm_files"] < 300


def test_an_inode_bomb_in_tmp_stops_at_the_limit_and_leaves_nothing_on_the_host(folder: Path) -> None:
    bomb = (
        "import os, sys\n"
        "for where in ('/tmp', '/scratch'):\n"
        "    n = 0\n"
        "    try:\n"
        "        while True: os.mkdir(f'{where}/d{n}'); n += 1\n"
        "    except OSError as exc: print(where, n, exc.strerror)\n"
    )
    before = Path("/proc/self/mountinfo").read_text().count("tmpfs")
    started = time.monotonic()
    status, out, err = sandboxed(folder, ["python3", "-c", bomb], Limits(scratch_files=2000))
    took = time.monotonic() - started
    assert status == 0, err
    for _where, n, why in re.findall(r"(\S+) (\d+) (.+)", out):
        assert why == "No space left on device" and 1990 <= int(n) < 2000, out
    assert len(out.splitlines()) == 2 and took < 60
    assert Path("/proc/self/mountinfo").read_text().count("tmpfs") == before  # its tmpfs were its own
    assert all(not any((mount_points() / name).iterdir()) for name in ("tmp", "scratch", "shm"))


def test_a_build_that_makes_100000_files_is_stopped_with_a_note_and_removed(folder: Path) -> None:
    src = folder / "src"
    src.mkdir()
    bomb = "mkdir out && cd out && seq 100000 | xargs touch && echo made-them-all"
    (src / "bot.toml").write_text(f'run = ["./bot"]\nbuild = ["sh", "-c", {json.dumps(bomb)}]\n')
    archive, digest = pack(src)
    started = time.monotonic()
    result = builds.build(folder / "hosted", "bomb@1", Manifest.load(src), archive, digest, timeout_s=120)
    took = time.monotonic() - started
    assert not result.ok
    assert result.why == (
        f"the build made more than {builds.MAX_BUILT_FILES} files, the limit (the build was stopped there)"
    ), result.log
    assert not (folder / "hosted" / "bomb@1").exists()
    assert took < 90, took


def test_a_build_that_nests_folders_past_what_can_be_walked_is_stopped_and_removed(folder: Path) -> None:
    """Folders nested until their path passes the kernel's 4096 bytes would hide what is below them from the
    limits (a walk by path cannot open them): the build is stopped at the path limit and removed."""
    src = folder / "src"
    src.mkdir()
    deep = (
        'n=$(printf "x%.0s" $(seq 250)); for i in $(seq 24); do mkdir "$n" && cd "$n" || exit 3; done; '
        "seq 200000 > hidden && sleep 30"
    )
    (src / "bot.toml").write_text(f'run = ["./bot"]\nbuild = ["sh", "-c", {json.dumps(deep)}]\n')
    archive, digest = pack(src)
    result = builds.build(folder / "hosted", "deep@1", Manifest.load(src), archive, digest, timeout_s=120)
    assert not result.ok
    assert result.why == (
        f"the build made a path longer than {builds.MAX_BUILT_PATH} bytes, the limit (the build was stopped there)"
    ), result.log
    assert not (folder / "hosted" / "deep@1").exists()


def test_the_seccomp_tables_agree_with_the_kernel_headers() -> None:
    headers = {
        "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        "aarch64": Path("/usr/include/asm-generic/unistd.h"),
    }
    checked = 0
    for machine, header in headers.items():
        if not header.exists():
            continue
        numbers = dict(re.findall(r"#define __NR_(\w+)\s+(\d+)\b", header.read_text()))
        for name, nr in seccomp.TABLES[machine].numbers.items():
            assert int(numbers[name]) == nr, (machine, name)
            checked += 1
    if not checked:
        pytest.skip("no kernel headers here (Debian: linux-libc-dev)")
    assert seccomp.unsupported("riscv64") == "no seccomp filter is known for riscv64 processors (only x86_64, aarch64)"
    assert len(seccomp.program("aarch64")) % 8 == 0


def _out() -> dict[str, object]:
    return {"capture_output": True, "text": True, "timeout": 60, "check": True}
