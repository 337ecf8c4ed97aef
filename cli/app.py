"""The ``tablanette`` Typer app: the root options, and each command loaded when it runs."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from typer._click.core import Command, Context  # Typer's own click


def _league(module: Any) -> None:
    from . import archive_cmd, ladder_cmd, season_cmd  # they read a league's results: they live under `league`

    module.app.command("ladder")(ladder_cmd.ladder)
    module.app.command("los")(ladder_cmd.los)
    module.app.command("archive")(archive_cmd.archive)
    module.app.command("season")(season_cmd.season)
    module.app.command("seasons")(season_cmd.seasons)


def _records(module: Any) -> None:
    from . import archive_cmd  # `records export` pulls a league's records from the store or its archive

    module.app.command("export")(archive_cmd.export)


def _bot(module: Any) -> None:
    from . import hosting_cmd  # hosted bots: submitted, built and run by the arena

    module.bot_app.command("submit")(hosting_cmd.submit)
    module.bot_app.command("versions")(hosting_cmd.versions)
    module.bot_app.command("version")(hosting_cmd.version)
    module.bot_app.command("owner-key")(hosting_cmd.owner_key)
    module.bot_app.command("output")(hosting_cmd.output)


def _remote(module: Any) -> None:
    from . import remote_bots  # an author's bots and the ladders, over the arena's web API

    module.app.command("bots")(remote_bots.bots)
    module.app.add_typer(remote_bots.bot_app, name="bot")
    module.app.command("ladder")(remote_bots.ladder)
    module.app.add_typer(module.key_app, name="key")


COMMANDS: dict[str, tuple[str, str, Callable[[Any], None] | None]] = {
    "rules": ("rules_cmd", "app", None),
    "records": ("records_cmd", "app", _records),
    "selfplay": ("selfplay_cmd", "selfplay", None),
    "match": ("match_cmd", "match", None),
    "replay": ("replay_cmd", "replay", None),
    "demo": ("demo_cmd", "demo", None),
    "serve": ("service_cmd", "serve", None),
    "up": ("up_cmd", "up", None),
    "web": ("web_cmd", "web", None),
    "bot": ("service_cmd", "bot_app", _bot),
    "host": ("hosting_cmd", "host", None),
    "audit": ("audit_cmd", "audit", None),
    "account": ("account_cmd", "app", None),
    "league": ("league_cmd", "app", _league),
    "login": ("remote_cmd", "login", None),
    "logout": ("remote_cmd", "logout", None),
    "remote": ("remote_cmd", "app", _remote),
}
"""Each command: (module in this package, its Typer app or function, wiring to do once loaded)."""


class LazyCommands(TyperGroup):
    """Imports a command's module only when that command runs (or help lists it).

    ``tablanette rules captures --batch`` then starts without the ladder's SciPy,
    Redis, gRPC or Celery, which only other commands need.
    """

    _loaded: ClassVar[dict[str, Command]] = {}
    """Each command once loaded (a module wires its commands once)."""

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self._loaded:
            module_name, attr, wire = COMMANDS[cmd_name]
            module = importlib.import_module(f"{__package__}.{module_name}")
            if wire is not None:
                wire(module)
            target = getattr(module, attr)
            if not isinstance(target, typer.Typer):
                target = typer.Typer()
                target.command(cmd_name)(getattr(module, attr))
            command = typer.main.get_command(target)
            command.name = cmd_name
            self._loaded[cmd_name] = command
        return self._loaded[cmd_name]


app = typer.Typer(
    name="tablanette",
    cls=LazyCommands,
    help="Tablanette Arena: rules engine, bots, tournaments and the Elo ladder.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def arena(
    prefix: Annotated[
        str | None, typer.Option(help="The arena's Redis key prefix (TABLANETTE_PREFIX; default tablanette).")
    ] = None,
    redis_url: Annotated[
        str | None, typer.Option(help="The arena's Redis (TABLANETTE_REDIS_URL; default redis://127.0.0.1:6379/0).")
    ] = None,
) -> None:
    """Tablanette Arena: rules engine, bots, tournaments and the Elo ladder.

    Every command works on one arena: one Redis and one key prefix, from the
    options before the command or the environment (every process it starts
    inherits them).
    """
    if prefix is not None:
        os.environ["TABLANETTE_PREFIX"] = prefix
    if redis_url is not None:
        os.environ["TABLANETTE_REDIS_URL"] = redis_url
