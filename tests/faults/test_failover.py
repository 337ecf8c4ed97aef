"""Redis behind Sentinels: the primary killed mid-league, a replica promoted, and the arena follows by itself.

A primary, two replicas and three Sentinels of the test's own (:mod:`sentinel_kit`);
the arena of the fault tests (two engine replicas, three workers, six bots, a
scheduler) is given only the Sentinels' addresses, and every commit waits for one
replica (``TABLANETTE_REDIS_WAIT_REPLICAS=1``; two replicas, so the promoted
primary still has one). The primary is SIGKILLed while matches run; nobody
touches anything after that. The league must finish with every match counted
exactly once, every record verified and no bot charged (:meth:`FaultArena.check_clean`).
The times to the promotion and to the victims' commits are printed and written
to artifacts/fault-recovery.txt.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import unique_prefix
from fault_kit import REPORT, FaultArena, wait_until
from sentinel_kit import MASTER, SentinelGroup

from bots import make_bot, play_match
from cli.local import CLI, ROOT, LocalArena
from config import load_settings
from engine_service.rules import Rules, match_record
from store.client import SentinelError, check_sentinels, connect
from store.keys import LeagueKeys
from store.ledger import Ledger

pytestmark = pytest.mark.slow
SEATS = ["a", "b"]
CLEAN = [{"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}] * 2


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    servers = SentinelGroup(tmp_path / "redis")
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()


def sentinel_env(group: SentinelGroup, master: str = MASTER) -> dict[str, str]:
    return {
        "TABLANETTE_REDIS_SENTINELS": group.sentinels,
        "TABLANETTE_REDIS_MASTER": master,
        "TABLANETTE_REDIS_WAIT_REPLICAS": "1",
        "TABLANETTE_REDIS_WAIT_MS": "500",
    }


def test_the_primary_killed_mid_league(group: SentinelGroup, tmp_path: Path) -> None:
    env = sentinel_env(group)
    # The processes are told a dead address as the URL: only the Sentinels can lead them to the primary.
    arena = LocalArena(tmp_path, redis_url="redis://127.0.0.1:1/0", prefix=unique_prefix("failover"), extra_env=env)
    url = load_settings(redis_url=arena.redis_url, redis_sentinels=group.sentinels, redis_master=MASTER).redis_url
    arena._redis = connect(url, ride_out=True)  # the test's own eyes follow the failover too
    fa = FaultArena(arena)
    try:
        fa.start_league()
        running = fa.wait_mid_league()
        old = group.primary()
        at = time.time()
        old.proc.send_signal(signal.SIGKILL)
        wait_until(lambda: group.master_port() not in (None, old.port), 60, "the Sentinels to promote a replica")
        promoted = time.time() - at
        recovered = fa.recovery("Redis primary killed, a replica promoted by Sentinel", at, list(running))
        fa.check_clean()
        plan = len(arena.redis.lrange(fa.keys.plan, 0, -1))
        line = (
            f"failover: replica promoted {promoted:.1f} s after the primary was killed; the matches running then "
            f"committed {recovered:.1f} s after; {plan} of {plan} planned matches counted once, 0 charged to a bot\n"
        )
        print(line, end="")
        with REPORT.open("a", encoding="utf-8") as fh:
            fh.write(line)
        assert not old.alive() and group.primary().port != old.port  # nobody brought the old one back
        everything_on_the_replica(group, fa.keys)
    finally:
        fa.close()


def everything_on_the_replica(group: SentinelGroup, keys: LeagueKeys) -> None:
    """The new primary's replica holds every finished match: a second failover would lose none either."""
    primary = group.primary()
    replica = next(s for n, s in group.servers.items() if n.startswith("replica") and s.alive() and s is not primary)
    want = primary.client().llen(keys.finished_order)
    wait_until(
        lambda: replica.client().llen(keys.finished_order) == want, 30, "the replica to hold every finished match"
    )


