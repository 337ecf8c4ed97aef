"""``bot.toml``: what a submitted bot is and how to build and run it.

A bot's folder holds its source and this small manifest::

    language = "python"          # informational: python, node, cpp, perl, ...
    protocol = "jsonlines"       # "jsonlines": stdin/stdout (docs/jsonlines.md), one run per game
                                 # "grpc": a long-running SDK client, reached through a socket
    run = ["python3", "bot.py"]  # the command, as seen inside the sandbox (its folder is /bot)
    build = ["make"]             # optional: run once, in a sandbox, before the bot plays

    [resources]                  # optional, each at most the arena's ceiling
    memory_mb = 256
    pids = 32
    cpus = 1.0
    max_games = 2                # games at once

>>> m = Manifest.parse('protocol = "jsonlines"\\nrun = ["perl", "greedy.pl"]\\nlanguage = "perl"')
>>> m.run, m.build, m.memory_mb
(['perl', 'greedy.pl'], [], 256)
>>> Manifest.parse('run = "python3 bot.py"')
Traceback (most recent call last):
...
hosting.manifest.ManifestError: bot.toml: "run" must be a list of strings, e.g. run = ["python3", "bot.py"]
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILE = "bot.toml"
PROTOCOLS = ("jsonlines", "grpc")
CEILING = {"memory_mb": 1024, "pids": 128, "cpus": 2.0, "max_games": 8}
"""The most a manifest may ask for."""
DEFAULTS: dict[str, float] = {"memory_mb": 256, "pids": 32, "cpus": 1.0, "max_games": 2}
"""What a manifest gets for what it does not ask for (the same as :class:`Manifest`'s defaults)."""


class ManifestError(ValueError):
    """A missing or wrong ``bot.toml``; the message says what to write."""


@dataclass(frozen=True)
class Manifest:
    language: str
    protocol: str
    run: list[str]
    build: list[str] = field(default_factory=list)
    memory_mb: int = 256
    pids: int = 32
    cpus: float = 1.0
    max_games: int = 2

    @classmethod
    def parse(cls, text: str) -> Manifest:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ManifestError(f"{FILE} is not valid TOML: {exc}") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, folder: str | Path) -> Manifest:
        path = Path(folder) / FILE
        if not path.is_file():
            raise ManifestError(
                f"{folder} has no {FILE}: write one with at least protocol and run, "
                'e.g. protocol = "jsonlines" and run = ["python3", "bot.py"] (see docs/hosting.md)'
            )
        return cls.parse(path.read_text(encoding="utf-8"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        known = {"language", "protocol", "run", "build", "resources", "name"}
        if unknown := sorted(set(data) - known):
            raise ManifestError(f"{FILE}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        protocol = data.get("protocol", "jsonlines")
        if protocol not in PROTOCOLS:
            raise ManifestError(f'{FILE}: "protocol" must be one of {", ".join(PROTOCOLS)}, not {protocol!r}')
        run = _argv(data, "run", required=True)
        build = _argv(data, "build", required=False)
        language = data.get("language", "")
        if not isinstance(language, str):
            raise ManifestError(f'{FILE}: "language" must be a string')
        res = data.get("resources", {})
        if not isinstance(res, dict):
            raise ManifestError(f"{FILE}: [resources] must be a table")
        if unknown := sorted(set(res) - set(CEILING)):
            raise ManifestError(f"{FILE}: unknown resource(s) {', '.join(unknown)}; known: {', '.join(CEILING)}")
        values: dict[str, Any] = {}
        for key, ceiling in CEILING.items():
            value = res.get(key, DEFAULTS[key])
            kind = float if key == "cpus" else int
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and value != int(value)):
                raise ManifestError(f"{FILE}: resources.{key} must be a number, not {value!r}")
            if not 0 < value <= ceiling:
                raise ManifestError(f"{FILE}: resources.{key} = {value} is outside 0..{ceiling}")
            values[key] = kind(value)
        return cls(language=language, protocol=protocol, run=run, build=build, **values)

    def to_dict(self) -> dict[str, Any]:
        """The manifest as ``bot.toml`` holds it (what :meth:`from_dict` reads back).

        >>> m = Manifest.parse('run = ["./bot"]\\n[resources]\\npids = 8')
        >>> Manifest.from_dict(m.to_dict()) == m, m.to_dict()["resources"]["pids"]
        (True, 8)
        """
        data: dict[str, Any] = {"language": self.language, "protocol": self.protocol, "run": list(self.run)}
        if self.build:
            data["build"] = list(self.build)
        data["resources"] = {key: getattr(self, key) for key in CEILING}
        return data


def _argv(data: dict[str, Any], key: str, required: bool) -> list[str]:
    value = data.get(key)
    if value is None:
        if required:
            raise ManifestError(f'{FILE}: "{key}" is missing: the command that runs the bot, e.g. {key} = ["./bot"]')
        return []
    if not isinstance(value, list) or not value or not all(isinstance(a, str) and a for a in value):
        example = '["python3", "bot.py"]' if key == "run" else '["make"]'
        raise ManifestError(f'{FILE}: "{key}" must be a list of strings, e.g. {key} = {example}')
    return list(value)
