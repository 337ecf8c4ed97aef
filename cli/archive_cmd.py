"""``tablanette league archive`` and ``tablanette records export``: finished leagues out of Redis, datasets out.

``league archive NAME`` moves a finished league's records to the archive
(``TABLANETTE_ARCHIVE_DIR``, Parquet; :mod:`store.archive`); ``league archive
--older-than DAYS`` archives every league finished that long ago (once, as from
cron); ``league archive --watch`` keeps doing so, every ``--every`` seconds, for
leagues finished ``TABLANETTE_ARCHIVE_AFTER_DAYS`` ago (the deployments' archiver
service). Replays, exports and the API read an archived league as before.

``records export`` writes a league's records as JSON Lines (``--format jsonl``,
for ``records verify``) or the Parquet dataset of one league or of all of them
(``--format parquet``: a folder per league under ``--out``; docs/records.md);
given record files (``tablanette match``'s), the dataset of each, with no arena
(:mod:`store.record_files`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import redis
import typer

from engine_service.rules import RecordError, write_records
from store.codec import text
from store.keys import Keys
from store.leagues import LeagueError
from store.results import LeagueResults

from .common import console, fail, redis_client

if TYPE_CHECKING:
    from store.archiver import Archiver

FORMATS = ("jsonl", "parquet")


def archiver() -> Archiver:
    """The archiver (with PyArrow, loaded here: every `league` command loads this module, few archive)."""
    from store.archiver import Archiver

    client, settings = redis_client()
    return Archiver(client, settings.prefix, Path(settings.archive_dir))


def archive(
    name: Annotated[str | None, typer.Argument(help="The league to archive (or use --older-than).")] = None,
    older_than: Annotated[
        float | None, typer.Option(min=0, help="Archive every league finished at least this many days ago.")
    ] = None,
    watch: Annotated[
        bool,
        typer.Option(
            help="Keep running: every --every seconds, archive each league finished --older-than days ago "
            "(default TABLANETTE_ARCHIVE_AFTER_DAYS). What a deployment runs as its archiver service."
        ),
    ] = False,
    every: Annotated[float, typer.Option(min=1, help="With --watch: seconds between two looks.")] = 600.0,
) -> None:
    """Move a finished league's records from Redis to the archive (Parquet under TABLANETTE_ARCHIVE_DIR).

    The ladder, outcomes and stats stay in Redis; replays, exports and the API read the records from
    the archive as before. Safe to run again, also after a crash.
    """
    if watch:
        if name is not None:
            fail("--watch archives every league that is due; name none")
        _, settings = redis_client()
        _watch(older_than if older_than is not None else settings.archive_after_days, every)
        return
    if (name is None) == (older_than is None):
        fail("name one league, or give --older-than DAYS (not both), or --watch")
    arch = archiver()
    names = [name] if name is not None else arch.due(older_than or 0)
    if not names:
        console.print(f"no league finished {older_than:g} day(s) ago or more is left to archive", highlight=False)
    failed = _archive_each(arch, names)
    if failed:
        fail(f"{len(failed)} league(s) not archived: {', '.join(failed)} (nothing of them was lost; run it again)")


def _archive_each(arch: Archiver, names: list[str]) -> list[str]:
    """Archive each league, saying what became of it; the leagues that could not be archived."""
    from store.archive import ArchiveError

    failed = []
    for league in names:
        try:
            report = arch.archive(league)
        except (ArchiveError, RecordError, OSError) as exc:  # one league's trouble stops no other's
            console.print(f"league {league}: not archived: {exc}", highlight=False, markup=False)
            failed.append(league)
            continue
        if report.already:
            console.print(f"league {league}: already archived in {report.folder}", highlight=False)
            continue
        console.print(
            f"league {league}: {report.matches} record(s) archived in {report.folder} "
            f"({report.bytes_on_disk:,} bytes); {report.records_deleted} removed from Redis",
            highlight=False,
        )
    return failed


def _watch(days: float, every: float) -> None:
    """Archive what is due, then again every ``every`` seconds, for good. A league that fails is tried
    again next time; Redis away (a restart, a failover) is waited for; nothing needs a person."""
    arch = archiver()
    console.print(f"archiving every league finished {days:g} day(s) ago, looking every {every:g} s", highlight=False)
    while True:
        try:
            _archive_each(arch, arch.due(days))
        except redis.RedisError as exc:
            console.print(f"Redis unreachable ({exc}); looking again in {every:g} s", highlight=False, markup=False)
        time.sleep(every)


def export(
    out: Annotated[Path, typer.Option(help="A file (jsonl), or a folder of one dataset per league (parquet).")],
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Record files (JSON Lines: what `tablanette match` writes) to make Parquet datasets of, with no "
            "arena: one folder under --out per file, named after it (--format parquet).",
            exists=True,
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    league: Annotated[str | None, typer.Option(help="The league to export (parquet: default every league).")] = None,
    format: Annotated[str, typer.Option(help="jsonl (records, for `records verify`) or parquet (dataset).")] = "jsonl",
) -> None:
    """Export game records: a league's as JSON Lines, or the Parquet dataset (docs/records.md) of the arena's
    leagues or of record files on this machine."""
    if format not in FORMATS:
        fail(f"unknown format {format!r}; one of: {', '.join(FORMATS)}")
    if files:
        _export_files(files, out, format, league)
        return
    if format == "jsonl":
        if league is None:
            fail("--format jsonl exports one league: give --league NAME")
        _export_jsonl(league, out)
        return
    from store.archive import ArchiveError

    arch = archiver()
    names = [league] if league is not None else sorted(text(m) for m in arch.r.smembers(Keys(arch.prefix).leagues))
    if not names:
        fail("there are no leagues to export")
    failed = []
    for name in names:
        try:
            manifest = arch.export(name, out / name)
        except (ArchiveError, RecordError, LeagueError, OSError) as exc:  # the other leagues are still exported
            console.print(f"league {name}: not exported: {exc}", highlight=False, markup=False)
            failed.append(name)
            continue
        rows = manifest["rows"]
        console.print(
            f"league {name}: {rows['matches']} match(es), {rows['deals']} deal(s), {rows['plays']} play(s) "
            f"written to {out / name}",
            highlight=False,
        )
    if failed:
        fail(f"{len(failed)} league(s) not exported: {', '.join(failed)}")


def _export_files(files: list[Path], out: Path, format: str, league: str | None) -> None:
    """Each record file as a dataset of its own under ``out`` (:mod:`store.record_files`); no Redis."""
    from store.record_files import dataset_name, export_file

    if format != "parquet":
        fail("record files are JSON Lines already: give --format parquet to make datasets of them")
    if league is not None:
        fail("--league exports an arena's league; record files are named by their file names")
    names = [dataset_name(f) for f in files]
    if len(set(names)) != len(names):
        fail(f"two files would make the same dataset folder (named by the file): {', '.join(names)}")
    for path, name in zip(files, names, strict=True):
        try:
            manifest = export_file(path, out / name)
        except RecordError as exc:
            fail(f"{path}: {exc} (nothing written for it; `tablanette records verify {path}` checks every record)")
        except (KeyError, IndexError, TypeError, ValueError, OSError) as exc:
            fail(f"{path}: a record in it cannot be read ({exc}); `tablanette records verify {path}` names it")
        rows = manifest["rows"]
        console.print(
            f"{path}: {rows['matches']} game(s), {rows['deals']} deal(s), {rows['plays']} play(s) written to "
            f"{out / name}",
            highlight=False,
            markup=False,
        )


def _export_jsonl(league: str, out: Path) -> None:
    from store.archive import ArchiveError

    client, settings = redis_client()
    try:
        records = LeagueResults(client, settings.prefix).records(league)
        with out.open("w", encoding="utf-8") as fh:
            n = write_records(records, fh)
    except (LeagueError, ArchiveError, RecordError) as exc:
        fail(str(exc))
    console.print(f"{n} record(s) written to {out}", highlight=False)
