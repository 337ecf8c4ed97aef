"""The archive of finished leagues: their records moved out of Redis into Parquet files on disk.

A finished league's records are most of what it keeps in Redis (a two-player
match's record is nearly all of its bytes) and are read only by replays,
exports and the API. :class:`store.archiver.Archiver` moves them to one dataset per league, a
folder of Parquet files (written with pyarrow):

| file | one row per |
|---|---|
| ``matches.parquet`` | finished match: plan place, rules, bots, seed, result, score, Elo, timings, ``record`` |
| ``deals.parquet`` | deal: its dealer and the dealer's team, the deal's score and winning team, the leftover |
| ``plays.parquet`` | play: its deal and turn, seat, bot, team, card, captured cards, bonus, timeout, move time |
| ``manifest.json`` | the format version, the league, the row counts, each file's SHA-256 and the records' digest |

:data:`SCHEMAS` has every column and type; docs/records.md describes them.

The ``record`` column holds each match's ``tablanette-record/1`` JSON exactly as
:func:`engine_service.rules.dumps` writes it, so the archive is lossless: a
replay, an export or an API answer reads the same bytes as before archiving
(:class:`store.results.LeagueResults` reads an archived league through
:class:`ArchivedLeague`; no caller knows). The other columns are the dataset a
bot author loads into DuckDB or pandas (docs/records.md). The ladder, outcomes,
stats, rating histories and match rows stay in Redis.

Archiving is crash-safe: the files are written into a temporary folder,
fsynced, renamed into place and verified (row counts, file hashes and every
record's bytes) before the league is marked archived in Redis; only then are
its records deleted from Redis. Killed at any step, the league loses nothing
(before the mark Redis holds every record; after it the archive does) and
:meth:`store.archiver.Archiver.archive` runs again from where it stands.

A file that is truncated, altered or written by a newer format version is
refused with an :class:`ArchiveError` that names the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from engine_service.rules import GameRecord, Rules, dumps, parse_record

FORMAT = "tablanette-archive"
VERSION = 1
"""The archive format this code writes and the newest it reads."""
TABLES = ("matches", "deals", "plays")
MANIFEST = "manifest.json"
ARCHIVABLE = ("finished", "incomplete", "cancelled")
ROW_GROUP = 128
"""Matches per row group: a replay reads one group of records, not the whole file."""
_META_KEY = FORMAT.encode()


class ArchiveError(ValueError):
    """An archive that cannot be written or read; the message names the league or the file."""


Checkpoint = Callable[[str], None]
"""Called with the name of each step as :meth:`store.archiver.Archiver.archive` reaches it (tests crash there)."""


# ------------------------------------------------------------------ the dataset


def _schemas() -> dict[str, pa.Schema]:
    """The three tables' schemas, each stamped with the format version (:data:`VERSION`)."""
    meta = {_META_KEY: str(VERSION).encode()}
    fields = {"matches": _match_fields(), "deals": _deal_fields(), "plays": _play_fields()}
    return {name: pa.schema(fields[name], metadata=meta) for name in TABLES}


def _match_fields() -> list[tuple[str, pa.DataType]]:
    """The columns of ``matches.parquet``, one row per finished match."""
    s, i8, i16, i32 = pa.string(), pa.int8(), pa.int16(), pa.int32()
    return [
        ("league", s),
        ("match_id", s),
        ("plan_index", i32),
        ("round", i32),
        ("preset", s),
        ("rules", s),
        ("players", i8),
        ("bots", pa.list_(s)),
        ("teams", pa.list_(pa.list_(i8))),
        ("seed", s),
        ("winner", i8),
        ("reason", s),
        ("forfeit_seat", i8),
        ("score", pa.list_(i32)),
        ("elo", pa.list_(pa.float64())),
        ("deals", i16),
        ("plays", i32),
        ("queued_at", pa.float64()),
        ("started_at", pa.float64()),
        ("finished_at", pa.float64()),
        ("worker", s),
        ("move_ms", pa.list_(i32)),
        ("record", s),
    ]


