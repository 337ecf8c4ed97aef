"""Tier: server (see tests/tiers.py)."""

from tiers import tier

pytest_collection_modifyitems = tier(__file__, "server")
