"""Helpers shared by the CLI commands: rule options and error reporting."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from engine_service.rules import DEFAULT_PRESET, Rules, TablanetteError, parse_override

if TYPE_CHECKING:  # Redis and the settings load when a command needs them, not at start-up
    import redis

    from config import ArenaSettings

PIPE_WIDTH = 10_000
"""Columns when output is not a terminal: tables and lines are never cut for a log or a pipe."""
console = Console(width=None if sys.stdout.isatty() else PIPE_WIDTH)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else PIPE_WIDTH)

PresetOpt = Annotated[str, typer.Option("--preset", "-p", help="Rules preset (see `tablanette rules presets`).")]
PlayersOpt = Annotated[int, typer.Option("--players", "-n", help="Number of seats (2, 3 or 4).")]
RuleOpt = Annotated[
    list[str] | None,
    typer.Option("--rule", "-r", help="Override a rule parameter: name=value (repeatable), e.g. target=51."),
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a clear error and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def arena_settings(**overrides: object) -> ArenaSettings:
    """The arena's settings; invalid ones exit with a message naming the variable."""
    from config import SettingsError, load_settings

    try:
        return load_settings(**overrides)
    except SettingsError as exc:
        fail(str(exc))


def redis_client() -> tuple[redis.Redis, ArenaSettings]:
    """The configured Redis, checked; an unreachable one exits with a clear message."""
    import redis

    from store.client import connect, redacted

    settings = arena_settings()
    try:
        client = connect(settings.redis_url)  # a redis+sentinel:// URL too (an unknown master: a clear error)
        client.ping()
    except redis.RedisError as exc:
        fail(f"cannot reach Redis at {redacted(settings.redis_url)}: {exc}")
    return client, settings


def build_rules(preset: str = DEFAULT_PRESET, players: int = 2, rule: list[str] | None = None) -> Rules:
    """Rules from the common options; a bad preset or override exits with a clear message."""
    try:
        overrides = dict(parse_override(text) for text in rule or [])
        return Rules.preset(preset, players=players).with_overrides(overrides)
    except TablanetteError as exc:
        fail(str(exc))
