"""``tablanette records``: re-verify game records."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from engine_service.rules import RecordError, read_records, verify_record

from .common import console, err_console, fail

app = typer.Typer(help="Game records (tablanette-record/1, JSON Lines).", no_args_is_help=True)


@app.command()
def verify(
    file: Annotated[Path, typer.Argument(help="A JSON Lines file of records.", exists=True, dir_okay=False)],
    keep_going: Annotated[bool, typer.Option(help="Report every bad record, not just the first.")] = False,
) -> None:
    """Re-play every record with the engine; report the first discrepancy and its location."""
    good = bad = 0
    try:
        for lineno, record in read_records(file):
            try:
                verify_record(record)
                good += 1
            except RecordError as exc:
                bad += 1
                err_console.print(f"[bold red]{file}:{lineno}:[/] {exc}", highlight=False)
                if not keep_going:
                    break
    except RecordError as exc:
        fail(f"{file}: {exc}", code=1)
    if bad:
        err_console.print(
            f"{good} record(s) verified before a discrepancy" if not keep_going else f"{good} verified, {bad} failed",
            highlight=False,
        )
        raise typer.Exit(1)
    if not good:
        fail(f"{file} holds no records", code=1)
    console.print(f"[green]{good} record(s) verified[/] ({file})", highlight=False)
