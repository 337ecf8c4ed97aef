"""Moving finished leagues to the archive (:mod:`store.archive`): write, verify, mark, delete.

:meth:`Archiver.archive` reads a finished league's records through
:class:`store.results.LeagueResults` (whatever form Redis stores them in), writes
its dataset into a temporary folder, fsyncs and renames it into place, verifies
it (row counts, file hashes, every record's bytes), marks the league archived in
Redis (the meta field :data:`store.keys.ARCHIVE_FIELD`) and only then deletes
its records from Redis. Killed at any step it loses nothing, and run again it
finishes the job (``checkpoint`` names each step; the tests kill it there).

:meth:`Archiver.export` writes the same dataset anywhere (``records export --format parquet``).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from .archive import (
    ARCHIVABLE,
    ArchivedLeague,
    ArchiveError,
    Checkpoint,
    Finished,
    fsync,
    write_dataset,
)
from .codec import text, text_map
from .embargo import Embargo
from .keys import ARCHIVE_FIELD, Keys
from .results import LeagueResults


@dataclass
class ArchiveReport:
    league: str
    folder: Path
    matches: int
    bytes_on_disk: int
    records_deleted: int
    already: bool = False


class Archiver:
    """Moves finished leagues' records from Redis to the archive under ``root`` (one folder per league)."""

    def __init__(self, client: redis.Redis, prefix: str, root: Path, checkpoint: Checkpoint | None = None) -> None:
        self.r = client
        self.prefix = prefix
        self.root = root.resolve()
        self.checkpoint: Checkpoint = checkpoint or (lambda step: None)

    def folder(self, league_id: str) -> Path:
        return self.root / league_id

    def archive(self, league_id: str) -> ArchiveReport:
        """Archive the league (or finish an archive a crash cut short); safe to run any number of times."""
        keys = Keys(self.prefix).league(league_id)
        meta = text_map(self.r.hgetall(keys.meta))
        if not meta:
            raise ArchiveError(f"no league named {league_id!r}")
        if meta.get(ARCHIVE_FIELD):  # marked: the archive is complete, only the deletion may be left
            folder = Path(meta[ARCHIVE_FIELD])
            archived = ArchivedLeague(folder)
            deleted = self._delete_records(league_id, archived)
            return ArchiveReport(league_id, folder, len(archived), _size(folder), deleted, already=deleted == 0)
        status = meta.get("status", "")
        busy = int(self.r.scard(keys.queued)) + int(self.r.scard(keys.running))
        if status not in ARCHIVABLE or busy:
            raise ArchiveError(
                f"league {league_id!r} is {status}{f' with {busy} match(es) in flight' if busy else ''}: "
                f"only a league that is {', '.join(ARCHIVABLE)} with nothing in flight can be archived"
            )
        folder = self.folder(league_id)
        self._clear_leftovers(league_id)
        tmp = self.root / f".{league_id}.tmp-{os.getpid()}"
        self.checkpoint("read")
        written = write_dataset(tmp, league_id, self.finished(league_id), self.checkpoint)["rows"]["matches"]
        self.checkpoint("written")
        put_in_place(tmp, folder)  # a complete archive from a run that crashed before the mark is replaced
        fsync(self.root)
        self.checkpoint("renamed")
        archived = ArchivedLeague(folder)
        archived.verify()
        stored = int(self.r.hlen(keys.records))
        if len(archived) != written or stored != written:
            raise ArchiveError(
                f"league {league_id!r}: {len(archived)} records archived, {written} read, "
                f"{stored} in Redis: not marked archived"
            )
        self.checkpoint("verified")
        self.r.hset(keys.meta, mapping={ARCHIVE_FIELD: str(folder), "archived_at": f"{time.time():.3f}"})
        self.checkpoint("marked")
        deleted = self._delete_records(league_id, archived)
        return ArchiveReport(league_id, folder, len(archived), _size(folder), deleted)

    def finished(self, league_id: str, released_only: bool = False) -> Iterator[Finished]:
        """Every finished match with a record, in plan order: its record (as the store serves it) and row;
        ``released_only`` leaves out the games held back while a game of their deal is not over (an export
        shows no card still hidden; the archive, which moves every record, takes them all)."""
        keys = Keys(self.prefix).league(league_id)
        results = LeagueResults(self.r, self.prefix)
        archived = results.archived(league_id)
        stored = {text(m) for m in self.r.hkeys(keys.records)}
        plan = [text(m) for m in self.r.lrange(keys.plan, 0, -1)]
        done = [(i, mid) for i, mid in enumerate(plan) if mid in stored or (archived is not None and mid in archived)]
        if stored - set(plan):
            stray = sorted(stored - set(plan))[:3]
            raise ArchiveError(f"league {league_id!r}: records of matches not in its plan ({', '.join(stray)})")
        embargo = Embargo(self.r, self.prefix)
        for start in range(0, len(done), 500):
            chunk = done[start : start + 500]
            if released_only:
                holds = embargo.holds(league_id, [mid for _, mid in chunk])
                chunk = [(i, mid) for i, mid in chunk if mid not in holds]
            pipe = self.r.pipeline(transaction=False)
            for _, mid in chunk:
                pipe.hgetall(keys.match(mid))
            rows = [text_map(raw) for raw in pipe.execute()]
            for (i, mid), row in zip(chunk, rows, strict=True):
                rec = results.record(league_id, mid)
                if rec is None:
                    raise ArchiveError(f"league {league_id!r}: the record of {mid} vanished while archiving")
                yield Finished(i, mid, rec, row, results.move_times(league_id, mid))

    def export(self, league_id: str, out: Path) -> dict[str, Any]:
        """Write the league's dataset to ``out`` (replaced if it exists), from Redis or its archive."""
        if not self.r.exists(Keys(self.prefix).league(league_id).meta):
            raise ArchiveError(f"no league named {league_id!r}")
        out = out.resolve()
        tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        manifest = write_dataset(tmp, league_id, self.finished(league_id, released_only=True), self.checkpoint)
        put_in_place(tmp, out)
        return manifest

    def _delete_records(self, league_id: str, archived: ArchivedLeague) -> int:
        """Delete from Redis the records the archive holds (a record it lacks stays)."""
        keys = Keys(self.prefix).league(league_id)
        held = [text(m) for m in self.r.hkeys(keys.records)]
        gone = [m for m in held if m in archived]
        for start in range(0, len(gone), 1000):
            self.r.hdel(keys.records, *gone[start : start + 1000])
            self.checkpoint("deleting")
        return len(gone)

    def _clear_leftovers(self, league_id: str) -> None:
        """Remove temporary folders an earlier run left (that run was killed before its mark)."""
        if not self.root.exists():
            self.root.mkdir(parents=True)
        for stale in self.root.glob(f".{league_id}.*-*"):
            if stale.name.startswith((f".{league_id}.tmp-", f".{league_id}.old-")):
                shutil.rmtree(stale, ignore_errors=True)

    def due(self, older_than_days: float, now: float | None = None) -> list[str]:
        """Leagues not yet archived that finished more than ``older_than_days`` ago."""
        cutoff = (now if now is not None else time.time()) - older_than_days * 86400
        out = []
        for lid in sorted(text(x) for x in self.r.smembers(Keys(self.prefix).leagues)):
            meta = text_map(self.r.hgetall(Keys(self.prefix).league(lid).meta))
            finished_at = float(meta.get("finished_at") or 0)
            if meta.get("status") in ARCHIVABLE and not meta.get(ARCHIVE_FIELD) and 0 < finished_at <= cutoff:
                out.append(lid)
        return out


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def put_in_place(tmp: Path, dest: Path) -> None:
    """Rename the finished folder ``tmp`` to ``dest``, replacing what is there (moved aside first, then removed)."""
    if dest.exists():
        old = dest.parent / f".{dest.name}.old-{os.getpid()}"
        dest.rename(old)
        tmp.rename(dest)
        shutil.rmtree(old)
    else:
        tmp.rename(dest)
