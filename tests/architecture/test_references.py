"""No reference in the repository points to a file that is not in it.

Checked: Markdown links, ``*.md`` names anywhere in the docs and code, and
repository paths written in backticks in the docs (``engine_service/rules/``,
``scripts/test.sh``). A user following any of them must find the file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", ".venv", ".hypothesis", ".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__"}
SKIP_DIRS |= {"node_modules", "build", "var", "artifacts"}
TEXT_SUFFIXES = {".md", ".py", ".proto", ".js", ".cpp", ".h", ".sh", ".toml", ".yaml", ".yml", ".service", ".env"}
ROOM_PREFIXES = (
    "engine_service/",
    "store/",
    "worker/",
    "scheduler/",
    "web/",
    "cli/",
    "config/",
    "bots/",
    "proto/",
    "tablanette/",
    "tests/",
    "bench/",
    "deploy/",
    "docs/",
    "scripts/",
)


def repo_files() -> list[Path]:
    out = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts):
            continue
        if path.is_file():
            out.append(path)
    return out


FILES = repo_files()
NAMES = {p.name for p in FILES}
TEXTS = [p for p in FILES if p.suffix in TEXT_SUFFIXES or p.name in ("Dockerfile", "README")]


def exists(base: Path, target: str) -> bool:
    target = target.split("#", 1)[0]
    return (base / target).exists() or (ROOT / target.lstrip("/")).exists()


@pytest.mark.parametrize("path", [p for p in TEXTS if p.suffix == ".md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_links_and_paths_resolve(path: Path) -> None:
    text = path.read_text(errors="ignore")
    bad = []
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = m.group(1)
        if "://" in target or target.startswith(("mailto:", "#")):
            continue
        if not exists(path.parent, target):
            bad.append(f"link to {target}")
    for m in re.finditer(r"`([A-Za-z0-9_./-]+)`", text):
        target = m.group(1).rstrip(".")
        if target.startswith(ROOM_PREFIXES) and "*" not in target and not exists(ROOT, target):
            bad.append(f"path `{target}`")
    assert not bad, f"{path.relative_to(ROOT)}: " + "; ".join(bad)


def test_every_named_markdown_file_is_in_the_repository() -> None:
    bad = []
    for path in TEXTS:
        if "_pb2" in path.name:
            continue
        for m in re.finditer(r"(?<![\w/.-])([A-Za-z0-9_-]+\.md)\b", path.read_text(errors="ignore")):
            if m.group(1) not in NAMES:
                bad.append(f"{path.relative_to(ROOT)} names {m.group(1)}")
    assert not bad, "; ".join(sorted(set(bad)))


def test_the_checker_sees_the_docs() -> None:
    assert {"README.md", "rules.md", "records.md"} <= NAMES
    assert any(p.name == "README.md" and p.parent == ROOT for p in TEXTS)
