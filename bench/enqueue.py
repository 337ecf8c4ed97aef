"""How fast a big league goes onto the queue, beside a raw Celery group of no-op tasks.

Both on the same broker (the arena's Redis), in the same run, with no worker
consuming (only the sending is measured):

- **raw Celery group**: ``group(noop.s(...) for each)`` sent with one
  ``apply_async``: tasks/second.
- **league enqueue**: a round-robin league of 101 bots and two games a pairing
  (10,100 matches), fed with ``window 0`` (everything at once) by the real
  :class:`~scheduler.league.Feeder` through the real :class:`~scheduler.queue.MatchQueue`:
  the plan written, every match marked queued in the ledger and sent, from the
  feeder's start to its last send: matches/second. The bots are connected (idle
  gRPC streams to a real engine replica, from this process), since the feeder
  holds back the matches of a bot that is not.

Run: ``python bench/enqueue.py [--quick] [--json]`` (needs Redis at
TABLANETTE_REDIS_URL or 127.0.0.1:6379; uses its own key prefix and queue).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.capacity import IdleBot  # noqa: E402
from bench.kit import temp_arena  # noqa: E402


class Connected:
    """Idle bots holding real streams to a replica, on an event loop of their own thread."""

    def __init__(self, port: int, tokens: dict[str, str]) -> None:
        self.port, self.tokens = port, tokens
        self.bots: list[IdleBot] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.failed: BaseException | None = None
        self.stop = asyncio.Event()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._run(),), daemon=True)
        self.thread.start()
        if not self.ready.wait(120) or self.failed is not None:
            raise RuntimeError(f"the idle bots did not connect: {self.failed!r}")

    async def _run(self) -> None:
        self.stop = asyncio.Event()
        try:
            self.bots = [IdleBot(self.port, name, token) for name, token in self.tokens.items()]  # on this loop
            for bot in self.bots:
                await bot.connect()
        except BaseException as exc:
            self.failed = exc
            self.ready.set()
            raise
        idlers = [asyncio.create_task(b.idle(time.monotonic() + 3600)) for b in self.bots]
        self.ready.set()
        await self.stop.wait()
        for task in idlers:
            task.cancel()
        for bot in self.bots:
            await bot.close()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="21 bots (420 matches)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bots = 21 if args.quick else 101

    arena = temp_arena("enqueue")
    try:
        os.environ.update(arena.child_env())  # the worker app reads the arena's settings at import
        from celery import group

        from engine_service.rules import Rules
        from scheduler.league import Feeder
        from scheduler.queue import MatchQueue
        from store.leagues import League, LeagueStore
        from worker.celery_app import app, settings
        from worker.tasks import noop

        store = LeagueStore(arena.redis, arena.prefix)
        names = [f"b{i:03d}" for i in range(bots)]
        store.create(League("big", Rules.preset("tablic", deals=1), games=2, seed="big"))
        tokens = {name: arena.add_bot(name) for name in names}
        store.add_bots("big", names)
        _, port = arena.start_engine(TABLANETTE_HELLO_RATE="1000", TABLANETTE_HELLO_BURST="1000")
        connected = Connected(port, tokens)

        class Counted(MatchQueue):
            sent = 0

            def __call__(self, league_id: str, match_id: str) -> None:
                super().__call__(league_id, match_id)
                self.sent += 1

            def many(self, league_id: str, match_ids: Sequence[str]) -> None:
                super().many(league_id, match_ids)
                self.sent += len(match_ids)

        enqueue = Counted(app, settings.queue)

        total = bots * (bots - 1)  # pairings x 2 games
        feeder = Feeder(store, "big", enqueue, window=0, poll=0, should_stop=lambda: enqueue.sent >= total)
        start = time.perf_counter()
        feeder.run()
        league_s = time.perf_counter() - start
        assert enqueue.sent == total, f"sent {enqueue.sent} of {total} matches"
        arena.redis.delete(settings.queue)

        counter = f"{arena.prefix}:bench:noop"
        start = time.perf_counter()
        group(noop.s(counter) for _ in range(total)).apply_async(queue=settings.queue)
        raw_s = time.perf_counter() - start
        arena.redis.delete(settings.queue)
        connected.close()
    finally:
        arena.close()

    figures = {
        "matches": total,
        "league_enqueue_per_second": round(total / league_s, 1),
        "celery_group_per_second": round(total / raw_s, 1),
        "ratio": round(raw_s / league_s, 2),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"a league of {bots} bots ({total:,} matches) onto the queue vs a raw Celery group (same broker, same run)")
    print(f"  raw Celery group of no-op tasks  {figures['celery_group_per_second']:10,.0f} tasks/s   ({raw_s:.2f} s)")
    rate = figures["league_enqueue_per_second"]
    print(f"  league enqueue (window 0)        {rate:10,.0f} matches/s ({league_s:.2f} s)")
    print(f"  ratio                            {figures['ratio']:10.2f} × the raw group's rate")


if __name__ == "__main__":
    main()
