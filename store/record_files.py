"""Record files as the Parquet dataset, with no arena: ``tablanette records export --format parquet FILE...``.

A bot author holds JSON Lines files of ``tablanette-record/1`` records (what
``tablanette match`` and ``selfplay --records`` write, or a league's ``records
export --format jsonl``). :func:`export_file` makes one of them the dataset a
league's export is (:mod:`store.archive`: ``matches``, ``deals`` and ``plays``
tables and a manifest), in a folder named after the file, so the DuckDB and
pandas recipes of docs/records.md read it unchanged. Its ``league`` column is
the folder's name, each ``match_id`` its record's ``id`` and each
``plan_index`` its place in the file; what only an arena knows is null:
``round``, ``elo``, the timings, ``worker``, ``move_ms`` and each play's
``ms`` (a record keeps no move times).

Each record's shape is checked (:func:`engine_service.rules.parse_record`), not
re-played: ``tablanette records verify FILE`` does that, at tens of
milliseconds a game.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine_service.rules import RecordError, parse_record, read_records

from .archive import Finished, write_dataset
from .archiver import put_in_place


def dataset_name(path: Path) -> str:
    """The folder (and ``league``) a file's dataset is named by: its name without its suffix."""
    return path.stem or path.name


def export_file(path: Path, out: Path) -> dict[str, Any]:
    """Write the records of ``path`` as a dataset into the folder ``out`` (replaced if it exists); its manifest.

    A record that is not one (a bad line, a misshapen field, a second game of the same id) is a
    :class:`RecordError` naming its line, and nothing is written."""
    out = out.resolve()
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        manifest = write_dataset(tmp, out.name, _finished(path), lambda step: None)
        if not manifest["rows"]["matches"]:
            raise RecordError(f"{path} holds no records")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    put_in_place(tmp, out)
    return manifest


def _finished(path: Path) -> Iterator[Finished]:
    seen: set[str] = set()
    for index, (lineno, raw) in enumerate(read_records(path)):
        try:
            record = parse_record(raw)
        except RecordError as exc:
            raise RecordError(f"line {lineno}: {exc}") from None
        game = record["id"]
        if game in seen:
            raise RecordError(f"line {lineno}: a second record of game {game!r} (a dataset holds each game once)")
        seen.add(game)
        yield Finished(index, game, record, {}, None)
