"""Fixtures shared by every end-to-end test folder (the test kits are on pytest's pythonpath),
and the tier check: every test is ``fast`` or ``server`` (tests/tiers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import Arena, arena_fixture
from tiers import TIERS

TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Doctests of the docs and modules are fast; a test in a folder that chose no tier is an error."""
    untiered = []
    for item in items:
        if any(item.get_closest_marker(t) for t in TIERS):
            continue
        if TESTS in Path(item.path).resolve().parents:
            untiered.append(item.nodeid)
        else:
            item.add_marker("fast")
    if untiered:
        raise pytest.UsageError(
            "tests in a folder whose conftest.py chose no tier (see tests/tiers.py): " + ", ".join(untiered[:5])
        )


@pytest.fixture
def arena(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Arena]:
    """A fresh arena (own Redis prefix) whose processes stop when the test ends."""
    yield from arena_fixture(tmp_path, request.node.name[:24])


@pytest.fixture(scope="module")
def module_arena(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Arena]:
    """One arena shared by a module's tests (each test uses its own bot names)."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")[:24]
    yield from arena_fixture(tmp_path_factory.mktemp(name), name)
