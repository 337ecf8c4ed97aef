"""The folders and their layers: each folder is one layer, imports run down the layers, nothing imports in a circle.

The list is README.md's map of the house (its Architecture table: a layer, the folders, what lives there),
read from there, so the map and the rule are one list. A module belongs to the folder its file is in (a
sub-folder is a folder of its own: ``engine_service/rules/`` is not ``engine_service/``). It may import
from its own folder and from folders on lower layers only; folders on one layer are siblings and import
nothing of each other; the pure rules engine imports nothing of the project but itself. Every folder that
holds Python must be on the map, so a new folder has to choose its layer.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = "engine_service.rules"


def read_map(readme: str) -> dict[str, int]:
    """The README's Architecture table: each row whose first cell is a layer number names its folders (in
    backquotes, ending in ``/``) in the second; the dotted folder name -> its layer."""
    section = readme.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, int] = {}
    for row in re.findall(r"^\|\s*(\d+)\s*\|([^|]*)\|", section, re.M):
        layer, cell = int(row[0]), row[1]
        for folder in re.findall(r"`([\w/]+)/`", cell):
            assert folder.replace("/", ".") not in layers, f"{folder}/ is on the map twice"
            layers[folder.replace("/", ".")] = layer
    return layers


LAYERS = read_map((ROOT / "README.md").read_text())


def folder_of(module: str) -> str:
    """The folder a project module's file is in (a package's ``__init__`` is in the package's folder)."""
    path = ROOT / module.replace(".", "/")
    return module if path.is_dir() else module.rpartition(".")[0]


def python_folders() -> set[str]:
    """Every folder of the project holding Python (besides tests, benchmarks, and what builds leave)."""
    found = set()
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if parts[0] in {"tests", "bench", "scripts", "deploy", "docs"} or parts[0].startswith("."):
            continue
        if {"node_modules", "build", "__pycache__"} & set(parts):
            continue
        found.add(".".join(parts[:-1]))
    return found


def modules() -> Iterator[tuple[str, Path]]:
    for folder in sorted(LAYERS):
        for path in sorted((ROOT / folder.replace(".", "/")).glob("*.py")):
            name = folder if path.name == "__init__.py" else f"{folder}.{path.stem}"
            yield name, path


