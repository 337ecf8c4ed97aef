"""Test tiers: every test folder says in its conftest which tier its tests belong to.

- ``fast``: needs no server and starts no process (``scripts/test.sh --fast`` runs these);
- ``server``: talks to a real Redis, engine service, Celery worker, browser or other process.

A folder's ``conftest.py`` holds one line, ``pytest_collection_modifyitems = tier(__file__, "fast")``;
the root conftest refuses a test that no folder gave a tier (a new folder must choose).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

TIERS = ("fast", "server")


def tier(conftest_file: str, name: str) -> Callable[[list[pytest.Item]], None]:
    """A ``pytest_collection_modifyitems`` hook that marks the tests under the conftest's folder."""
    if name not in TIERS:
        raise ValueError(f"unknown test tier {name!r}; tiers: {', '.join(TIERS)}")
    folder = Path(conftest_file).resolve().parent

    def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
        for item in items:
            if folder in Path(item.path).resolve().parents:
                item.add_marker(name)

    return pytest_collection_modifyitems
