"""The container image holds every package the project installs, and the compose file runs anywhere.

deploy/Dockerfile copies each package folder by name, and its dockerignore file
lets only those through; a room added to pyproject.toml and not to these two
builds an image whose ``tablanette`` command cannot import (as happened: the
image lacked config, store, cli and four more rooms until it was built for real).

The compose file leaned on two things only Docker and the official Redis image
give, which running it with podman-compose showed (deploy/podman-compose-check.sh):
``$HOSTNAME`` in a container (podman sets none: every worker's health check
failed) and protected mode turned off by the Redis image's entrypoint (every
other service was refused).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

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


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "deploy/compose.yaml").read_text()))


def test_the_worker_health_check_asks_the_node_the_worker_names_itself_without_hostname_variables() -> None:
    worker = compose()["services"]["worker"]
    assert "worker@%h" in worker["command"]  # Celery's %h: the host name
    check = " ".join(worker["healthcheck"]["test"])
    assert "-d worker@$$(hostname)" in check, check
    assert "HOSTNAME" not in check


def test_redis_takes_the_other_services_whatever_its_image() -> None:
    command = compose()["services"]["redis"]["command"]
    assert command[command.index("--protected-mode") + 1] == "no"
    assert "ports" not in compose()["services"]["redis"]  # reached on the compose network only
