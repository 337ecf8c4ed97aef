"""What the arena lends a hosted bot's sandbox: its SDKs and protocol files, read-only.

A submitted folder need not carry the arena's SDK: the Python SDK (``bots``
with what it imports: the pure rules engine ``engine_service.rules`` and the
wire conversion ``engine_service.wire.convert`` (:data:`ENGINE_PARTS`; never the engine
service itself: its gateway, server or admission), the generated ``tablanette.v1``
code, ``grpc`` and ``protobuf``) is seen at ``/sdk/python`` (on
``PYTHONPATH``), the Node.js gRPC packages at ``/sdk/node/node_modules`` (on
``NODE_PATH``), and the ``.proto`` files at ``/sdk/proto``
(``TABLANETTE_PROTO_DIR``, which the Node.js and C++ examples read). Builds see
the same, so a C++ bot compiles its gRPC code from them with the machine's
``libgrpc++``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import ModuleType

import google.protobuf
import grpc
import typing_extensions

import bots
import engine_service.rules
import tablanette

ENV = {
    "PYTHONPATH": "/sdk/python",
    "PYTHONDONTWRITEBYTECODE": "1",
    "NODE_PATH": "/sdk/node/node_modules",
    "TABLANETTE_PROTO_DIR": "/sdk/proto",
}


ENGINE_PARTS = ("__init__.py", "py.typed", "rules", "wire")
"""What of ``engine_service`` the Python SDK imports (tests/architecture/test_layers.py checks it is enough)."""


def _folder(module: ModuleType) -> Path:
    assert module.__file__ is not None
    return Path(module.__file__).resolve().parent


def sources() -> dict[str, Path]:
    """Where each part lives on this machine, by its place under ``/sdk`` (for what this machine has); of
    ``engine_service`` only :data:`ENGINE_PARTS` are staged, by :func:`stage`."""
    found = {
        "python/bots": _folder(bots),
        "python/tablanette": _folder(tablanette),
        "python/grpc": _folder(grpc),
        "python/google": _folder(google.protobuf).parent,
    }
    root = _folder(bots).parent
    for inside, folder in (("node/node_modules", root / "bots/node/node_modules"), ("proto", root / "proto")):
        if folder.is_dir():
            found[inside] = folder
    return found


def files() -> dict[str, Path]:
    """Single-file modules the Python SDK needs, by their place under ``/sdk``."""
    assert typing_extensions.__file__ is not None  # grpc.aio imports it
    return {"python/typing_extensions.py": Path(typing_extensions.__file__)}


def stage(into: str | Path) -> Path:
    """Copy the SDKs into ``into`` (what the host binds at ``/sdk``), readable by the sandbox's user.

    A copy, not the originals: they may lie where the sandbox's user cannot reach
    (a checkout in a private folder), and nothing a bot does can touch them.
    """
    target = Path(into)
    if target.exists():
        shutil.rmtree(target)
    skip = shutil.ignore_patterns("__pycache__", "node_modules", "build", "*.pyc")
    for inside, path in files().items():
        (target / inside).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target / inside)
    for inside, folder in sources().items():
        keep_all = inside == "node/node_modules"
        shutil.copytree(folder, target / inside, ignore=None if keep_all else skip, symlinks=True)
    engine = _folder(engine_service.rules).parent  # the package's folder, without importing the service
    for part in ENGINE_PARTS:
        source, copy = engine / part, target / "python/engine_service" / part
        if source.is_dir():
            shutil.copytree(source, copy, ignore=skip)
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, copy)
    for dirpath, _dirs, filenames in os.walk(target):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            file = os.path.join(dirpath, name)
            if not os.path.islink(file):
                os.chmod(file, os.stat(file).st_mode | 0o444)
    return target
