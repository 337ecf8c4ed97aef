"""This host's CPU meter: the CPU time of the bots it runs, read from their sandboxes' cgroups.

The host offers it to every engine replica it knows (``Dispatch.Meter``, with the
arena's internal secret) and names the bots it runs (:meth:`CpuMeter.claim`). On
a turn of one of them in a league on the CPU clock, the replica asks it to watch
that bot: the meter notes the bot's CPU counter, says ``over`` as soon as the
turn's budget is used, and says how much was used when the replica stops the
watch (the bot answered). The replica's side is :mod:`engine_service.meters`.

A counter is read every :data:`POLL_S` while some watch is open, and not at all
otherwise. A replica that cannot be reached is tried again every
:data:`RETRY_S`; the turns it asks meanwhile run on the wall clock.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import grpc

from config.internal_calls import CHANNEL_OPTIONS, INTERNAL_METADATA
from programs.sandbox import Sandbox
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import dispatch_pb2_grpc

log = logging.getLogger("tablanette.meter")
POLL_S = 0.005
"""How often an open watch reads its bot's counter: a spent budget is seen within this much CPU time."""
RETRY_S = 2.0
CpuSource = Callable[[], float]
"""A bot's CPU seconds so far: a counter that only grows."""


class CpuTally:
    """The CPU time of every sandbox one bot has run, closed or running (a JSON-lines version runs one a game)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: list[Sandbox] = []
        self._closed_s = 0.0
        self._last = 0.0

    def add(self, sandbox: Sandbox) -> Sandbox:
        with self._lock:
            self._running.append(sandbox)
        return sandbox

    def seconds(self) -> float:
        with self._lock:
            still = []
            for box in self._running:
                if box.closed:
                    self._closed_s += box.cpu_seconds()
                else:
                    still.append(box)
            self._running = still
            total = self._closed_s + sum(box.cpu_seconds() for box in still)
            self._last = max(self._last, total)  # a sandbox closing between two reads never takes time back
            return self._last


@dataclass
class _Watch:
    link: _Link
    ask_id: int
    bot: str
    base: float
    budget_s: float


class _Link:
    """The meter's stream to one replica, opened again whenever it breaks."""

    def __init__(self, meter: CpuMeter, address: str) -> None:
        self.meter, self.address = meter, address
        self.outbox: queue.Queue[dpb.MeterReport | None] = queue.Queue()
        self.call: grpc.RpcContext | None = None
        self._claims = threading.Condition()
        self._claimed = self._acked = 0
        """On the current stream: the reports sent that carry claims (the first counts, even empty), and the
        replica's acknowledgements of them (an ask 0 each, in order)."""
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"meter-{address}")
        self.thread.start()

    def send(self, report: dpb.MeterReport) -> None:
        with self._claims:  # counted and queued together: a stream opened meanwhile counts its own
            if report.claim:
                self._claimed += 1
            self.outbox.put(report)

    def joined(self, timeout: float) -> bool:
        """The replica has every claim this host has sent it (False after ``timeout`` seconds)."""
        with self._claims:
            return self._claims.wait_for(lambda: self._acked >= self._claimed > 0, timeout)

    def _acknowledged(self, first: bool) -> None:
        with self._claims:
            self._acked += 1
            self._claims.notify_all()
        if first:
            log.info("meter: replica %s has the claims of this host", self.address)

    def _reports(self, outbox: queue.Queue[dpb.MeterReport | None]) -> Iterator[dpb.MeterReport]:
        while (report := outbox.get()) is not None:
            yield report

    def _run(self) -> None:
        while not self.meter.closing.is_set():
            outbox: queue.Queue[dpb.MeterReport | None] = queue.Queue()
            with self._claims:
                self.outbox, self._claimed, self._acked = outbox, 1, 0
                outbox.put(dpb.MeterReport(claim=self.meter.bots()))  # first, every bot this host meters now
            try:
                with self.meter.channel(self.address) as channel:
                    stub = dispatch_pb2_grpc.DispatchStub(channel)
                    self.call = stub.Meter(self._reports(outbox), metadata=((INTERNAL_METADATA, self.meter.secret()),))
                    for ask in self.call:
                        if ask.ask_id:
                            self.meter.asked(self, ask)
                        else:
                            self._acknowledged(first=self._acked == 0)
            except grpc.RpcError as exc:
                if not self.meter.closing.is_set():
                    log.info("meter: replica %s unreachable (%s); trying again", self.address, _status(exc))
            except Exception:  # the link must outlive anything (a Redis outage reading the secret, say)
                log.exception("meter: replica %s", self.address)
            finally:
                with self._claims:
                    self._claimed = self._acked = 0  # not joined until the next stream's claims are in
                outbox.put(None)
                self.meter.forget(self)
            self.meter.closing.wait(RETRY_S)

    def close(self) -> None:
        self.outbox.put(None)
        if self.call is not None:
            self.call.cancel()


