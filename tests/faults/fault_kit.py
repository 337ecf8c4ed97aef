"""A real league to break: a private Redis with an append-only file, two engine replicas,
three Celery workers, six bots and a scheduler, all with the arena's default settings.

A test starts the league (:meth:`FaultArena.start_league`), injects one fault
into one real process (SIGKILL, SIGSTOP, a restart), and
:meth:`FaultArena.check_clean` then asserts the arena's promises: the league
finished by itself, every match counted exactly once, the ratings add up, every
record verifies, no bot was charged a timeout, an illegal play or a forfeit,
and every process the test did not touch is still the one it started.
:meth:`FaultArena.recovery` measures fault to the victim's commit.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena_harness import unique_prefix

from cli.local import CLI, Child, LocalArena, free_port, redis_server_binary
from engine_service.rules import verify_record
from store.keys import LeagueKeys
from store.leagues import LeagueStore
from store.results import LeagueResults

LEAGUE = "faults"
BOTS = ("ann", "bob", "cat", "dan", "eve", "fay")
THINK_MS = "25"
"""Each bot thinks this long per move, so a two-deal match lasts a second or two: faults land mid-match."""
REPORT = Path(os.environ.get("TABLANETTE_ARTIFACTS", "artifacts")) / "fault-recovery.txt"


def wait_until(check: object, timeout: float, what: str | Callable[[], str]) -> object:
    """``check()``'s first true value; else a TimeoutError saying ``what`` (a callable: as it stands then)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()  # type: ignore[operator]
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what() if callable(what) else what}")


