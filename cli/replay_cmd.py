"""``tablanette replay``: the replay viewer on a record file, with no arena running."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from engine_service.rules import GameRecord, RecordError, TablanetteError, read_records, verify_record
from store import printable

from .common import console, fail


def replay(
    file: Annotated[Path, typer.Argument(help="A JSON Lines file of records (tablanette match writes one).")],
    game: Annotated[
        str, typer.Option("--match", "-m", help="Which record: its number in the file (1 is the first) or its id.")
    ] = "1",
    out: Annotated[
        Path | None, typer.Option(help="The page to write (default: beside FILE, named after it and the record).")
    ] = None,
    open_it: Annotated[bool, typer.Option("--open", help="Open the page in this machine's browser too.")] = False,
) -> None:
    """Write one record's replay as a page any browser opens from disk (no server, nothing else needed).

    The record is checked by the rules engine first (`tablanette records verify`); its frames and its
    luck curve are computed here, as the web ladder computes them.
    """
    from web.replay_file import replay_html  # the page's pieces live with the web ladder's

    if not file.is_file():
        fail(f"{file}: no such file")
    number, record = _pick(file, game)
    try:
        verify_record(record)
    except RecordError as exc:
        fail(f"{file}: record {number} is not a game record the engine can re-play: {printable.line(str(exc))}")
    try:
        page = replay_html(cast(GameRecord, record), file.name)
    except TablanetteError as exc:
        fail(f"{file}: record {number} does not replay: {printable.line(str(exc))}")
    target = out or file.with_name(f"{file.stem}.replay-{number}.html")
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {target}: {exc}")
    url = target.resolve().as_uri()
    players = ", ".join(printable.line(str(p)) for p in record.get("players", []))
    console.print(f"record {number} of {file} ({players}): {url}", highlight=False, markup=False)
    if open_it and not webbrowser.open(url):
        console.print("no browser could be opened here: open the page above yourself", highlight=False)


def _pick(file: Path, wanted: str) -> tuple[int, dict[str, Any]]:
    """The record ``wanted`` names (a number counting from 1, or a record id) and its number."""
    by_number = int(wanted) if wanted.isdigit() else None
    if by_number is not None and by_number < 1:
        fail(f"--match {wanted}: records are numbered from 1")
    count = 0
    try:
        for count, (_line, record) in enumerate(read_records(file), 1):
            if count == by_number or (by_number is None and record.get("id") == wanted):
                return count, record
    except (RecordError, UnicodeDecodeError) as exc:
        fail(f"{file} does not hold records: {printable.line(str(exc))}")
    if not count:
        fail(f"{file} holds no records")
    what = f"no record {by_number}" if by_number is not None else f"no record with the id {wanted!r}"
    fail(f"{file}: {what} (it holds {count} record(s))")
