"""``tablanette serve`` and ``tablanette bot add | list | revoke | run``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from store.tokens import BotTokens, TokenError

from .common import arena_settings, console, fail, redis_client

bot_app = typer.Typer(help="Register bots, issue and revoke tokens, run a built-in bot.", no_args_is_help=True)


def serve(
    host: Annotated[str | None, typer.Option(help="Interface to listen on (TABLANETTE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (TABLANETTE_PORT; 0 picks a free one).")] = None,
    advertise: Annotated[str | None, typer.Option(help="Address match runners use to reach this replica.")] = None,
    tls_cert: Annotated[str | None, typer.Option(help="TLS certificate file (PEM).")] = None,
    tls_key: Annotated[str | None, typer.Option(help="TLS private key file (PEM).")] = None,
) -> None:
    """Run the engine service: bot gateway, Rules API, health and reflection."""
    from engine_service.server import run

    run(arena_settings(host=host, port=port, advertise=advertise, tls_cert=tls_cert, tls_key=tls_key))


def _tokens() -> BotTokens:
    client, settings = redis_client()
    return BotTokens(client, settings.prefix)


@bot_app.command("add")
def add(name: str) -> None:
    """Register a bot and print its token (shown once; only a hash is stored)."""
    try:
        token = _tokens().add(name)
    except TokenError as exc:
        fail(str(exc))
    console.print(f"bot [bold]{name}[/] registered. Its token (shown only now):", highlight=False)
    print(token)


@bot_app.command("list")
def list_bots() -> None:
    """List registered bots."""
    table = Table(title="registered bots")
    for col in ("bot", "token", "status"):
        table.add_column(col)
    for info in _tokens().list():
        table.add_row(info.name, info.token_prefix + "…", "revoked" if info.revoked else "active")
    console.print(table)


@bot_app.command("revoke")
def revoke(name: str) -> None:
    """Revoke a bot's token: it can no longer connect."""
    try:
        _tokens().revoke(name)
    except TokenError as exc:
        fail(str(exc))
    console.print(f"bot {name}: token revoked", highlight=False)


@bot_app.command("run")
def run_bot(
    name: Annotated[str, typer.Argument(help="Built-in bot: random, greedy or strong.")],
    address: Annotated[str, typer.Option(envvar="TABLANETTE_ADDRESS")] = "127.0.0.1:50051",
    token: Annotated[str | None, typer.Option(envvar="TABLANETTE_TOKEN")] = None,
    as_name: Annotated[str | None, typer.Option("--as", help="Registered name, if not the built-in name.")] = None,
    max_games: Annotated[int, typer.Option(min=1)] = 4,
    ca: Annotated[str | None, typer.Option(help="CA certificate for TLS.")] = None,
) -> None:
    """Run a built-in bot against an engine service until stopped."""
    from bots.__main__ import run_builtin

    raise typer.Exit(run_builtin(name, address, token, as_name, max_games, None, ca))
