"""The recipes of docs/records.md, run as the docs show them: what the docs show is what runs."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from cli.local import ROOT


def doc_block(marker: str, language: str) -> str:
    """The code block after ``<!-- marker -->`` in docs/records.md."""
    text = (ROOT / "docs/records.md").read_text()
    found = re.search(rf"<!-- {marker} -->\s*```{language}\n(.*?)```", text, re.S)
    assert found, f"docs/records.md has no {language} block after <!-- {marker} -->"
    return found.group(1)


def run_recipes(where: Path) -> tuple[list[Any], dict[str, object]]:
    """Run the DuckDB query and the pandas example from ``where`` (they read ``records/*/...`` from where they
    run): the query's rows, and what the example left in its scope."""
    import duckdb

    os.chdir(where)
    try:
        rows = duckdb.sql(doc_block("dealer-query", "sql")).fetchall()
        scope: dict[str, object] = {}
        exec(doc_block("pandas-example", "python"), scope)
    finally:
        os.chdir(ROOT)
    return rows, scope
