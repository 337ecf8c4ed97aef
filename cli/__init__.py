"""The ``tablanette`` command line: one app, one module per command group."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from . import (
    audit_cmd,
    demo_cmd,
    ladder_cmd,
    league_cmd,
    records_cmd,
    rules_cmd,
    selfplay_cmd,
    service_cmd,
    up_cmd,
    web_cmd,
)

app = typer.Typer(
    name="tablanette",
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


app.add_typer(rules_cmd.app, name="rules")
app.add_typer(records_cmd.app, name="records")
app.command("selfplay")(selfplay_cmd.selfplay)
app.command("demo")(demo_cmd.demo)
app.command("serve")(service_cmd.serve)
app.command("up")(up_cmd.up)
app.command("web")(web_cmd.web)
app.add_typer(service_cmd.bot_app, name="bot")
app.command("audit")(audit_cmd.audit)
league_cmd.app.command("ladder")(ladder_cmd.ladder)
league_cmd.app.command("los")(ladder_cmd.los)
app.add_typer(league_cmd.app, name="league")
records_cmd.app.command("export")(league_cmd.export)


def main() -> None:
    app()
