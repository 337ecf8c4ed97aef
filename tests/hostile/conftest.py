"""Tier: server (see tests/tiers.py). The arena every hostile test attacks, shared by the module."""

from collections.abc import Iterator

import pytest
from hostile_kit import HostileArena
from tiers import tier

pytest_collection_modifyitems = tier(__file__, "server")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileArena]:
    ha = HostileArena.create(tmp_path_factory.mktemp("hostile"))
    try:
        yield ha
    finally:
        ha.close()
