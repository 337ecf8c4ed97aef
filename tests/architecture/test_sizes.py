"""One module, one idea: no module of the project over 500 lines, no function over 60.

Counted over the project's own code: every room but the generated protobuf code, the tests and the
benchmarks. The functions still over 60 lines are named in :data:`LONG_FUNCTIONS` with their length
today: none may grow, and no other may join them (a ratchet: shorten one, then lower or drop its entry).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("engine_service", "bots", "worker", "scheduler", "hosting", "web", "cli", "store", "config", "telemetry")
MODULE_LINES = 500
FUNCTION_LINES = 60
LONG_FUNCTIONS: dict[str, int] = {}
"""The functions over :data:`FUNCTION_LINES` lines today (``path:name``), at most as long as this."""


def sources() -> Iterator[Path]:
    for top in ROOMS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if not {"node_modules", "build"} & set(path.relative_to(ROOT).parts):
                yield path


def functions(path: Path) -> Iterator[tuple[str, int]]:
    """``(name, lines)`` of every function and method in ``path``, nested ones included."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            yield node.name, node.end_lineno - node.lineno + 1


def test_no_module_over_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sources() if (n := len(p.read_text().splitlines())) > MODULE_LINES}
    assert not long, f"modules over {MODULE_LINES} lines (split each by idea): {long}"


def test_no_function_over_60_lines_but_the_known_ones_and_none_grows() -> None:
    found = {f"{p.relative_to(ROOT)}:{name}": n for p in sources() for name, n in functions(p) if n > FUNCTION_LINES}
    grown = {k: (n, LONG_FUNCTIONS[k]) for k, n in found.items() if k in LONG_FUNCTIONS and n > LONG_FUNCTIONS[k]}
    new = {k: n for k, n in found.items() if k not in LONG_FUNCTIONS}
    assert not new, f"functions over {FUNCTION_LINES} lines (split them): {new}"
    assert not grown, f"known long functions that grew (now, allowed): {grown}"
    gone = sorted(set(LONG_FUNCTIONS) - set(found))
    assert not gone, f"shortened or gone: drop them from LONG_FUNCTIONS, so they stay short: {gone}"


def test_the_counts_see_a_long_module_and_a_long_function(tmp_path: Path) -> None:
    """The counters themselves (or the tests above prove nothing)."""
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    path = tmp_path / "long.py"
    path.write_text(f"def long():\n{body}\n" + "\n" * MODULE_LINES)
    assert dict(functions(path)) == {"long": FUNCTION_LINES + 1}
    assert len(path.read_text().splitlines()) > MODULE_LINES