class CpuMeter:
    """The CPU meter of one host, offered to the replicas at ``addresses`` (see the module's doc)."""

    def __init__(
        self,
        addresses: Sequence[str],
        secret: Callable[[], str],
        ca: bytes | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        self.secret, self.ca, self.poll_s = secret, ca, poll_s
        self._lock = threading.Lock()
        self._sources: dict[str, CpuSource] = {}
        self._watches: dict[tuple[int, int], _Watch] = {}
        self._woken = threading.Event()
        self.closing = threading.Event()
        self.links = [_Link(self, address) for address in addresses]
        self._watcher = threading.Thread(target=self._watch_loop, daemon=True, name="meter-watch")
        self._watcher.start()

    def channel(self, address: str) -> grpc.Channel:
        if self.ca is not None:
            return grpc.secure_channel(address, grpc.ssl_channel_credentials(self.ca), CHANNEL_OPTIONS)
        return grpc.insecure_channel(address, CHANNEL_OPTIONS)

    # ----------------------------------------------------------- the host's side

    def claim(self, bot: str, source: CpuSource) -> None:
        """Meter ``bot`` (again, with a new source when its program was started again)."""
        with self._lock:
            self._sources[bot] = source
        for link in self.links:
            link.send(dpb.MeterReport(claim=[bot]))

    def release(self, bot: str) -> None:
        with self._lock:
            if self._sources.pop(bot, None) is None:
                return
        for link in self.links:
            link.send(dpb.MeterReport(release=[bot]))

    def joined(self, timeout: float) -> bool:
        """Every replica has every claim this host has made so far (waiting at most ``timeout`` seconds for
        each): a turn of a claimed bot asked after this is metered."""
        return all(link.joined(timeout) for link in self.links)

    def bots(self) -> list[str]:
        with self._lock:
            return sorted(self._sources)

    def close(self) -> None:
        self.closing.set()
        self._woken.set()
        for link in self.links:
            link.close()

    # ----------------------------------------------------------- the replicas' side

    def asked(self, link: _Link, ask: dpb.MeterAsk) -> None:
        """A replica starts or stops a watch."""
        key = (id(link), ask.ask_id)
        with self._lock:
            source = self._sources.get(ask.bot_name)
            if ask.stop:
                watch = self._watches.pop(key, None)
                if watch is None or source is None:
                    reply = dpb.MeterReport(ask_id=ask.ask_id, unknown=True)
                else:
                    reply = dpb.MeterReport(ask_id=ask.ask_id, used_us=_used_us(source, watch.base))
                link.send(reply)
                return
            if source is None:
                link.send(dpb.MeterReport(ask_id=ask.ask_id, unknown=True))
                return
            self._watches[key] = _Watch(link, ask.ask_id, ask.bot_name, _reading(source), ask.budget_us / 1e6)
        self._woken.set()

    def forget(self, link: _Link) -> None:
        """A replica's stream ended: its watches end with it."""
        with self._lock:
            for key in [k for k, w in self._watches.items() if w.link is link]:
                del self._watches[key]

    def _watch_loop(self) -> None:
        """Read the counters of the bots being watched; say ``over`` when one spends its budget."""
        while not self.closing.is_set():
            with self._lock:
                watching = bool(self._watches)
                for key, watch in list(self._watches.items()):
                    source = self._sources.get(watch.bot)
                    if source is None:
                        continue  # released mid-turn: the stop will say unknown
                    used_us = _used_us(source, watch.base)
                    if used_us >= watch.budget_s * 1e6:
                        del self._watches[key]
                        watch.link.send(dpb.MeterReport(ask_id=watch.ask_id, used_us=used_us, over=True))
            if watching:
                self.closing.wait(self.poll_s)
            else:
                self._woken.wait()
                self._woken.clear()


def _status(exc: grpc.RpcError) -> str:
    code = exc.code() if isinstance(exc, grpc.Call) else None
    return code.name if code is not None else str(exc)[:200]


def _reading(source: CpuSource) -> float:
    """The counter now; 0 if it cannot be read (it then counts nothing)."""
    with contextlib.suppress(Exception):
        return source()
    return 0.0


def _used_us(source: CpuSource, base: float) -> int:
    return max(int((_reading(source) - base) * 1e6), 0)