def test_a_commit_waits_for_a_replica(group: SentinelGroup) -> None:
    """With WAIT, a commit returns only once a replica holds it; a paused replica holds it back, not the others."""
    url = load_settings(redis_sentinels=group.sentinels, redis_master=MASTER).redis_url
    client = connect(url, ride_out=True)
    keys = LeagueKeys(unique_prefix("wait"), "w")
    rules = Rules.preset("tablic", target=31)
    record = match_record(play_match(rules, "s", [make_bot("greedy", "s0"), make_bot("random", "s1")]), ["a", "b"], "s")
    replicas = [s for n, s in group.servers.items() if n.startswith("replica")]
    for replica in replicas:
        replica.proc.send_signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        ledger = Ledger(client, replicas=1, wait_ms=200)
        done: list[bool] = []
        thread = threading.Thread(target=lambda: done.append(ledger.commit(keys, "m", record, SEATS, CLEAN, 24, 1500)))
        thread.start()
        time.sleep(1.5)
        assert not done, "a commit no replica holds returned"
        replicas[0].proc.send_signal(signal.SIGCONT)
        thread.join(30)
        assert done == [True] and time.monotonic() - started >= 1.5
        assert Ledger(client, replicas=1, wait_ms=200).commit(keys, "m", record, SEATS, CLEAN, 24, 1500) is False
        assert client.llen(keys.finished_order) == 1  # counted once
    finally:
        for replica in replicas:
            replica.proc.send_signal(signal.SIGCONT)


def test_an_unknown_master_or_no_sentinel_is_a_clear_error_at_start_up(group: SentinelGroup) -> None:
    good = load_settings(redis_sentinels=group.sentinels, redis_master=MASTER).redis_url
    with pytest.raises(SentinelError, match=r"no Sentinel knows a master named 'nope'.*knows tablanette-test"):
        check_sentinels(good.replace(f"/{MASTER}/", "/nope/"))
    with pytest.raises(SentinelError, match=r"no Sentinel reachable .*127\.0\.0\.1:1 "):
        check_sentinels("redis+sentinel://127.0.0.1:1,127.0.0.1:2/x/0")
    for master, needle in (("nope", "no Sentinel knows a master named 'nope'"), (MASTER, "")):
        env = {**os.environ, **sentinel_env(group, master), "PYTHONPATH": str(ROOT)}
        for argv in ([*CLI, "league", "list"], [sys.executable, "-c", "import worker.celery_app"]):
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
            if needle:
                assert done.returncode != 0 and needle in done.stderr and "Traceback" not in done.stderr, done.stderr
            else:
                assert done.returncode == 0, done.stderr
    env = {**os.environ, **sentinel_env(group, "nope"), "PYTHONPATH": str(ROOT), "TABLANETTE_PORT": "0"}
    engine = subprocess.run(
        [sys.executable, "-m", "engine_service"], capture_output=True, text=True, timeout=60, env=env
    )
    assert engine.returncode != 0 and "tablanette serve: no Sentinel knows a master named 'nope'" in engine.stderr
    assert "Traceback" not in engine.stderr, engine.stderr


def test_sentinels_that_ask_for_a_password_are_given_it_and_refuse_a_process_without_it(tmp_path: Path) -> None:
    """Sentinels with a ``requirepass`` of their own: a process given TABLANETTE_REDIS_SENTINEL_PASSWORD
    finds the primary through them (the store's clients, the CLI and the Celery app); one without it
    is refused at start-up with a clear line, and the password is in no line a process prints."""
    secret = "sentinel-s3cret&"
    locked = SentinelGroup(tmp_path / "locked", replicas=1, sentinel_password=secret)
    try:
        locked.start()
        plain = load_settings(redis_sentinels=locked.sentinels, redis_master=MASTER).redis_url
        with pytest.raises(
            SentinelError,
            match=r"no Sentinel reachable .*asks for a password: set TABLANETTE_REDIS_SENTINEL_PASSWORD",
        ):
            check_sentinels(plain)
        wrong = load_settings(
            redis_sentinels=locked.sentinels, redis_master=MASTER, redis_sentinel_password="not-it"
        ).redis_url
        with pytest.raises(SentinelError, match=r"it refused the password"):
            check_sentinels(wrong)
        url = load_settings(
            redis_sentinels=locked.sentinels, redis_master=MASTER, redis_sentinel_password=secret
        ).redis_url
        client = connect(url)
        assert client.set("sentinel-password-test", "1") and client.get("sentinel-password-test") == b"1"
        client.delete("sentinel-password-test")
        client.close()
        env = {**os.environ, **sentinel_env(locked), "PYTHONPATH": str(ROOT), "TABLANETTE_REDIS_WAIT_REPLICAS": "0"}
        for given, ok in ((secret, True), ("", False)):
            env["TABLANETTE_REDIS_SENTINEL_PASSWORD"] = given
            for argv in ([*CLI, "league", "list"], [sys.executable, "-c", "import worker.celery_app"]):
                done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
                assert (done.returncode == 0) == ok, done.stderr
                assert "Traceback" not in done.stderr and secret not in done.stdout + done.stderr, done.stderr
                if not ok:
                    assert "asks for a password: set TABLANETTE_REDIS_SENTINEL_PASSWORD" in done.stderr, done.stderr
    finally:
        locked.stop()
