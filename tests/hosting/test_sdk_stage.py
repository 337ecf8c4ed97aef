"""What a hosted bot's sandbox is lent of the arena: the Python SDK and what it imports, never the engine service.

``hosting.sdk.stage`` copies of ``engine_service`` only :data:`hosting.sdk.ENGINE_PARTS` (the pure rules engine
and the wire conversion). That the SDK needs no more is checked from its imports in
tests/architecture/test_layers.py, and by importing it from a staged copy alone in tests/sandbox/test_sdk_stage.py.
"""

from __future__ import annotations

from pathlib import Path

from hosting import sdk


def test_a_staged_sdk_holds_the_rules_and_the_conversion_and_no_engine_service(tmp_path: Path) -> None:
    staged = sdk.stage(tmp_path / "sdk") / "python"
    engine = staged / "engine_service"
    assert sorted(p.name for p in engine.iterdir()) == sorted(sdk.ENGINE_PARTS)
    assert (engine / "rules" / "match.py").is_file() and not list(engine.rglob("__pycache__"))
    assert (staged / "bots" / "sdk.py").is_file() and (staged / "tablanette" / "v1").is_dir()
