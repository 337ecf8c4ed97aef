"""The archive of finished leagues: records out of Redis into Parquet, read back byte for byte.

Each league is played by the engine with built-in bots and committed by the ledger (archive_kit);
the archive and the exports run through the real ``tablanette`` CLI; the API is the real web app.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix
from fastapi.testclient import TestClient
from records_recipes import run_recipes

sys.path.insert(0, str(Path(__file__).resolve().parent))
import service_kit
from archive_kit import league_memory, played_league

from bots import make_bot, play_match
from cli.local import CLI
from engine_service.rules import Rules, dumps, match_record, read_records, verify_record
from store.archive import ROW_GROUP, SCHEMAS, ArchivedLeague, ArchiveError, Finished, write_dataset
from store.archiver import Archiver
from store.keys import ARCHIVE_FIELD, Keys
from store.results import LeagueResults
from web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
BOTS = ["ana", "bo", "cy", "dee", "eli", "fay"]


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[redis.Redis, str, Path]]:
    client = redis.Redis.from_url(REDIS_URL)
    prefix = unique_prefix("archive")
    yield client, prefix, tmp_path
    clear_prefix(client, prefix)
    client.close()


def cli(prefix: str, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TABLANETTE_REDIS_URL": REDIS_URL, "TABLANETTE_PREFIX": prefix}
    env["TABLANETTE_ARCHIVE_DIR"] = str(root / "archive")
    return subprocess.run([*CLI, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def api_answers(client: redis.Redis, prefix: str, league: str) -> dict[str, bytes]:
    """Every API answer that shows a record or a match of the league, as the bytes served."""
    web = TestClient(create_app(client, prefix))
    ids = LeagueResults(client, prefix).finished_ids(league, 1000)[0]
    paths = [f"/api/leagues/{league}", f"/api/leagues/{league}/matches?limit=100", f"/api/leagues/{league}/ladder"]
    paths += [f"/api/leagues/{league}/bots/{bot}" for bot in BOTS]
    paths += [f"/api/leagues/{league}/{what}/{mid}" for mid in ids for what in ("replays", "matches")]
    answers = {}
    for path in paths:
        got = web.get(path)
        assert got.status_code == 200, (path, got.text)
        answers[path] = got.content
    return answers


def test_an_archived_league_answers_byte_for_byte_as_before(arena: tuple[redis.Redis, str, Path]) -> None:
    client, prefix, tmp = arena
    n = played_league(client, prefix, "spring", Rules.preset("tablic"), BOTS)
    before_api = api_answers(client, prefix, "spring")
    assert (
        cli(prefix, tmp, "records", "export", "--league", "spring", "--out", str(tmp / "before.jsonl")).returncode == 0
    )
    results = LeagueResults(client, prefix)
    ids = LeagueResults(client, prefix).finished_ids("spring", 1000)[0]
    times = {mid: results.move_times("spring", mid) for mid in ids}
    assert all(times.values())  # the ledger kept the move times: the archive must keep them too
    before_memory = league_memory(client, prefix, "spring")

    done = cli(prefix, tmp, "league", "archive", "spring")
    assert done.returncode == 0, done.stderr
    assert f"{n} record(s) archived" in done.stdout

    keys = Keys(prefix).league("spring")
    assert not client.exists(keys.records)  # the records left Redis
    assert client.hget(keys.meta, ARCHIVE_FIELD) == str(tmp / "archive" / "spring").encode()
    assert api_answers(client, prefix, "spring") == before_api
    assert (
        cli(prefix, tmp, "records", "export", "--league", "spring", "--out", str(tmp / "after.jsonl")).returncode == 0
    )
    assert (tmp / "after.jsonl").read_bytes() == (tmp / "before.jsonl").read_bytes()
    assert sum(1 for _, rec in read_records(tmp / "after.jsonl") if verify_record(rec).is_over) == n
    assert {mid: LeagueResults(client, prefix).move_times("spring", mid) for mid in ids} == times
    again = cli(prefix, tmp, "league", "archive", "spring")
    assert again.returncode == 0 and "already archived" in again.stdout

    after_memory = league_memory(client, prefix, "spring")
    json_records = sum(len(line) for line in (tmp / "before.jsonl").read_bytes().splitlines())
    print(
        f"\n{n} matches: league in Redis {sum(before_memory.values()):,} B before archiving, "
        f"{sum(after_memory.values()):,} B after; records {before_memory[keys.records]:,} B as stored, "
        f"{json_records:,} B as JSON; archive {sum(p.stat().st_size for p in (tmp / 'archive/spring').iterdir()):,} B"
    )
    # Against the store of JSON records this league held before compact records (issue 26: 29.9 KB a match).
    json_store = sum(before_memory.values()) - before_memory[keys.records] + json_records
    assert sum(after_memory.values()) <= 0.05 * json_store


def test_a_league_of_json_records_drops_by_95_percent_in_redis(arena: tuple[redis.Redis, str, Path]) -> None:
    """A league stored before compact records (its records as JSON): archiving frees ≥ 95% of its memory."""
    client, prefix, tmp = arena
    played_league(client, prefix, "old", Rules.preset("tablic"), BOTS)
    results, keys = LeagueResults(client, prefix), Keys(prefix).league("old")
    for mid in results.finished_ids("old", 1000)[0]:
        record = results.record("old", mid)
        assert record is not None
        client.hset(keys.records, mid, dumps(record))  # as the ledger stored every record before
    before = [dumps(r) for r in results.records("old")]
    memory = sum(league_memory(client, prefix, "old").values())
    Archiver(client, prefix, tmp / "archive").archive("old")
    after = sum(league_memory(client, prefix, "old").values())
    print(
        f"\nJSON-era league: {memory:,} B in Redis before archiving, {after:,} B after ({1 - after / memory:.1%} less)"
    )
    assert after <= 0.05 * memory
    assert [dumps(r) for r in LeagueResults(client, prefix).records("old")] == before


STEPS = ("read", "wrote matches", "wrote deals", "wrote plays", "written", "renamed", "verified", "marked", "deleting")

KILLED_AT = """
import os, signal, sys
from pathlib import Path
import redis
from store.archiver import Archiver
url, prefix, root, step = sys.argv[1:5]
def checkpoint(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)
Archiver(redis.Redis.from_url(url), prefix, Path(root), checkpoint).archive("crash")
print("not killed")
"""


@pytest.mark.parametrize("step", STEPS)
def test_archiving_killed_at_any_step_loses_nothing_and_runs_again(
    arena: tuple[redis.Redis, str, Path], step: str
) -> None:
    client, prefix, tmp = arena
    n = played_league(client, prefix, "crash", Rules.preset("tablic", target=51), BOTS[:3])
    results = LeagueResults(client, prefix)
    before = [dumps(r) for r in results.records("crash")]
    root = tmp / "archive"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AT, REDIS_URL, prefix, str(root), step],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert [dumps(r) for r in LeagueResults(client, prefix).records("crash")] == before  # nothing lost
    report = Archiver(client, prefix, root).archive("crash")
    assert report.matches == n
    assert [dumps(r) for r in LeagueResults(client, prefix).records("crash")] == before
    assert not client.exists(Keys(prefix).league("crash").records)
    assert sorted(p.name for p in root.iterdir()) == ["crash"]  # no temporary folder left behind


def test_a_truncated_altered_or_newer_archive_is_refused_naming_the_file(arena: tuple[redis.Redis, str, Path]) -> None:
    client, prefix, tmp = arena
    played_league(client, prefix, "bad", Rules.preset("tablic", target=31), BOTS[:2])
    folder = Archiver(client, prefix, tmp / "archive").archive("bad").folder
    mid = LeagueResults(client, prefix).finished_ids("bad", 1)[0][0]
    matches, manifest = folder / "matches.parquet", folder / "manifest.json"
    good_bytes, good_manifest = matches.read_bytes(), manifest.read_text()

    matches.write_bytes(good_bytes[: len(good_bytes) // 2])  # truncated
    with pytest.raises(ArchiveError, match=re.escape(str(matches)) + ".*truncated"):
        LeagueResults(client, prefix).record("bad", mid)
    refused = cli(prefix, tmp, "records", "export", "--league", "bad", "--out", str(tmp / "x.jsonl"))
    assert refused.returncode == 2 and str(matches) in refused.stderr and "Traceback" not in refused.stderr

    # Truncated with a manifest that agrees (a copy cut short along with its manifest): Parquet refuses it.
    fixed = json.loads(good_manifest)
    fixed["sha256"]["matches"] = __import__("hashlib").sha256(matches.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(fixed))
    with pytest.raises(ArchiveError, match=re.escape(str(matches)) + ": truncated or not a Parquet file"):
        ArchivedLeague(folder)

    matches.write_bytes(good_bytes)
    manifest.write_text(good_manifest.replace('"version": 1', '"version": 2'))
    with pytest.raises(ArchiveError, match=re.escape(str(manifest)) + ": archive format version 2 is newer"):
        LeagueResults(client, prefix).record("bad", mid)

    # A file whose own schema says a newer version (the manifest agrees on its bytes).
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(matches)
    pq.write_table(table.replace_schema_metadata({b"tablanette-archive": b"2"}), matches)
    fixed["sha256"]["matches"] = __import__("hashlib").sha256(matches.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(fixed))
    with pytest.raises(ArchiveError, match=re.escape(str(matches)) + ": archive format version 2 is newer"):
        ArchivedLeague(folder)
    assert isinstance(table, pa.Table)

    (folder / "plays.parquet").unlink()
    with pytest.raises(ArchiveError, match=re.escape(str(folder / "plays.parquet")) + ": missing"):
        ArchivedLeague(folder)


def test_the_parquet_export_loads_in_duckdb_and_pandas_and_answers_the_documented_question(
    arena: tuple[redis.Redis, str, Path],
) -> None:
    pytest.importorskip("duckdb")
    pd = pytest.importorskip("pandas")
    client, prefix, tmp = arena
    played_league(client, prefix, "spring", Rules.preset("tablic", target=61), BOTS[:3])
    played_league(client, prefix, "pisti", Rules.preset("pisti"), BOTS[:2], games=4)
    Archiver(client, prefix, tmp / "archive").archive("pisti")  # one league exported from its archive
    out = tmp / "records"
    done = cli(prefix, tmp, "records", "export", "--format", "parquet", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["pisti", "spring"]

    for league in ("spring", "pisti"):
        for table in ("matches", "deals", "plays"):
            frame = pd.read_parquet(out / league / f"{table}.parquet")
            assert list(frame.columns) == SCHEMAS[table].names
        matches = pd.read_parquet(out / league / "matches.parquet")
        plays = pd.read_parquet(out / league / "plays.parquet")
        assert int(matches["plays"].sum()) == len(plays)
        assert plays["ms"].notna().all()

    rows, scope = run_recipes(tmp)  # the recipes read records/*/... from where they run
    by_preset = {preset: (deals, share) for preset, deals, share in rows}
    assert set(by_preset) == {"pisti", "tablic"}
    deals = pd.read_parquet(out / "spring" / "deals.parquet")
    decided = deals[deals["winner_team"].notna()]
    expected = round(float((decided["winner_team"] == decided["dealer_team"]).mean()), 3)
    assert by_preset["tablic"] == (len(decided), pytest.approx(expected))
    assert "median_ms" in str(scope["per_bot"])


def test_the_archiver_service_archives_each_league_when_it_is_due_and_keeps_running(
    arena: tuple[redis.Redis, str, Path],
) -> None:
    """`league archive --watch` (the deployments' archiver) as a real process: a league finished longer ago
    than TABLANETTE_ARCHIVE_AFTER_DAYS is archived by itself, a younger one is left until it is due too."""
    client, prefix, root = arena
    rules = Rules.preset("tablic", target=21)
    old = played_league(client, prefix, "old", rules, BOTS[:2], games=1, finished_at=time.time() - 3 * 86400)
    young = played_league(client, prefix, "young", rules, BOTS[:2], games=1, finished_at=time.time())
    env = {**os.environ, "TABLANETTE_REDIS_URL": REDIS_URL, "TABLANETTE_PREFIX": prefix}
    env |= {"TABLANETTE_ARCHIVE_DIR": str(root / "archive"), "TABLANETTE_ARCHIVE_AFTER_DAYS": "2"}
    watcher = subprocess.Popen(
        [*CLI, "league", "archive", "--watch", "--every", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    meta = {name: Keys(prefix).league(name).meta for name in ("old", "young")}
    try:
        service_kit.wait_until(lambda: client.hexists(meta["old"], ARCHIVE_FIELD), 120, "league old archived")
        time.sleep(2.5)  # two more looks: the young league is not due
        assert not client.hexists(meta["young"], ARCHIVE_FIELD)
        client.hset(meta["young"], "finished_at", time.time() - 2.5 * 86400)  # now it is
        service_kit.wait_until(lambda: client.hexists(meta["young"], ARCHIVE_FIELD), 120, "league young archived")
        # The archiver marks the league archived and only then deletes its Redis copy: wait for the deletion.
        records = Keys(prefix).league("young").records
        service_kit.wait_until(lambda: not client.hlen(records), 60, "league young's Redis records deleted")
        assert watcher.poll() is None, "the archiver stopped"
        assert len(list(LeagueResults(client, prefix).records("young"))) == young  # read from the archive
    finally:
        watcher.kill()
        out, _ = watcher.communicate(timeout=30)
    assert f"league old: {old} record(s) archived" in out and f"league young: {young} record(s) archived" in out, out


def test_a_league_larger_than_a_batch_is_written_a_row_group_at_a_time_and_reads_back(tmp_path: Path) -> None:
    """The archive streams: ROW_GROUP matches at a time are read, written and let go (no league is held
    in memory whole), and every record of every row group reads back by its id and in order."""
    rules = Rules.preset("tablic", target=11)
    count = 2 * ROW_GROUP + 7
    seen: list[int] = []

    def matches() -> Iterator[Finished]:
        for i in range(count):
            seen.append(i)
            match = play_match(rules, f"big/{i}", [make_bot("greedy", f"{i}a"), make_bot("random", f"{i}b")])
            rec = match_record(match, ["a", "b"], f"big/m{i}")
            yield Finished(i, f"m{i}", rec, {"round": "1", "elo": "[1.0,-1.0]"}, None)

    manifest = write_dataset(tmp_path / "big", "big", matches(), lambda step: None)
    assert manifest["rows"]["matches"] == count == len(seen)
    archived = ArchivedLeague(tmp_path / "big")
    archived.verify()
    assert pq.ParquetFile(tmp_path / "big" / "matches.parquet").num_row_groups == 3
    lines = list(archived.record_lines())
    assert len(lines) == count and [json.loads(line)["id"] for line in lines] == [f"big/m{i}" for i in range(count)]
    for i in (0, ROW_GROUP - 1, ROW_GROUP, count - 1):
        assert archived.record_json(f"m{i}") == lines[i]
