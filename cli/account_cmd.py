"""``tablanette account``: the operator's side of the front door (who may sign up, invites, suspensions).

People sign up and manage their own bots on the web or with ``tablanette remote``; these commands
work on the arena's Redis directly, so only its operator runs them.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer
from rich.table import Table

from store import printable
from store.accounts import POLICIES, AccountError, Accounts

from .common import console, redis_client

app = typer.Typer(help="Accounts: the sign-up policy, invite codes, listing, suspending and deleting accounts.")


def _accounts() -> Accounts:
    client, settings = redis_client()
    return Accounts(client, settings.prefix)


def _fail(exc: AccountError) -> None:
    console.print(printable.line(str(exc), 300), style="red", markup=False)
    raise typer.Exit(1)


@app.command()
def policy(
    value: Annotated[str | None, typer.Argument(help=f"One of {', '.join(POLICIES)}; none: show it.")] = None,
) -> None:
    """Show or set who may sign up: open (anyone), invite (a code you issue, used once), closed (nobody)."""
    accounts = _accounts()
    if value is not None:
        try:
            accounts.set_policy(value)
        except AccountError as exc:
            _fail(exc)
    console.print(f"sign-up: {accounts.policy()}")


@app.command()
def invite(count: Annotated[int, typer.Option(min=1, max=100, help="How many codes.")] = 1) -> None:
    """Issue invite codes (printed once; each signs up one account within 30 days)."""
    accounts = _accounts()
    if accounts.policy() != "invite":
        console.print(f"[yellow]note: sign-up is {accounts.policy()} now; codes count once it is invite[/yellow]")
    for _ in range(count):
        print(accounts.issue_invite())


@app.command("list")
def list_accounts() -> None:
    """Every account: its state, when it signed up and the bots it owns."""
    accounts = _accounts()
    table = Table("account", "state", "signed up", "bots")
    for a in accounts.all():
        when = dt.datetime.fromtimestamp(a.created, dt.UTC).strftime("%Y-%m-%d %H:%M")
        table.add_row(a.name, a.state, when, ", ".join(accounts.bots_of(a.key)) or "-")
    console.print(table)


@app.command()
def suspend(
    name: Annotated[str, typer.Argument(help="The account.")],
    reason: Annotated[str, typer.Option(help="Kept in the audit log.")] = "",
) -> None:
    """Suspend an account: its sessions end, its API keys are refused, its connected bots' tokens are revoked
    (they go offline); its results stay."""
    try:
        account = _accounts().suspend(name, reason)
    except AccountError as exc:
        _fail(exc)
    console.print(f"{account.name}: suspended")


@app.command()
def unsuspend(name: Annotated[str, typer.Argument(help="The account.")]) -> None:
    """Lift a suspension (its connected bots need new tokens: the owner rotates them)."""
    try:
        account = _accounts().unsuspend(name)
    except AccountError as exc:
        _fail(exc)
    console.print(f"{account.name}: active")


@app.command()
def delete(
    name: Annotated[str, typer.Argument(help="The account.")],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
) -> None:
    """Delete an account for good: password, sessions, keys and bot tokens go; its bots' names and results stay,
    and its name stays taken."""
    if not yes and not typer.confirm(f"delete account {name}?"):
        raise typer.Exit(1)
    try:
        _accounts().delete(name, by="operator")
    except AccountError as exc:
        _fail(exc)
    console.print(f"{name}: deleted")
