"""Fixtures shared by every end-to-end test folder (the test kits are on pytest's pythonpath)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import Arena, arena_fixture


@pytest.fixture
def arena(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Arena]:
    """A fresh arena (own Redis prefix) whose processes stop when the test ends."""
    yield from arena_fixture(tmp_path, request.node.name[:24])


@pytest.fixture(scope="module")
def module_arena(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Arena]:
    """One arena shared by a module's tests (each test uses its own bot names)."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")[:24]
    yield from arena_fixture(tmp_path_factory.mktemp(name), name)
