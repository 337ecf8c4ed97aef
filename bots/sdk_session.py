"""One connection of the Python SDK, written once for both of its modes.

A session sends the Hello, gives up on a replica whose Welcome does not come
within :data:`~bots.reconnect.WELCOME_TIMEOUT` (a host cut off drops packets
silently, and must not hold the bot: the next attempt goes to the next address),
sends keepalives once welcomed, and ends quietly when the client cancels it on
:meth:`~bots.sdk.BotClient.stop`. :class:`~bots.sdk.BotClient` reads the stream
and answers the turns; the two modes differ only in the :class:`Stream` under
it:

- **threads** (:func:`blocking_stream`): grpc's blocking API. The answers, from
  the pool's threads, go into a queue that grpc's own thread writes from.
- **inline** (:func:`aio_stream`): grpc.aio on one event loop, which reads the
  stream, answers and queues the answers, with no hand-off to another thread.

Why not one stream for both: answering from a pool through grpc.aio costs a
wake of the event loop per answer (measured 15–25% more per move than the
blocking API), and answering inline on the blocking API still hands every
answer to grpc's writer thread (about 10% more than grpc.aio); bench/gateway.py
prints both modes.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import grpc

from tablanette.v1 import arena_pb2 as apb

from .reconnect import WELCOME_TIMEOUT


@dataclass(frozen=True)
class Stream:
    """One call's outgoing side, as its grpc API lets it be used."""

    send: Callable[[apb.BotMessage], None]
    """Queue a message: from the thread that reads the stream, and (threads mode) from the pool's."""
    send_soon: Callable[[apb.BotMessage], None]
    """Queue a message from any thread (the keepalive's)."""
    cancel: Callable[[], None]
    """Cancel the call, from any thread."""
    close: Callable[[], None]
    """No more messages (from the thread that reads the stream)."""


def blocking_stream(call: grpc.Call, outbox: queue.Queue[apb.BotMessage | None]) -> Stream:
    """A blocking call whose requests are ``outbox``'s messages (see :func:`queued`)."""
    return Stream(send=outbox.put, send_soon=outbox.put, cancel=call.cancel, close=lambda: outbox.put(None))


def queued(outbox: queue.Queue[apb.BotMessage | None]) -> Iterator[apb.BotMessage]:
    """A blocking call's requests: ``outbox``'s messages until a None."""
    while (msg := outbox.get()) is not None:
        yield msg


def aio_stream(call: grpc.aio.StreamStreamCall, outbox: asyncio.Queue[apb.BotMessage | None]) -> Stream:
    """A grpc.aio call on the running loop whose requests are ``outbox``'s messages (see :func:`aio_queued`)."""
    loop = asyncio.get_running_loop()

    def soon(fn: Callable[..., object], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: the session is over anyway
            loop.call_soon_threadsafe(fn, *args)

    return Stream(
        send=outbox.put_nowait,
        send_soon=lambda msg: soon(outbox.put_nowait, msg),
        cancel=lambda: soon(call.cancel),
        close=lambda: outbox.put_nowait(None),
    )


async def aio_queued(outbox: asyncio.Queue[apb.BotMessage | None]) -> AsyncIterator[apb.BotMessage]:
    """A grpc.aio call's requests: ``outbox``'s messages until a None."""
    while (msg := await outbox.get()) is not None:
        yield msg


class Upkeep:
    """A session's Welcome deadline and keepalives, while its stream is read (:func:`session`)."""

    def __init__(self, name: str, stream: Stream) -> None:
        self.name = name
        self.stream = stream
        self.gave_up: str | None = None
        """Why the session cancelled its own call (no Welcome in time), if it did."""
        self._welcomed = threading.Event()
        self._ended = threading.Event()
        self._keepalive: threading.Thread | None = None
        self._timer = threading.Timer(WELCOME_TIMEOUT, self._unwelcomed)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def welcomed(self, keepalive_ms: int) -> None:
        """The Welcome came: keepalives from now on, every half of ``keepalive_ms`` (at least every half second)."""
        self._welcomed.set()
        self._timer.cancel()
        if self._keepalive is None:
            self._keepalive = threading.Thread(
                target=self._beat, args=(max(keepalive_ms, 1000) / 2000,), daemon=True, name=f"{self.name}-keepalive"
            )
            self._keepalive.start()

    def _unwelcomed(self) -> None:
        if not self._welcomed.is_set():
            self.gave_up = f"no Welcome within {WELCOME_TIMEOUT:g} s"
            self.stream.cancel()

    def _beat(self, every_s: float) -> None:
        while not self._ended.wait(every_s):
            self.stream.send_soon(apb.BotMessage(keepalive=apb.Keepalive(unix_ms=int(time.time() * 1000))))

    def end(self) -> None:
        self._timer.cancel()
        self._ended.set()  # wakes the keepalive thread now, not at its next beat
        if self._keepalive is not None:
            self._keepalive.join(timeout=1)
        self.stream.close()


@contextlib.contextmanager
def session(name: str, stream: Stream, hello: apb.BotMessage, stopping: Callable[[], bool]) -> Iterator[Upkeep]:
    """Run one session's upkeep while the caller reads ``stream``'s call: ``hello`` first, then the
    Welcome deadline, then keepalives.

    How it ends, the same in both modes: a call the session gave up on raises DEADLINE_EXCEEDED (no
    Welcome); one the client cancelled while ``stopping`` ends quietly; anything else is raised as a
    :class:`grpc.RpcError` (a grpc.aio call cancelled on this side raises :class:`asyncio.CancelledError`,
    turned into CANCELLED here), for the client to try again.
    """
    upkeep = Upkeep(name, stream)
    stream.send(hello)
    upkeep.start()
    try:
        yield upkeep
    except (grpc.RpcError, asyncio.CancelledError) as exc:
        if upkeep.gave_up is not None:
            raise rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, upkeep.gave_up) from None
        if stopping() and (isinstance(exc, asyncio.CancelledError) or exc.code() == grpc.StatusCode.CANCELLED):
            return
        if isinstance(exc, asyncio.CancelledError):  # cancelled by anything but stop(): a lost connection
            raise rpc_error(grpc.StatusCode.CANCELLED, "the call was cancelled") from None
        raise
    finally:
        upkeep.end()


def rpc_error(code: grpc.StatusCode, details: str) -> grpc.RpcError:
    """An error as a call raises one, with ``code()`` and ``details()``."""
    empty = grpc.aio.Metadata()
    return grpc.aio.AioRpcError(code, empty, empty, details)