def _deal_fields() -> list[tuple[str, pa.DataType]]:
    """The columns of ``deals.parquet``, one row per deal."""
    s, i8, i16, i32 = pa.string(), pa.int8(), pa.int16(), pa.int32()
    return [
        ("league", s),
        ("match_id", s),
        ("deal", i16),
        ("dealer", i8),
        ("dealer_team", i8),
        ("score", pa.list_(i32)),
        ("winner_team", i8),
        ("leftover_team", i8),
        ("leftover", pa.list_(s)),
    ]


def _play_fields() -> list[tuple[str, pa.DataType]]:
    """The columns of ``plays.parquet``, one row per play."""
    s, i8, i16, i32 = pa.string(), pa.int8(), pa.int16(), pa.int32()
    return [
        ("league", s),
        ("match_id", s),
        ("deal", i16),
        ("turn", i16),
        ("seat", i8),
        ("bot", s),
        ("team", i8),
        ("card", s),
        ("captured", pa.list_(s)),
        ("bonus", i16),
        ("timeout", pa.bool_()),
        ("ms", i32),
    ]


SCHEMAS = _schemas()


@dataclass(frozen=True)
class Finished:
    """One finished match as the dataset stores it: its record and its row in Redis."""

    plan_index: int
    match_id: str
    record: GameRecord
    row: Mapping[str, str]
    times_ms: Sequence[int] | None = None
    """Each play's move time in ms, in play order (None: not kept)."""


def dataset_rows(league_id: str, matches: Iterable[Finished]) -> dict[str, dict[str, list[Any]]]:
    """The three tables' columns for a league's finished matches."""
    cols: dict[str, dict[str, list[Any]]] = {t: {f.name: [] for f in SCHEMAS[t]} for t in TABLES}
    for m in matches:
        _add_match(cols, league_id, m)
    return cols


def _add_match(cols: dict[str, dict[str, list[Any]]], league_id: str, m: Finished) -> None:
    rec = m.record
    rules = Rules.from_record(rec["rules"], players=len(rec["players"]))
    team_of = [rules.team_of(s) for s in range(rules.players)]
    mid = m.match_id
    times = list(m.times_ms) if m.times_ms is not None else None
    plays = 0
    for k, deal in enumerate(rec["deals"]):
        score = list(deal["score"])
        best = max(score) if score else 0
        leaders = [t for t, p in enumerate(score) if p == best]
        left = deal["leftover"] or {"team": None, "cards": []}
        _append(
            cols["deals"],
            league=league_id,
            match_id=mid,
            deal=k,
            dealer=deal["dealer"],
            dealer_team=team_of[deal["dealer"]],
            score=score,
            winner_team=leaders[0] if len(leaders) == 1 else None,
            leftover_team=left["team"],
            leftover=list(left["cards"]),
        )
        for turn, p in enumerate(deal["plays"]):
            _append(
                cols["plays"],
                league=league_id,
                match_id=mid,
                deal=k,
                turn=turn,
                seat=p["seat"],
                bot=rec["players"][p["seat"]],
                team=team_of[p["seat"]],
                card=p["card"],
                captured=list(p["captured"]),
                bonus=p["bonus"],
                timeout=bool(p.get("auto", False)),
                ms=times[plays] if times is not None and plays < len(times) else None,
            )
            plays += 1
    _add_match_row(cols["matches"], league_id, m, plays, times)


def _add_match_row(
    cols: dict[str, list[Any]], league_id: str, m: Finished, plays: int, times: list[int] | None
) -> None:
    """The match's own row: its place in the plan, rules, bots, result, Elo, timings and record."""
    rec, row = m.record, m.row
    result = rec["result"]
    _append(
        cols,
        league=league_id,
        match_id=m.match_id,
        plan_index=m.plan_index,
        round=_int(row.get("round")),
        preset=str(rec["rules"].get("preset", "")),
        rules=json.dumps(rec["rules"], separators=(",", ":")),
        players=len(rec["players"]),
        bots=list(rec["players"]),
        teams=[list(t) for t in rec["teams"]],
        seed=rec["seed"],
        winner=result["winner"],
        reason=result["reason"],
        forfeit_seat=result.get("forfeit_seat"),
        score=list(rec["score"]),
        elo=[float(x) for x in json.loads(row["elo"])] if row.get("elo") else None,
        deals=len(rec["deals"]),
        plays=plays,
        queued_at=_float(row.get("queued_at")),
        started_at=_float(row.get("started_at")),
        finished_at=_float(row.get("finished_at")),
        worker=row.get("worker") or None,
        move_ms=times,
        record=dumps(rec),
    )


