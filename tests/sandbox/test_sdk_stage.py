"""A staged SDK imports in a fresh interpreter with nothing of the arena but what was staged: the Python SDK runs
in a hosted bot's sandbox from ``/sdk/python`` alone, and the engine service is not there to import."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hosting import sdk

PYTHON = Path("/usr/bin/python3")  # the sandbox's interpreter: the machine's, without the arena's virtualenv
PROBE = """
import importlib
import bots, bots.sdk, bots.__main__, bots.turns, engine_service.rules, engine_service.wire.convert
for internal in ("engine_service.gateway", "engine_service.server", "engine_service.admission"):
    try:
        importlib.import_module(internal)
    except ModuleNotFoundError:
        print("absent", internal)
print("sdk", bots.sdk.__file__)
"""


@pytest.mark.skipif(not PYTHON.is_file(), reason="no /usr/bin/python3 here")
def test_the_sdk_imports_from_a_staged_copy_alone_and_the_engine_service_is_absent(tmp_path: Path) -> None:
    staged = sdk.stage(tmp_path / "sdk") / "python"
    env = {"PYTHONPATH": str(staged), "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(PYTHON), "-s", "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [f"absent engine_service.{m}" for m in ("gateway", "server", "admission")], done.stdout
    assert lines[3] == f"sdk {staged / 'bots' / 'sdk.py'}"
