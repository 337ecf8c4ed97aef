"""The ``tablanette`` command line: one app, one module per command group."""

from __future__ import annotations

import typer

from . import demo_cmd, league_cmd, records_cmd, rules_cmd, selfplay_cmd, service_cmd, up_cmd, web_cmd

app = typer.Typer(
    name="tablanette",
    help="Tablanette Arena: rules engine, bots, tournaments and the Elo ladder.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(rules_cmd.app, name="rules")
app.add_typer(records_cmd.app, name="records")
app.command("selfplay")(selfplay_cmd.selfplay)
app.command("demo")(demo_cmd.demo)
app.command("serve")(service_cmd.serve)
app.command("up")(up_cmd.up)
app.command("web")(web_cmd.web)
app.add_typer(service_cmd.bot_app, name="bot")
app.add_typer(league_cmd.app, name="league")
records_cmd.app.command("export")(league_cmd.export)


def main() -> None:
    app()
