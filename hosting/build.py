"""A version's build: its source unpacked into its own folder, then its build command run in a sandbox.

The build runs like the bot will (:mod:`programs.sandbox`): no network, the
machine's toolchain read-only, as an unprivileged user, with memory, process and
CPU limits, but with its folder writable (that is where it puts what it builds).
It gets ``BUILD_TIMEOUT_S`` seconds of wall time, and the folder may hold at most
``MAX_BUILT`` bytes and ``MAX_BUILT_FILES`` files and folders, none deeper than
``MAX_BUILT_PATH`` bytes of path (checked every
second while it runs, and at its end: past either, the build is stopped and its
folder removed); its ``/tmp``, ``/scratch`` and ``/dev/shm`` are sized by
``BUILD_LIMITS``. Its output, both streams, is the build log (the
last ``store.versions.MAX_LOG`` bytes are kept), headed by what was run and
followed by how it ended, so a failed build says why.

A version with no build command is just unpacked. A folder once built is marked
(outside the folder, where the build cannot forge the mark) with its source
hash, so a host that restarts does not build it again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from programs.sandbox import Limits, Sandbox
from store.versions import MAX_LOG

from .manifest import Manifest
from .sdk import ENV
from .source import SourceError, unpack

BUILD_TIMEOUT_S = 600.0
BUILD_LIMITS = Limits(
    memory_mb=2048, pids=128, cpus=2.0, scratch_mb=512, scratch_files=20_000, file_mb=256, open_files=1024
)
"""What a build may use (a compiler needs more than a bot: C++ with gRPC's headers takes over 512 MB)."""
MAX_BUILT = 512 << 20
"""Bytes the built folder may hold."""
MAX_BUILT_FILES = 20_000
"""Files, folders and links the built folder may hold (a source brings at most ``hosting.source.MAX_FILES``)."""
MAX_BUILT_PATH = 1024
"""The longest path (bytes, below the built folder) a build may make: a deeper one could not be walked
(the kernel names at most 4096 bytes) and so could hide files from the limits above."""
NOBODY = 65534


@dataclass
class BuildResult:
    ok: bool
    log: str
    seconds: float
    why: str = ""
    """Why it failed, in one line (empty when it succeeded)."""


def version_dir(root: str | Path, version: str) -> Path:
    """The version's folder under the host's folder: ``bot/`` (the program's own, seen as /bot) and marks."""
    return Path(root) / version


def is_built(root: str | Path, version: str, source_hash: str) -> bool:
    mark = version_dir(root, version) / "built"
    return mark.is_file() and mark.read_text() == source_hash


def build(
    root: str | Path,
    version: str,
    manifest: Manifest,
    archive: bytes,
    source_hash: str,
    timeout_s: float = BUILD_TIMEOUT_S,
    sdk: Path | None = None,
    cancel: threading.Event | None = None,
) -> BuildResult:
    """Unpack and build ``version`` under ``root``; the folder is left read-only to the bot's user.

    ``sdk``: the staged SDKs (:func:`hosting.sdk.stage`), lent to the build at ``/sdk``;
    ``cancel``: set, it stops the build (its host is stopping) and the build fails as cancelled.
    """
    base = version_dir(root, version)
    remove(base)
    folder = base / "bot"
    base.mkdir(parents=True, mode=0o755)
    os.chmod(base, 0o755)
    started = time.monotonic()
    try:
        unpack(archive, folder)
    except SourceError as exc:
        remove(base)
        return BuildResult(False, str(exc), 0.0, str(exc))
    if not manifest.build:
        _finish(base, folder, source_hash)
        return BuildResult(True, "no build command: the source is used as it is\n", 0.0)
    _own(folder, NOBODY if os.geteuid() == 0 else None)
    limits = dataclasses.replace(BUILD_LIMITS, cpu_seconds=2 * int(timeout_s) + 5)  # 2 cores for the whole time
    binds = {str(sdk): "/sdk"} if sdk is not None else {}
    sandbox = Sandbox(folder, limits, f"build-{version}", writable=True, binds=binds, env=ENV if sdk else None)
    head = f"$ {' '.join(manifest.build)}\n"
    try:
        status, output, timed_out, too_big = _run(
            sandbox.wrap(manifest.build), timeout_s, cancel or threading.Event(), lambda: _too_big(folder)
        )
        explained = sandbox.explain(status)
    finally:
        sandbox.close()
    seconds = time.monotonic() - started
    too_big = too_big or _too_big(folder)
    if cancel is not None and cancel.is_set():
        why = "the build was cancelled: its host stopped"
    elif too_big:
        why = too_big
    elif timed_out:
        why = f"the build took longer than {timeout_s:.0f} s and was stopped"
    elif status != 0:
        why = f"the build exited with status {status}" + (f" ({explained})" if explained else "")
    else:
        why = ""
    log = head + output + f"\n[{'failed: ' + why if why else 'built'} in {seconds:.1f} s]\n"
    if why:
        remove(base)  # a failed build's files are of no use, and must not fill the disk
        return BuildResult(False, log[-MAX_LOG:], seconds, why)
    _own(folder, 0 if os.geteuid() == 0 else None)
    _finish(base, folder, source_hash)
    return BuildResult(True, log[-MAX_LOG:], seconds)


def _run(
    argv: list[str], timeout_s: float, cancel: threading.Event, too_big: Callable[[], str]
) -> tuple[int | None, str, bool, str]:
    """Run ``argv``; its exit status, the end of its output (both streams), whether it was stopped
    (timed out, cancelled, or grown too big) and how it grew too big ('' if it did not; checked every second)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    kept = bytearray()

    def read() -> None:
        assert proc.stdout is not None
        while chunk := os.read(proc.stdout.fileno(), 65536):
            kept.extend(chunk)
            if len(kept) > 2 * MAX_LOG:  # keep only the end: a build that prints forever costs no memory
                del kept[: len(kept) - MAX_LOG]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    ends = time.monotonic() + timeout_s
    grown = ""
    while (status := proc.poll()) is None and time.monotonic() < ends and not cancel.wait(1.0):
        if grown := too_big():
            break
    stopped = status is None
    if stopped:
        proc.kill()  # the sandbox's close kills whatever it started
        status = proc.wait()
    reader.join(timeout=5)
    return status, kept.decode("utf-8", errors="replace")[-MAX_LOG:], stopped, grown


def remove(path: Path) -> None:
    """Remove a folder however deep a build made it (``rm -rf`` does not recurse in Python)."""
    if path.exists() or path.is_symlink():
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], check=False)


def _too_big(folder: Path) -> str:
    """Why the built folder is past its limits ('' if it is not): too many files or too many bytes.

    Walks at most ``MAX_BUILT_FILES`` + 1 entries, so a folder of a million files costs no more than
    one at the limit (it is checked every second while the build runs)."""
    files, size, todo = 0, 0, [str(folder)]
    longest = len(str(folder)) + MAX_BUILT_PATH
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    files += 1
                    if files > MAX_BUILT_FILES:
                        return (
                            f"the build made more than {MAX_BUILT_FILES} files, the limit (the build was stopped there)"
                        )
                    if len(entry.path.encode(errors="surrogateescape")) > longest:  # long before the kernel's 4096
                        return (
                            f"the build made a path longer than {MAX_BUILT_PATH} bytes, the limit "
                            "(the build was stopped there)"
                        )
                    with contextlib.suppress(FileNotFoundError):  # removed by the build meanwhile
                        if entry.is_dir(follow_symlinks=False):
                            todo.append(entry.path)
                        else:
                            size += entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:  # removed by the build meanwhile (at its end, when it is stopped, nothing changes)
            continue
        except OSError as exc:  # a folder the walk cannot read would hide what is below it: never let it pass
            return f"the built folder cannot be measured ({exc.strerror}): the build was stopped there"
        if size > MAX_BUILT:
            return f"the built folder grew past {MAX_BUILT >> 20} MB, the limit (the build was stopped there)"
    return ""


def _own(folder: Path, uid: int | None) -> None:
    """Give the folder to ``uid`` (the build's user while it builds; root afterwards, so the bot cannot
    change what was built)."""
    if uid is None:
        return
    for path in _tree(folder):
        os.lchown(path, uid, uid)  # a link itself, never what it points to


def _finish(base: Path, folder: Path, source_hash: str) -> None:
    for path in _tree(folder):
        if path.is_symlink():
            continue
        path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))  # readable by the bot's user
    (base / "built").write_text(source_hash)


def _tree(folder: Path) -> list[Path]:
    """The folder and everything in it, never following a link (a build may leave links anywhere),
    walked without recursion (a build may nest folders thousands deep)."""
    paths, todo = [folder], [folder]
    while todo:
        with os.scandir(todo.pop()) as entries:
            for entry in entries:
                paths.append(Path(entry.path))
                if entry.is_dir(follow_symlinks=False):
                    todo.append(Path(entry.path))
    return paths
