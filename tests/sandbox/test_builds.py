"""Builds in their sandbox: a build that fills its folder, nests it deep, or runs too long is stopped, says
why, and leaves nothing behind; a good one is kept read-only and is not built twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from arena_harness import ROOT, readable_folder

from hosting import build as builds
from hosting.manifest import Manifest
from hosting.source import pack
from programs.cgroups import sweep_stale
from programs.sandbox import Limits, Sandbox, unavailable

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")


SWEEP_AGE_S = 2.0
"""The sweeps here take only runs at least this old: another test's run, made a moment ago (the suite
runs on parallel workers), is not filled yet and must not be taken for one a killed process left."""


def sweep_once_old(groups: Iterable[Path]) -> int:
    """Wait until ``groups`` (this test's runs) are :data:`SWEEP_AGE_S` old, then sweep (what it removed)."""
    made = max(g.stat().st_mtime for g in groups)
    time.sleep(max(0.0, made + SWEEP_AGE_S + 0.1 - time.time()))
    return sweep_stale(min_age_s=SWEEP_AGE_S)


@pytest.fixture
def root() -> Iterator[Path]:
    with readable_folder("builds-test") as folder:
        yield folder


def build_of(root: Path, command: str, timeout_s: float = 60) -> builds.BuildResult:
    src = root / "src"
    src.mkdir(exist_ok=True)
    (src / "bot.toml").write_text(f'run = ["./bot"]\nbuild = ["sh", "-c", {json.dumps(command)}]\n')  # a TOML string
    archive, digest = pack(src)
    return builds.build(root / "hosted", "b@1", Manifest.load(src), archive, digest, timeout_s=timeout_s)


def test_a_build_that_fills_its_folder_is_stopped_at_the_limit_and_removed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builds, "MAX_BUILT", 8 << 20)
    result = build_of(root, "i=0; while :; do head -c 1048576 /dev/zero > f$i; i=$((i+1)); sleep 0.05; done")
    assert not result.ok
    assert result.why == "the built folder grew past 8 MB, the limit (the build was stopped there)"
    assert not (root / "hosted/b@1").exists()


def test_a_build_nested_thousands_deep_fails_cleanly_and_is_removed(root: Path) -> None:
    """1500 folders deep is 3000 bytes of path: past the path limit (the walk could not measure deeper),
    so the build fails on it whether it exited meanwhile or not, and its folder goes however deep it is."""
    result = build_of(root, "for i in $(seq 1500); do mkdir d && cd d; done; echo deep; exit 1")
    assert not result.ok
    assert result.why == (
        f"the build made a path longer than {builds.MAX_BUILT_PATH} bytes, the limit (the build was stopped there)"
    ), result.log
    assert not (root / "hosted/b@1").exists()


def test_a_build_that_runs_too_long_is_stopped(root: Path) -> None:
    result = build_of(root, "echo compiling; sleep 60", timeout_s=2)
    assert not result.ok and result.why == "the build took longer than 2 s and was stopped"
    assert "compiling" in result.log


def test_a_good_build_is_kept_read_only_and_marked_built(root: Path) -> None:
    result = build_of(root, "printf '#!/bin/sh\\necho hi\\n' > bot && chmod +x bot")
    assert result.ok, result.log
    built = root / "hosted/b@1/bot/bot"
    assert built.stat().st_uid == 0 and built.stat().st_mode & 0o777 == 0o755  # the bot's user cannot change it
    assert builds.is_built(root / "hosted", "b@1", pack(root / "src")[1])


def test_the_cgroups_a_killed_run_leaves_behind_are_swept_once_empty(root: Path) -> None:
    folder = root / "prog"
    folder.mkdir(mode=0o755)
    box = Sandbox(folder, Limits(), "abandoned")
    proc = subprocess.Popen(box.wrap(["sh", "-c", "echo up && exec sleep 60"]), stdout=subprocess.PIPE)
    groups = set(box.groups.values())
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"  # running (bwrap's set-up is over)
    sweep_once_old(groups)
    assert all(g.exists() for g in groups)  # in use: kept
    proc.kill()  # what a host killed by SIGKILL leaves: its runs die (bwrap dies with them), their cgroups stay
    proc.wait()
    for _ in range(100):
        if not any((g / "cgroup.procs").read_text().strip() for g in groups):
            break
        time.sleep(0.05)
    assert sweep_stale(min_age_s=SWEEP_AGE_S) >= 1  # old enough already (sweep_once_old above)
    assert not any(g.exists() for g in groups)


GHOST_OWNER = """\
import subprocess, sys
from pathlib import Path
from programs.sandbox import Limits, Sandbox

box = Sandbox(sys.argv[1], Limits(), "ghost")
# What a program killed during the sandbox's own set-up can become: alive in the run's cgroup, but not
# bound to die with its owner. (A sandboxed program dies with its owner; this one is put there by hand.)
quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
ghost = subprocess.Popen(["sleep", "300"], start_new_session=True, **quiet)
for procs in box._procs_files():
    Path(procs).write_text(str(ghost.pid))
print(ghost.pid, box.groups["pids"], flush=True)
"""


def test_a_program_that_outlived_its_owner_is_killed_and_its_cgroup_swept(root: Path) -> None:
    folder = root / "prog"
    folder.mkdir(mode=0o755)
    owner = subprocess.run(
        [sys.executable, "-c", GHOST_OWNER, str(folder)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert owner.returncode == 0, owner.stderr  # the owner is gone now, its run's cgroup not closed
    pid_text, group_text = owner.stdout.split()
    ghost, group = int(pid_text), Path(group_text)
    assert group.exists() and str(ghost) in (group / "cgroup.procs").read_text()
    live = Sandbox(folder, Limits(), "alive")  # a run whose owner (this process) is alive
    proc = subprocess.Popen(live.wrap(["sh", "-c", "echo up && exec sleep 60"]), stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
        assert sweep_once_old([group, *live.groups.values()]) >= 1
        assert not group.exists()
        with pytest.raises(ProcessLookupError):
            for _ in range(100):
                os.kill(ghost, 0)  # gone (a zombie of ours it is not: it was the owner's child)
                time.sleep(0.05)
        assert all(g.exists() for g in live.groups.values()) and proc.poll() is None  # its owner lives: kept
    finally:
        proc.kill()
        proc.wait()
        live.close()
