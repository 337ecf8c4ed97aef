"""The rooms and their layers: imports run one way, and nothing imports in a circle.

    engine_service.rules, tablanette.v1   the pure rules engine; the generated wire code
    config | telemetry                    every process's settings | metrics (the shared series, the endpoint)
    store                                 every Redis key and script
    engine_service                        the gRPC engine service
    bots | worker                         bot SDK and built-in bots | Celery app and match runner
    hosting.programs                      a bot's own program: sandbox, child process, JSON-lines bridge
    scheduler                             planning and feeding leagues; self-play
    hosting                               hosted bots: submissions, builds, preflights, the host
    web                                   the web ladder (and its submission API for hosted bots)
    cli                                   the ``tablanette`` command and the local supervisor

A module may import from its own room and from rooms on lower lines only; the
pure rules engine imports nothing of the project but itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS: dict[str, int] = {
    "engine_service.rules": 0,
    "tablanette": 0,
    "config": 1,
    "telemetry": 1,
    "store": 2,
    "engine_service": 3,
    "bots": 4,
    "worker": 4,
    "hosting.programs": 5,
    "scheduler": 6,
    "hosting": 7,
    "web": 8,
    "cli": 9,
}
ROOMS = (
    "engine_service",
    "tablanette",
    "config",
    "telemetry",
    "store",
    "bots",
    "worker",
    "scheduler",
    "web",
    "hosting",
    "cli",
)


def room_of(module: str) -> str | None:
    """The room a dotted module name belongs to (the longest matching layer name)."""
    best = None
    for room in LAYERS:
        if (module == room or module.startswith(room + ".")) and (best is None or len(room) > len(best)):
            best = room
    return best


def modules() -> Iterator[tuple[str, Path]]:
    for top in ROOMS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "node_modules" in path.parts or "build" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
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
    return {m for m in found if room_of(m) is not None}


GRAPH = {name: imports_of(name, path) for name, path in modules()}


def resolve(module: str) -> str | None:
    """``module`` if it is a project module, else its package (``from x import name`` names a symbol)."""
    while module and module not in GRAPH:
        module = module.rpartition(".")[0]
    return module or None


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_no_import_from_a_higher_layer_or_a_sibling_room(name: str) -> None:
    room = room_of(name)
    assert room is not None
    wrong = []
    for target in sorted(GRAPH[name]):
        other = room_of(target)
        assert other is not None
        if other == room:
            continue
        if LAYERS[other] > LAYERS[room] or (LAYERS[other] == LAYERS[room]):
            wrong.append(f"{target} (room {other}, layer {LAYERS[other]})")
        if room == "engine_service.rules":
            wrong.append(f"{target}: the pure rules engine imports nothing of the project")
    assert not wrong, f"{name} (room {room}, layer {LAYERS[room]}) imports " + ", ".join(wrong)


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
    assert room_of("engine_service.rules.match") == "engine_service.rules" and room_of("engine_service.gateway") == (
        "engine_service"
    )


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
        if room_of(name) == "hosting"
        for t in targets
        if (r := resolve(t)) and room_of(r) == "engine_service"
    }
    assert not engine, f"hosting reaches into the engine service: {sorted(engine)}"


def test_a_hosted_bots_sdk_imports_of_the_engine_service_only_what_its_sandbox_is_lent() -> None:
    """What a hosted Python bot runs (its own code on ``bots`` and ``bots.sdk``, or ``python -m bots``) imports
    of ``engine_service`` only :data:`hosting.sdk.ENGINE_PARTS`, all its sandbox is given."""
    from hosting.sdk import ENGINE_PARTS

    lent = {Path(part).stem for part in ENGINE_PARTS}
    engine = {m for m in reached(("bots", "bots.sdk", "bots.__main__")) if m.split(".")[0] == "engine_service"}
    assert {"engine_service.rules", "engine_service.convert"} <= engine  # the walk sees the SDK's imports
    assert "engine_service.driver" in reached(("bots.transport",))  # and one that no hosted bot makes
    outside = sorted(m for m in engine if m.count(".") and m.split(".")[1] not in lent)
    assert not outside, f"the SDK imports parts of engine_service a sandbox is not lent (hosting.sdk): {outside}"
