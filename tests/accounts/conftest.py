"""Tier: server (see tests/tiers.py): the front door against a real Redis, the web app and the CLI."""

from tiers import tier

pytest_collection_modifyitems = tier(__file__, "server")