def _append(columns: dict[str, list[Any]], **values: Any) -> None:
    for name, value in values.items():
        columns[name].append(value)


def _int(value: str | None) -> int | None:
    return int(value) if value else None


def _float(value: str | None) -> float | None:
    return float(value) if value else None


def records_digest(lines: Iterable[str]) -> str:
    """SHA-256 over the records' JSON lines in order: what the archive's verification compares."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
        h.update(b"\n")
    return h.hexdigest()


def write_dataset(folder: Path, league_id: str, matches: Iterable[Finished], checkpoint: Checkpoint) -> dict[str, Any]:
    """Write the league's dataset into ``folder`` (created; must not exist), every file fsynced,
    the manifest last; returns the manifest.

    ``matches`` is read once, :data:`ROW_GROUP` matches at a time, each batch written as a row group
    of each table: a league of any size is archived in the memory of one batch."""
    folder.mkdir(parents=True)
    paths = {name: folder / f"{name}.parquet" for name in TABLES}
    writers = {
        name: pq.ParquetWriter(paths[name], SCHEMAS[name], compression="zstd", compression_level=9) for name in TABLES
    }
    rows = dict.fromkeys(TABLES, 0)
    digest = hashlib.sha256()
    try:
        for batch in _batches(matches, ROW_GROUP):
            cols = dataset_rows(league_id, batch)
            for line in cols["matches"]["record"]:
                digest.update(line.encode() + b"\n")
            for name in TABLES:
                table = pa.Table.from_pydict(cols[name], schema=SCHEMAS[name])
                writers[name].write_table(table, row_group_size=max(table.num_rows, 1))
                rows[name] += table.num_rows
    finally:
        for writer in writers.values():
            writer.close()
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "league": league_id,
        "created_at": round(time.time(), 3),
        "rows": {},
        "sha256": {},
        "records_sha256": digest.hexdigest(),
    }
    for name in TABLES:
        checkpoint(f"wrote {name}")
        fsync(paths[name])
        manifest["rows"][name] = rows[name]
        manifest["sha256"][name] = _sha256(paths[name])
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    fsync(folder / MANIFEST)
    fsync(folder)
    return manifest


def _batches(items: Iterable[Finished], size: int) -> Iterator[list[Finished]]:
    batch: list[Finished] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ------------------------------------------------------------------ reading


class ArchivedLeague:
    """One league's archive folder, read: its records by match id or in plan order.

    Opening checks the manifest (format and version), each file's SHA-256 and
    each file's own format version; a missing, truncated or altered file or a
    newer version is an :class:`ArchiveError` naming the file.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest = _read_manifest(folder / MANIFEST)
        for name in TABLES:
            path = folder / f"{name}.parquet"
            if not path.is_file():
                raise ArchiveError(f"{path}: missing from the archive")
            if _sha256(path) != self.manifest["sha256"][name]:
                raise ArchiveError(f"{path}: its bytes differ from the manifest's SHA-256 (truncated or altered)")
        self._matches = _open_parquet(folder / "matches.parquet")
        self._index: dict[str, tuple[int, int]] = {}
        ids = self._matches.read(columns=["match_id"]).column(0).to_pylist()
        sizes = [self._matches.metadata.row_group(g).num_rows for g in range(self._matches.num_row_groups)]
        g = row = 0
        for mid in ids:
            while row >= sizes[g]:
                g, row = g + 1, 0
            self._index[mid] = (g, row)
            row += 1
        self._group: tuple[int, list[str], list[list[int] | None]] | None = None

    def __contains__(self, match_id: object) -> bool:
        return match_id in self._index

    def __len__(self) -> int:
        return len(self._index)

    def record_json(self, match_id: str) -> str | None:
        """The match's record as stored (the JSON line), or None if the archive has no such match."""
        at = self._index.get(match_id)
        if at is None:
            return None
        return self._row(*at)[0]

    def move_times(self, match_id: str) -> tuple[int, ...] | None:
        """Each play's move time in ms, as the store kept it (None: no such match, or none were kept)."""
        at = self._index.get(match_id)
        times = None if at is None else self._row(*at)[1]
        return None if times is None else tuple(times)

    def _row(self, group: int, row: int) -> tuple[str, list[int] | None]:
        # One local: the web's threads share this object, and another may swap the cached group meanwhile.
        cached = self._group
        if cached is None or cached[0] != group:
            cached = self._group = (group, self._record_group(group), self._column(group, "move_ms"))
        return cached[1][row], cached[2][row]

    def record(self, match_id: str) -> GameRecord | None:
        raw = self.record_json(match_id)
        return None if raw is None else parse_record(json.loads(raw))

    def record_lines(self) -> Iterator[str]:
        """Every record's JSON line in plan order, a row group at a time."""
        for g in range(self._matches.num_row_groups):
            yield from self._record_group(g)

    def _record_group(self, group: int) -> list[str]:
        return [str(x) for x in self._column(group, "record")]

    def _column(self, group: int, name: str) -> list[Any]:
        try:
            return list(self._matches.read_row_group(group, columns=[name]).column(0).to_pylist())
        except (OSError, pa.ArrowException) as exc:
            raise ArchiveError(f"{self.folder / 'matches.parquet'}: row group {group} does not read: {exc}") from None

    def verify(self) -> None:
        """Re-read every record and compare with the manifest's counts and digest."""
        rows = self.manifest["rows"]
        for name in TABLES:
            got = _open_parquet(self.folder / f"{name}.parquet").metadata.num_rows
            if got != rows[name]:
                raise ArchiveError(f"{self.folder / name}.parquet: {got} rows, the manifest says {rows[name]}")
        if records_digest(self.record_lines()) != self.manifest["records_sha256"]:
            raise ArchiveError(f"{self.folder / 'matches.parquet'}: its records differ from the manifest's digest")


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArchiveError(f"{path}: missing (the archive was never completed)") from None
    except (OSError, ValueError) as exc:
        raise ArchiveError(f"{path}: not a readable manifest: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ArchiveError(f"{path}: not a {FORMAT} manifest")
    _check_version(path, data.get("version"))
    for field in ("rows", "sha256", "records_sha256", "league"):
        if field not in data:
            raise ArchiveError(f"{path}: missing field {field!r}")
    return data


def _check_version(path: Path, version: object) -> None:
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ArchiveError(f"{path}: archive format version {version!r} is not valid")
    if version > VERSION:
        raise ArchiveError(
            f"{path}: archive format version {version} is newer than this arena reads ({VERSION}); "
            "upgrade tablanette to read it"
        )


def _open_parquet(path: Path) -> pq.ParquetFile:
    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise ArchiveError(f"{path}: truncated or not a Parquet file ({exc})") from None
    meta = pf.schema_arrow.metadata or {}
    if _META_KEY not in meta:
        raise ArchiveError(f"{path}: not a {FORMAT} file (no format version in its schema)")
    try:
        version: object = int(meta[_META_KEY])
    except ValueError:
        version = meta[_META_KEY].decode(errors="replace")
    _check_version(path, version)
    return pf


class ArchiveShelf:
    """Opened archives, reused while their manifest is unchanged (one per reading process)."""

    LIMIT = 16

    def __init__(self) -> None:
        self._open: dict[str, tuple[int, ArchivedLeague]] = {}

    def open(self, folder: str) -> ArchivedLeague:
        path = Path(folder)
        try:
            stamp = (path / MANIFEST).stat().st_mtime_ns
        except OSError:
            raise ArchiveError(f"{path / MANIFEST}: missing (the league is marked archived there)") from None
        held = self._open.get(folder)
        if held is not None and held[0] == stamp:
            return held[1]
        if len(self._open) >= self.LIMIT:
            self._open.clear()
        archived = ArchivedLeague(path)
        self._open[folder] = (stamp, archived)
        return archived


SHELF = ArchiveShelf()
"""The archives this process has opened (every reader shares them)."""
