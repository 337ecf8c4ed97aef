"""``tablanette serve`` and ``tablanette bot add | list | revoke | run | bridge``."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from store.sessions import read_session
from store.tokens import BotTokens, TokenError

from .common import arena_settings, console, err_console, fail, redis_client

bot_app = typer.Typer(
    help="Register bots, issue and revoke tokens, run a built-in bot or bridge a program.", no_args_is_help=True
)


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
    err_console.print(
        f"bot [bold]{name}[/] registered. Its token (shown only now; give it to the bot as TABLANETTE_TOKEN):",
        highlight=False,
    )
    print(token)  # alone on standard output: TABLANETTE_TOKEN=$(tablanette bot add NAME) works


@bot_app.command("list")
def list_bots(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List registered bots: token status, and where each is connected now."""
    client, settings = redis_client()
    rows = []
    for info in BotTokens(client, settings.prefix).list():
        session = read_session(client, settings.prefix, info.name)
        rows.append(
            {
                "bot": info.name,
                "token": info.token_prefix + "…",
                "status": "revoked" if info.revoked else "active",
                "connected": session.replica if session else None,
                "version": session.version if session else None,
            }
        )
    if as_json:
        print(json.dumps(rows))
        return
    table = Table(title="registered bots")
    for col in ("bot", "token", "status", "connected to", "version"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["bot"], r["token"], r["status"], r["connected"] or "-", r["version"] or "-")
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
    name: Annotated[
        str, typer.Argument(help="Built-in bot: random, greedy or strong, with parameters if any (greedy:eps=0.05).")
    ],
    address: Annotated[
        str, typer.Option(envvar="TABLANETTE_ADDRESS", help="Engine service replicas, comma-separated.")
    ] = "127.0.0.1:50051",
    token: Annotated[str | None, typer.Option(envvar="TABLANETTE_TOKEN")] = None,
    as_name: Annotated[str | None, typer.Option("--as", help="Registered name, if not the built-in name.")] = None,
    max_games: Annotated[int, typer.Option(min=1)] = 4,
    ca: Annotated[str | None, typer.Option(help="CA certificate for TLS.")] = None,
) -> None:
    """Run a built-in bot against an engine service until stopped."""
    from bots.__main__ import run_builtin

    raise typer.Exit(run_builtin(name, address, token, as_name, max_games, None, ca))


@bot_app.command("bridge", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
def bridge(
    command: Annotated[list[str], typer.Argument(help="The program and its arguments, after `--`.")],
    as_name: Annotated[str, typer.Option("--as", help="The bot's registered name.")],
    address: Annotated[
        str, typer.Option(envvar="TABLANETTE_ADDRESS", help="Engine service replicas, comma-separated.")
    ] = "127.0.0.1:50051",
    token: Annotated[str | None, typer.Option(envvar="TABLANETTE_TOKEN")] = None,
    max_games: Annotated[int, typer.Option(min=1, help="Games at once (one run of the program each).")] = 4,
    version: Annotated[str, typer.Option(help="A version label for the records.")] = "",
    ca: Annotated[str | None, typer.Option(help="CA certificate for TLS.")] = None,
    sandbox: Annotated[
        bool, typer.Option(help="Run each game's program in a sandbox (bubblewrap + cgroups; needs root).")
    ] = False,
    folder: Annotated[str, typer.Option("--dir", help="With --sandbox: the program's folder, seen as /bot.")] = ".",
    memory_mb: Annotated[int, typer.Option(min=16, help="With --sandbox: memory per run, MB.")] = 256,
    pids: Annotated[int, typer.Option(min=1, help="With --sandbox: processes and threads per run.")] = 32,
    cpus: Annotated[float, typer.Option(min=0.01, help="With --sandbox: CPU share per run, cores.")] = 1.0,
) -> None:
    """Play as NAME through a program that speaks JSON lines on stdin/stdout (docs/jsonlines.md).

    Example: `tablanette bot bridge --as perly -- perl bots/jsonlines/greedy.pl`.
    One run of the program per game; it needs no gRPC library. With --sandbox:
    `tablanette bot bridge --as perly --sandbox --dir bots/jsonlines -- perl greedy.pl`.
    """
    from programs.bridge import run_bridge
    from programs.sandbox import Limits

    limits = Limits(memory_mb=memory_mb, pids=pids, cpus=cpus) if sandbox else None
    raise typer.Exit(run_bridge(command, as_name, address, token, max_games, ca, version, limits, folder))
