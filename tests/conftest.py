"""Fixtures shared by every end-to-end test folder (the test kits are on pytest's pythonpath),
and the tier check: every test is ``fast`` or ``server`` (tests/tiers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import Arena, arena_fixture
from tiers import TIERS

TESTS = Path(__file__).resolve().parent
LONGEST_FIRST = (
    "multihost/test_network_faults.py",
    "faults/test_faults.py",
    "web/test_pages.py",
    "rules/test_luck_unbiased.py",
    "faults/test_failover.py",
    "league/test_league_e2e.py",
    "league/test_rabbitmq.py",
    "fairplay/test_cheater.py",
    "league/test_ratings_e2e.py",
    "web/test_stranger_path.py",
    "hostile/test_hostile.py",
    "web/test_hosted_pages.py",
    "store/test_archive.py",
    "league/test_absent.py",
)
"""The files that take longest (seconds summed over their tests, in CI's --durations), longest first. The
workers take whole files in collection order, so these go first: a long file begun last would run on alone
while the other worker sits idle (the multihost file, 6-7 minutes, was last in the folder order)."""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Doctests of the docs and modules are fast; a test in a folder that chose no tier is an error; the
    longest files come first (:data:`LONGEST_FIRST`), the rest keep their order."""
    if gone := [f for f in LONGEST_FIRST if not (TESTS / f).is_file()]:
        raise pytest.UsageError(f"tests/conftest.py LONGEST_FIRST names files that are not there: {gone}")
    rank = {str(TESTS / f): i for i, f in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(str(Path(item.path).resolve()), len(rank)))  # stable: the rest as before
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
