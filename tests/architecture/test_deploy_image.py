"""The container image holds every package the project installs.

deploy/Dockerfile copies each package folder by name, and its dockerignore file
lets only those through; a room added to pyproject.toml and not to these two
builds an image whose ``tablanette`` command cannot import (as happened: the
image lacked config, store, cli and four more rooms until it was built for real).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def packages() -> set[str]:
    """The top-level packages ``pip install .`` installs (pyproject's ``packages.find`` patterns)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    return {p.removesuffix("*") for p in patterns["include"]}


def test_the_dockerfile_copies_every_package() -> None:
    copied = set(re.findall(r"^COPY (\w+)/ \1/$", (ROOT / "deploy/Dockerfile").read_text(), re.M))
    assert copied == packages()


def test_the_build_context_lets_every_package_through() -> None:
    allowed = set(re.findall(r"^!(\w+)/$", (ROOT / "deploy/Dockerfile.dockerignore").read_text(), re.M))
    assert allowed == packages()
