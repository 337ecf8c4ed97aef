"""What a hosted bot's sandbox is lent of the arena: the Python SDK and what it imports, never the engine service.

``hosting.sdk.stage`` copies of ``engine_service`` only :data:`hosting.sdk.ENGINE_PARTS` (the pure rules engine
and the wire conversion). Checked here from the source (every module the SDK's entry points reach, imports
inside functions included) and on a staged copy's files; tests/sandbox/test_sdk_stage.py imports the SDK from a
staged copy in a fresh interpreter.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hosting import sdk

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = ("bots", "bots.sdk", "bots.__main__", "bots.turns", "bots.reconnect")
"""What a hosted Python bot runs: its own code on the SDK (``from bots import Bot``, ``bots.sdk.BotClient``)
or ``python -m bots``."""


def module_path(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported(name: str, path: Path) -> set[str]:
    """The project modules ``path`` (module ``name``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # `from pkg import module`
    return {m for m in found if m.split(".")[0] in ("bots", "engine_service") and module_path(m) is not None}


def reached() -> set[str]:
    todo, seen = list(ENTRY_POINTS), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_path(name)
        assert path is not None, name
        todo += imported(name, path)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # a package's __init__ runs first
    return seen


def staged_part(module: str) -> bool:
    inside = module.split(".")[1:]
    return not inside or inside[0] in {Path(p).stem for p in sdk.ENGINE_PARTS}


def test_the_sdk_imports_of_the_engine_only_what_is_staged() -> None:
    engine = {m for m in reached() if m.split(".")[0] == "engine_service"}
    assert "engine_service.rules" in engine and "engine_service.convert" in engine  # the walk sees them
    assert all(staged_part(m) for m in engine), sorted(m for m in engine if not staged_part(m))


def test_a_staged_sdk_holds_the_rules_and_the_conversion_and_no_engine_service(tmp_path: Path) -> None:
    staged = sdk.stage(tmp_path / "sdk") / "python"
    engine = staged / "engine_service"
    assert sorted(p.name for p in engine.iterdir()) == sorted(sdk.ENGINE_PARTS)
    assert (engine / "rules" / "match.py").is_file() and not list(engine.rglob("__pycache__"))
    assert (staged / "bots" / "sdk.py").is_file() and (staged / "tablanette" / "v1").is_dir()


def test_the_walk_sees_an_engine_module_that_is_not_staged() -> None:
    """The checker itself: the in-process transport (not a hosted bot's) imports the match driver."""
    path = module_path("bots.transport")
    assert path is not None
    assert "engine_service.driver" in imported("bots.transport", path) and not staged_part("engine_service.driver")