def imports_of(name: str, path: Path) -> set[str]:
    """Every project module ``name`` imports, anywhere in the file (lazy imports count too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in TOPS}


TOPS = {folder.split(".")[0] for folder in LAYERS}
GRAPH = {name: imports_of(name, path) for name, path in modules()}


def resolve(module: str) -> str | None:
    """``module`` if it is a project module, else its package (``from x import name`` names a symbol)."""
    while module and module not in GRAPH:
        module = module.rpartition(".")[0]
    return module or None


def test_the_map_names_every_folder_that_holds_python_and_no_other() -> None:
    assert LAYERS, "README.md's Architecture table gives no layers"
    assert python_folders() == set(LAYERS), (
        f"not on README.md's map: {sorted(python_folders() - set(LAYERS))}; "
        f"on the map but holding no Python: {sorted(set(LAYERS) - python_folders())}"
    )


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_no_import_from_a_higher_layer_or_a_sibling_folder(name: str) -> None:
    folder = folder_of(name)
    wrong = []
    for target in sorted(GRAPH[name]):
        module = resolve(target)
        assert module is not None, f"{name} imports {target}, which is no module of the project"
        other = folder_of(module)
        if other == folder:
            continue
        if folder == RULES:
            wrong.append(f"{target}: the pure rules engine imports nothing of the project")
        elif LAYERS[other] >= LAYERS[folder]:
            wrong.append(f"{target} (folder {other}, layer {LAYERS[other]})")
    assert not wrong, f"{name} (folder {folder}, layer {LAYERS[folder]}) imports " + ", ".join(wrong)


def test_a_folder_above_its_own_sub_folders_imports_nothing_on_entry() -> None:
    """Importing ``engine_service.rules`` runs ``engine_service/__init__.py`` first: a package whose
    sub-folder sits on a lower layer must import nothing of the project, or the lower layer would run it."""
    wrong = {
        f"{parent} ({sorted(GRAPH[parent])})"
        for folder in LAYERS
        if "." in folder
        and (parent := folder.rpartition(".")[0]) in LAYERS
        and LAYERS[parent] > LAYERS[folder]
        and GRAPH.get(parent)
    }
    assert not wrong, "these packages import on entry though a lower layer lives inside them: " + ", ".join(wrong)


def test_no_import_cycle() -> None:
    edges = {name: {r for t in targets if (r := resolve(t)) and r != name} for name, targets in GRAPH.items()}
    # A package's __init__ re-exporting its own modules is not a cycle of ideas: drop parent -> child edges.
    edges = {a: {b for b in bs if not b.startswith(a + ".")} for a, bs in edges.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (cycle := visit(start)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_the_graph_sees_the_known_imports() -> None:
    """The checker itself: it must see real imports, relative ones included (or the tests above prove nothing)."""
    assert "store.ledger" in {resolve(t) for t in GRAPH["worker.league_match"]}
    assert "cli.common" in {resolve(t) for t in GRAPH["cli.league_cmd"]}  # ``from .common import ...``
    assert "engine_service.rules.cards" in {resolve(t) for t in GRAPH["engine_service.rules.record"]}
    assert folder_of("engine_service.rules.match") == RULES and folder_of("engine_service.gateway") == "engine_service"
    assert folder_of("engine_service.rules") == RULES  # a package's __init__ is in its own folder
    assert read_map("x\n## Architecture\n| 3 | `a/b/`, `c/` | d |\n| — | `e/` | f |\n## Next\n| 4 | `g/` |") == {
        "a.b": 3,
        "c": 3,
    }


def reached(entry_points: tuple[str, ...]) -> set[str]:
    """Every project module importing ``entry_points`` runs (packages' ``__init__`` included)."""
    todo, seen = list(entry_points), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [r for t in GRAPH.get(name, ()) if (r := resolve(t))]
        todo += [name.rsplit(".", i)[0] for i in range(1, name.count(".") + 1)]
    return seen


def test_hosting_imports_directly_nothing_of_the_engine_service_but_the_rules() -> None:
    """Its own imports (through the scheduler and the worker it still reaches the match runner and driver)."""
    engine = {
        f"{name} -> {r}"
        for name, targets in GRAPH.items()
        if folder_of(name) == "hosting"
        for t in targets
        if (r := resolve(t)) and folder_of(r) == "engine_service"
    }
    assert not engine, f"hosting reaches into the engine service: {sorted(engine)}"


def test_a_hosted_bots_sdk_imports_of_the_engine_service_only_what_its_sandbox_is_lent() -> None:
    """What a hosted Python bot runs (its own code on ``bots`` and ``bots.sdk``, or ``python -m bots``) imports
    of ``engine_service`` only :data:`hosting.sdk.ENGINE_PARTS`, all its sandbox is given."""
    from hosting.sdk import ENGINE_PARTS

    lent = {Path(part).stem for part in ENGINE_PARTS}
    engine = {m for m in reached(("bots", "bots.sdk", "bots.__main__")) if m.split(".")[0] == "engine_service"}
    assert {"engine_service.rules", "engine_service.wire.convert"} <= engine  # the walk sees the SDK's imports
    assert "engine_service.driver" in reached(("scheduler.in_process",))  # and one that no hosted bot makes
    outside = sorted(m for m in engine if m.count(".") and m.split(".")[1] not in lent)
    assert not outside, f"the SDK imports parts of engine_service a sandbox is not lent (hosting.sdk): {outside}"


def test_the_python_sdk_stands_on_the_rules_engine_the_wire_form_and_the_generated_code_alone() -> None:
    """``bots`` (the Python SDK and the built-in bots) reaches nothing but those three (and the empty
    ``engine_service`` package they sit in): no settings, no store, no service, no sandbox."""
    beneath = {folder_of(m) for m in reached(tuple(m for m in GRAPH if folder_of(m) == "bots"))} - {"bots"}
    allowed = {RULES, "engine_service.wire", "engine_service", "tablanette", "tablanette.v1"}
    assert beneath <= allowed, f"the SDK reaches {sorted(beneath - allowed)}"