@dataclass
class FaultArena:
    arena: LocalArena
    redis_port: int = 0
    redis_dir: Path = field(default_factory=Path)
    redis_proc: Child | None = None
    engines: dict[str, tuple[Child, int]] = field(default_factory=dict)
    workers: dict[str, Child] = field(default_factory=dict)
    bots: dict[str, Child] = field(default_factory=dict)
    feeder: Child | None = None
    restarted: set[str] = field(default_factory=set)

    @classmethod
    def create(cls, workdir: Path) -> FaultArena:
        binary = redis_server_binary()
        assert binary, "redis-server is needed for the fault tests"
        fa = cls(LocalArena(workdir, prefix=unique_prefix("faults")))
        fa.redis_port, fa.redis_dir = free_port(), workdir / "redis"
        fa.redis_dir.mkdir(parents=True, exist_ok=True)
        fa.start_redis()
        return fa

    # ----------------------------------------------------------- processes

    def start_redis(self) -> None:
        """The private Redis, with every write in its append-only file before it answers."""
        argv = [redis_server_binary() or "redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1"]
        argv += ["--dir", str(self.redis_dir), "--appendonly", "yes", "--appendfsync", "always", "--save", ""]
        self.redis_proc = self.arena.spawn(f"redis-{len(self.restarted)}", argv)
        self.arena.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.arena._redis = None
        wait_until(lambda: _pings(self.arena), 20, "the private Redis")

    def start_engine(self, name: str, port: int = 0) -> int:
        child, port = self.arena.start_engine(name, TABLANETTE_PORT=str(port))
        self.engines[name] = (child, port)
        return port

    def start(self, single_address: bool) -> None:
        """Two replicas, three workers, six bots: half on each replica.

        ``single_address``: each bot knows only its own replica (it must wait for
        it to come back); otherwise each knows both, its own first.
        """
        a, b = self.start_engine("engine-a"), self.start_engine("engine-b")
        for name in ("w1", "w2", "w3"):
            self.workers[name] = self.arena.start_worker(name)
        for i, bot in enumerate(BOTS):
            home, other = (a, b) if i % 2 == 0 else (b, a)
            address = f"127.0.0.1:{home}" if single_address else f"127.0.0.1:{home},127.0.0.1:{other}"
            kind = ("greedy", "random")[i % 2]
            token = self.arena.add_bot(bot)
            self.bots[bot] = self.arena.spawn(
                f"bot-{bot}",
                [sys.executable, "-m", "bots", kind, "--name", bot, "--address", address, "--think-ms", THINK_MS],
                {"TABLANETTE_TOKEN": token},
            )
        self.arena.wait_connected(*BOTS)

    def start_league(self, single_address: bool = False, games: int = 2) -> None:
        self.start(single_address)
        for cmd in (
            ["league", "create", LEAGUE, "--games", str(games), "--rule", "deals=2"],
            ["league", "add-bot", LEAGUE, *BOTS],
        ):
            done = self.arena.tablanette(*cmd)
            assert done.returncode == 0, done.stdout + done.stderr
        self.start_feeder()

    def start_feeder(self) -> None:
        name = f"scheduler-{sum(1 for c in self.arena.children if c.name.startswith('scheduler'))}"
        self.feeder = self.arena.spawn(name, [*CLI, "league", "start", LEAGUE, "--window", "6"])

    # ----------------------------------------------------------- looking on

    @property
    def keys(self) -> LeagueKeys:
        return self.arena.keys.league(LEAGUE)

    def done(self) -> int:
        return int(self.arena.redis.llen(self.keys.finished_order))

    def running(self) -> dict[str, str]:
        """Running match id -> the worker playing it."""
        ids = sorted(m.decode() for m in self.arena.redis.smembers(self.keys.running))
        return {mid: (self.arena.redis.hget(self.keys.match(mid), "worker") or b"").decode() for mid in ids}

    def wait_mid_league(self, min_done: int = 3) -> dict[str, str]:
        """Until some matches are done and some run; the running ones."""
        return wait_until(  # type: ignore[return-value]
            lambda: self.done() >= min_done and self.running(), 120, "the league to be under way"
        )

    def finished_at(self, match_id: str) -> float | None:
        raw = self.arena.redis.hget(self.keys.match(match_id), "finished_at")
        return float(raw) if raw else None

    def recovery(self, name: str, fault_at: float, victims: list[str]) -> float:
        """Seconds from the fault to the last victim's commit; written to the report."""
        wait_until(lambda: all(self.finished_at(m) for m in victims), 240, f"the victims of {name} to commit")
        seconds = max(self.finished_at(m) or 0 for m in victims) - fault_at
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        with REPORT.open("a", encoding="utf-8") as fh:
            fh.write(f"{name}: {seconds:.1f} s from the fault to the victims' commit ({len(victims)} matches)\n")
        print(f"recovery, {name}: {seconds:.1f} s")
        return seconds

    # ----------------------------------------------------------- the promises

    def check_clean(self) -> None:
        feeder = self.feeder
        assert feeder is not None
        wait_until(lambda: not feeder.alive(), 300, self._stuck)
        assert feeder.popen.returncode == 0, feeder.tail(3000)
        store = LeagueStore(self.arena.redis, self.arena.prefix)
        status = store.status(LEAGUE)
        plan = store.match_ids(LEAGUE)
        assert (status.status, status.done, status.failed) == ("finished", len(plan), 0), store.troubles(LEAGUE)
        finished = [m.decode() for m in self.arena.redis.lrange(self.keys.finished_order, 0, -1)]
        assert sorted(finished) == sorted(plan), "every match counted exactly once"
        rows = LeagueResults(self.arena.redis, self.arena.prefix).standings(LEAGUE)
        games = 2 * (len(BOTS) - 1)
        assert sum(r.rating for r in rows) == _approx(1500 * len(BOTS))
        for r in rows:
            assert r.games == r.wins + r.draws + r.losses == games, r
            assert (r.timeouts, r.illegal, r.forfeits) == (0, 0, 0), f"{r.bot} was blamed: {r}"
        records = LeagueResults(self.arena.redis, self.arena.prefix).records(LEAGUE)
        for record in records:
            assert record["result"]["reason"] == "deals"
            assert not any(p.get("auto") for d in record["deals"] for p in d["plays"])
            verify_record(record)
        untouched = [c for c in self.arena.children if c.name.split("-")[0] not in ("redis", "scheduler")]
        dead = [c.name for c in untouched if c.name not in self.restarted and not c.alive()]
        assert not dead, f"processes the test did not touch have died (nothing may need a restart): {dead}"

    def _stuck(self) -> str:
        """Why the league has not finished: its matches' troubles and every process's last lines."""
        store = LeagueStore(self.arena.redis, self.arena.prefix)
        lines = [f"the scheduler to finish the league; {store.status(LEAGUE)}", f"troubles: {store.troubles(LEAGUE)}"]
        lines += [f"in flight: {store.unfinished(LEAGUE)}"]
        for child in self.arena.children:
            lines += [f"--- {child.name} ({'alive' if child.alive() else 'dead'})", child.tail(1500)]
        return "\n".join(lines)

    def kill(self, child: Child, sig: int = signal.SIGKILL) -> float:
        child.send_signal(sig)
        self.restarted.add(child.name)
        return time.time()

    def close(self) -> None:
        self.arena.close(clear=False)  # the private Redis goes with its folder


def _pings(arena: LocalArena) -> bool:
    try:
        return bool(arena.redis.ping())
    except Exception:
        return False


def _approx(value: float) -> object:
    import pytest

    return pytest.approx(value, abs=1e-3)


def match_seats(arena: LocalArena, keys: LeagueKeys, match_id: str) -> list[str]:
    return list(json.loads(arena.redis.hget(keys.match(match_id), "seats") or b"[]"))
