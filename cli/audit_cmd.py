"""``tablanette audit``: the arena's audit log (logins, refusals, takeovers, revocations, quarantines)."""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer
from rich.table import Table

from store.audit import AuditLog

from .common import console, redis_client

SHOWN = ("event", "at", "bot", "peer", "league")
"""Columns of the table; every other field goes into ``details``."""


def audit(
    limit: Annotated[int, typer.Option(min=1, help="Newest events to show.")] = 50,
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            help="Only events of this kind: login, login_refused, takeover, rate_limited, token_issued, "
            "revoked, quarantined, lift_requested, quarantine_lifted, season_taken.",
        ),
    ] = None,
    bot: Annotated[str | None, typer.Option(help="Only events about this bot.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON Lines, newest first.")] = False,
) -> None:
    """Show the audit log, newest first: who logged in or was refused and why, takeovers, revocations, quarantines.

    The engine service, the workers and the CLI write it to Redis (the last
    10,000 events) and as JSON log lines (logger ``tablanette.audit``).
    """
    client, settings = redis_client()
    events = AuditLog(client, settings.prefix).recent(limit, kind, bot)
    if as_json:
        for e in events:
            print(json.dumps(e))
        return
    table = Table(title=f"audit log ({len(events)} newest)")
    for col in (*SHOWN, "details"):
        table.add_column(col)
    for e in events:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.get("at", 0)))
        details = "; ".join(f"{k}={v}" for k, v in e.items() if k not in SHOWN and v not in (None, ""))
        table.add_row(e.get("event", "?"), at, e.get("bot", ""), e.get("peer", ""), e.get("league", ""), details)
    console.print(table)
