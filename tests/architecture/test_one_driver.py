"""One module iterates the turns of an arena match: :mod:`engine_service.driver`.

A turn loop is a ``while`` whose condition reads ``is_over``, or any use of the
pieces of one (building turns with ``TurnBuilder``, applying answers with
``apply_answer``, keeping time banks with ``MatchClock``). Whoever plays a match
(a replica holding its bots, the match runner) does it through a ``MatchDriver``
and a transport, so the loop, the clock, timeouts and forfeits are written once.

The one other loop is :func:`bots.play_match`: bots playing each other in one
process (self-play, offline leagues, the SDK's examples), with no arena between
them: no transport, no clock, no conduct to count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("engine_service", "bots", "worker", "scheduler", "hosting", "web", "cli", "store", "config", "telemetry")
DRIVER = "engine_service.driver"
IN_PROCESS = {"bots.base"}
PIECES = {"TurnBuilder", "apply_answer", "MatchClock"}
HOMES = {"TurnBuilder": "engine_service.turn_builder", "MatchClock": "engine_service.time_control"}


def modules() -> Iterator[tuple[str, Path]]:
    """Every project module (dotted name, path) but the pure rules engine and generated code."""
    for top in ROOMS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if {"node_modules", "build", "rules"} & set(path.relative_to(ROOT).parts[:-1]):
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def turn_loops(tree: ast.AST) -> list[int]:
    """Lines of the ``while`` loops whose condition reads ``is_over``."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.While)
        and any(isinstance(n, ast.Attribute) and n.attr == "is_over" for n in ast.walk(node.test))
    ]


def pieces_used(tree: ast.AST) -> set[str]:
    """The turn loop's pieces a module names (imports included)."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return names & PIECES


def test_exactly_one_module_iterates_the_turns_of_a_match() -> None:
    looping, using = {}, {}
    for name, path in modules():
        tree = ast.parse(path.read_text(), str(path))
        if lines := turn_loops(tree):
            looping[name] = lines
        used = {p for p in pieces_used(tree) if HOMES.get(p) != name}
        if used:
            using[name] = sorted(used)
    assert set(looping) - IN_PROCESS == {DRIVER}, f"turn loops outside {DRIVER}: {looping}"
    assert set(using) == {DRIVER}, f"the turn loop's pieces used outside {DRIVER}: {using}"


def test_the_checks_see_a_turn_loop() -> None:
    """The checker itself: it finds the driver's loop and the pieces it uses (or the test above proves nothing)."""
    tree = ast.parse((ROOT / "engine_service/driver.py").read_text())
    assert turn_loops(tree)
    assert pieces_used(tree) == PIECES
    assert not (ROOT / "engine_service/turns.py").exists()
