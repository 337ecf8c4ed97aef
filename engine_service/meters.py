"""CPU meters: how a replica charges a hosted bot the CPU time it uses instead of the wall clock.

A bot host (:mod:`hosting.meter`) runs each hosted version in a sandbox whose
cgroup counts the CPU time of the bot's own processes. It offers this replica a
meter (``Dispatch.Meter``, a stream carrying the arena's internal secret) and
names the bots it meters. On a turn of such a bot in a league on the CPU clock,
the gateway opens a :class:`Watch`: the host reads the bot's counters when the
watch begins, says ``over`` as soon as the turn's CPU budget is spent, and, once
the bot has answered, how much it used. So a bot slowed down by its neighbours'
load (waiting for a core, not using one) loses nothing; a bot that thinks too
long still times out.

Only the host that runs a bot can meter it: what a bot says about its own time
is never asked. A bot no host meters (a remote bot) stays on the wall clock. A
meter that goes away mid-turn is the arena's fault: that turn then runs on under
the wall-clock cap alone, and is never charged to the bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from tablanette.v1 import dispatch_pb2 as dpb

log = logging.getLogger("tablanette.meters")
FINAL_WAIT_S = 1.0
"""How long a replica waits for a host to say how much CPU time a turn used (it answers in a millisecond)."""


@dataclass
class Watch:
    """One turn's watch on one bot's CPU counters."""

    ask_id: int
    bot: str
    stream: MeterStream
    over: asyncio.Future[int] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    """Set (to the CPU microseconds used) when the host says the budget is spent."""
    final: asyncio.Future[int | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    """Set to the CPU microseconds used once the watch is stopped; None if the meter went away."""

    @property
    def lost(self) -> bool:
        """The meter went away (or never knew the bot) before the turn ended."""
        return self.final.done() and self.final.result() is None

    def settle(self, used_us: int | None) -> None:
        if not self.final.done():
            self.final.set_result(used_us)


@dataclass
class MeterStream:
    """One host's meter stream on this replica."""

    peer: str
    outbox: asyncio.Queue[dpb.MeterAsk | None] = field(default_factory=asyncio.Queue)
    bots: set[str] = field(default_factory=set)
    watches: dict[int, Watch] = field(default_factory=dict)


class Meters:
    """The meters hosts offer this replica, by the bot each meters."""

    def __init__(self) -> None:
        self.by_bot: dict[str, MeterStream] = {}
        self._ids = itertools.count(1)

    def watch(self, bot: str, budget_s: float) -> Watch | None:
        """Start watching ``bot``'s CPU time with a budget of ``budget_s``; None if no host meters it."""
        stream = self.by_bot.get(bot)
        if stream is None:
            return None
        watch = Watch(next(self._ids), bot, stream)
        stream.watches[watch.ask_id] = watch
        stream.outbox.put_nowait(dpb.MeterAsk(ask_id=watch.ask_id, bot_name=bot, budget_us=int(budget_s * 1e6)))
        return watch

    async def finish(self, watch: Watch) -> int | None:
        """Stop the watch: the CPU microseconds the bot used during it (None: the meter went away)."""
        if not watch.over.done() and not watch.final.done():
            watch.stream.outbox.put_nowait(dpb.MeterAsk(ask_id=watch.ask_id, bot_name=watch.bot, stop=True))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(watch.final), FINAL_WAIT_S)
        watch.stream.watches.pop(watch.ask_id, None)
        if watch.over.done():  # the host stopped watching when the budget was spent
            return watch.over.result()
        if not watch.final.done():
            log.warning("bot %s: the meter from %s did not answer; turn not charged", watch.bot, watch.stream.peer)
        return watch.final.result() if watch.final.done() else None

    def abandon(self, watch: Watch) -> None:
        """Forget a watch whose turn was cancelled (the host stops watching too)."""
        if watch.stream.watches.pop(watch.ask_id, None) is not None and not watch.over.done():
            watch.stream.outbox.put_nowait(dpb.MeterAsk(ask_id=watch.ask_id, bot_name=watch.bot, stop=True))

    async def serve(self, reports: AsyncIterator[dpb.MeterReport], peer: str) -> AsyncIterator[dpb.MeterAsk]:
        """One host's meter stream: its reports in, this replica's asks out, until either side ends."""
        stream = MeterStream(peer)
        reader = asyncio.create_task(self._read(reports, stream))
        log.info("a bot host's CPU meter joined from %s", peer)
        try:
            while (ask := await stream.outbox.get()) is not None:
                yield ask
        finally:
            reader.cancel()
            for bot in stream.bots:
                if self.by_bot.get(bot) is stream:
                    del self.by_bot[bot]
            for watch in stream.watches.values():
                watch.settle(None)
            metered = ", ".join(sorted(stream.bots)[:10]) + (" ..." if len(stream.bots) > 10 else "")
            log.info("the CPU meter from %s left (it metered: %s)", peer, metered or "no bot")

    async def _read(self, reports: AsyncIterator[dpb.MeterReport], stream: MeterStream) -> None:
        first = True
        try:
            async for report in reports:
                for bot in report.claim:
                    stream.bots.add(bot)
                    self.by_bot[bot] = stream  # the newest claim wins: the host that runs the bot now
                for bot in report.release:
                    stream.bots.discard(bot)
                    if self.by_bot.get(bot) is stream:
                        del self.by_bot[bot]
                if first or report.claim:  # the host's claims are in: say so (ask 0), one a claiming report
                    first = False
                    stream.outbox.put_nowait(dpb.MeterAsk())
                watch = stream.watches.get(report.ask_id) if report.ask_id else None
                if watch is None:
                    continue
                if report.unknown:
                    watch.settle(None)
                elif report.over:
                    if not watch.over.done():
                        watch.over.set_result(report.used_us)
                else:
                    watch.settle(report.used_us)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken transport or a malformed report: the stream ends
            log.warning("the CPU meter from %s failed: %s", stream.peer, str(exc)[:200])
        stream.outbox.put_nowait(None)
