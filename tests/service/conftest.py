from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena_harness import Arena, arena_fixture


@pytest.fixture
def arena(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Arena]:
    """A fresh arena (own Redis prefix) whose processes stop when the test ends."""
    yield from arena_fixture(tmp_path, request.node.name[:24])
