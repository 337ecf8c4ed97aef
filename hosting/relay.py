"""The one way out of a hosted gRPC bot's sandbox: a Unix socket relayed to the engine service.

A sandbox has no network of its own (only its loopback), so a bot that speaks
gRPC reaches the arena through a socket file bind-mounted into it
(``/arena/engine.sock``; the SDKs take ``unix:/arena/engine.sock`` as their address).
The host relays each connection on that socket to an engine replica, byte for
byte: the next replica of the list when one cannot be reached, so the SDK's own
reconnection works as it does over TCP. With a CA certificate the relay speaks
TLS (with ALPN ``h2``) to the engine itself, so the bot's side stays plain.

The relay carries only what the bot sends to the engine replicas named; it
cannot reach anything else, and the bot cannot name a destination. It runs on
an event loop of its own, on one thread.

Every hosted bot of a host reaches the replicas from the host's address, so a
replica would count all of them as one client (Hellos per second, live
streams). A relay that knows its version (``bot``) and the arena's internal
secret (``secret``) therefore tells the replica, over ``Dispatch.Relayed``,
which version each connection it opens carries, before it relays the first
byte (waiting :data:`ANNOUNCE_TIMEOUT_S` at most: unanswered, the connection
is relayed all the same and counted under the host's address), again while it
lasts, and when it ends: the replica then limits it per version
(:mod:`engine_service.relayed`). A relay holds :data:`MAX_CONNECTIONS` at most
at once; a bot's SDK needs one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc

from config.internal_calls import CHANNEL_OPTIONS, INTERNAL_METADATA
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import dispatch_pb2_grpc

log = logging.getLogger("tablanette.relay")
CHUNK = 65536
CONNECT_TIMEOUT_S = 5.0
ANNOUNCE_TIMEOUT_S = 2.0
"""How long a new connection waits for the replica to take its announcement before it is relayed anyway."""
ANNOUNCE_RETRY_S = 5.0
MAX_CONNECTIONS = 32
"""Connections one relay holds at once (more are closed as they come)."""
REFUSED_LOG_S = 60.0


class Relay:
    """A Unix socket at ``path`` whose connections are relayed to ``addresses`` (``host:port``), each
    announced as carrying version ``bot`` with the internal secret ``secret`` gives (see the module's doc)."""

    def __init__(
        self,
        path: str | Path,
        addresses: Sequence[str],
        ca: bytes | None = None,
        bot: str = "",
        secret: Callable[[], str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.addresses = list(addresses)
        self.ca = ca
        self.tls: ssl.SSLContext | None = None
        if ca is not None:
            self.tls = ssl.create_default_context(cadata=ca.decode())
            self.tls.set_alpn_protocols(["h2"])
        self.bot, self.secret = bot, secret
        self._secret: str | None = None
        self._channels: dict[str, grpc.Channel] = {}
        self._leaving: set[grpc.Future] = set()
        """The calls saying a connection ended, until they are answered."""
        self._refused_logged = -REFUSED_LOG_S
        self._next = 0
        self._closing = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self._tasks: set[asyncio.Task[None]] = set()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.server = self.loop.run_until_complete(asyncio.start_unix_server(self._serve, str(self.path)))
        os.chmod(self.path, 0o777)  # the sandbox's user connects to it
        self._inode = self.path.stat().st_ino
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name=f"relay-{self.path.parent}")
        self.thread.start()

    def close(self) -> None:
        """Stop listening and cut every relayed connection."""

        async def shut() -> None:
            self.server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        with self._closing:
            if self.loop.is_closed():
                return
            asyncio.run_coroutine_threadsafe(shut(), self.loop).result(timeout=10)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            self.loop.close()
            for channel in self._channels.values():
                channel.close()
            with contextlib.suppress(FileNotFoundError):
                if self.path.stat().st_ino == self._inode:  # ours, not a socket bound there since
                    self.path.unlink()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, str] | None:
        """A connection to the next engine replica that answers, and its address (None: none does now)."""
        for _ in range(len(self.addresses)):
            address = self.addresses[self._next % len(self.addresses)]
            self._next += 1
            host, _, port = address.rpartition(":")
            host = host.strip("[]")
            try:
                opening = asyncio.open_connection(
                    host, int(port), ssl=self.tls, server_hostname=host if self.tls else None
                )
                far_reader, far_writer = await asyncio.wait_for(opening, CONNECT_TIMEOUT_S)
                return far_reader, far_writer, address
            except (OSError, ValueError, TimeoutError) as exc:
                log.warning("relay %s: cannot reach %s: %s", self.path, address, exc)
        return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(self._tasks) >= MAX_CONNECTIONS:
            writer.close()
            if time.monotonic() - self._refused_logged >= REFUSED_LOG_S:
                self._refused_logged = time.monotonic()
                log.warning("relay %s: %d connections already; refusing more", self.path, MAX_CONNECTIONS)
            return
        self._tasks.add(task)
        try:
            outside = await self._connect()
            if outside is None:
                return  # the SDK sees the connection fail and tries again, as over TCP
            far_reader, far_writer, address = outside
            try:
                await self._relay(reader, writer, far_reader, far_writer, address)
            finally:
                far_writer.close()
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _relay(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        far_reader: asyncio.StreamReader,
        far_writer: asyncio.StreamWriter,
        address: str,
    ) -> None:
        """Announce the connection (if this relay knows its version), then copy both ways until it ends."""
        if not (self.bot and self.secret):
            await asyncio.gather(_pump(reader, far_writer), _pump(far_reader, writer))
            return
        sockname = far_writer.get_extra_info("sockname")
        claim = dpb.RelayedRequest(
            bot_name=self.bot, host=str(sockname[0]), port=int(sockname[1]), connection=secrets.token_hex(8)
        )
        keep_ms = await self._announce(address, claim)
        if not keep_ms:
            log.warning(
                "relay %s: %s did not take the announcement of %s; its streams count under this host's address",
                self.path,
                address,
                self.bot,
            )
        again = asyncio.create_task(self._announce_again(address, claim, keep_ms))
        try:
            await asyncio.gather(_pump(reader, far_writer), _pump(far_reader, writer))
        finally:
            again.cancel()
            claim.closed = True
            if self._secret is not None:
                with contextlib.suppress(Exception):  # not waited for: an entry not announced again expires
                    call = self._stub(address).Relayed.future(
                        claim, metadata=((INTERNAL_METADATA, self._secret),), timeout=ANNOUNCE_TIMEOUT_S
                    )
                    self._leaving.add(call)  # a call no one holds is cancelled
                    call.add_done_callback(self._leaving.discard)

    async def _announce_again(self, address: str, claim: dpb.RelayedRequest, keep_ms: int) -> None:
        """Keep the connection known to the replica while it lasts (every third of what it keeps it; an
        announcement not taken is tried again after :data:`ANNOUNCE_RETRY_S`)."""
        while True:
            await asyncio.sleep(keep_ms / 3000 if keep_ms else ANNOUNCE_RETRY_S)
            keep_ms = await self._announce(address, claim)

    async def _announce(self, address: str, claim: dpb.RelayedRequest) -> int:
        """Tell the replica at ``address`` what ``claim`` says: how long it keeps it (ms; 0: not taken)."""
        loop = asyncio.get_running_loop()
        if self._secret is None:
            assert self.secret is not None
            try:
                self._secret = await loop.run_in_executor(None, self.secret)
            except Exception as exc:  # Redis away: relayed all the same, counted per address
                log.warning("relay %s: cannot read the internal secret: %s", self.path, exc)
                return 0
        done: asyncio.Future[grpc.Future] = loop.create_future()

        def settle(call: grpc.Future) -> None:
            with contextlib.suppress(RuntimeError):  # the relay was closed meanwhile
                loop.call_soon_threadsafe(_settle, done, call)

        call = self._stub(address).Relayed.future(
            claim, metadata=((INTERNAL_METADATA, self._secret),), timeout=ANNOUNCE_TIMEOUT_S
        )
        call.add_done_callback(settle)
        try:
            reply = (await done).result()
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            if code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
                self._secret = None  # read it again next time
            log.info("relay %s: announcing %s to %s failed: %s", self.path, self.bot, address, code or exc)
            return 0
        finally:
            call.cancel()
        return int(reply.keep_ms) if reply.known else 0

    def _stub(self, address: str) -> dispatch_pb2_grpc.DispatchStub:
        channel = self._channels.get(address)
        if channel is None:
            if self.ca is not None:
                channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(self.ca), CHANNEL_OPTIONS)
            else:
                channel = grpc.insecure_channel(address, CHANNEL_OPTIONS)
            self._channels[address] = channel
        return dispatch_pb2_grpc.DispatchStub(channel)


def _settle(done: asyncio.Future[grpc.Future], call: grpc.Future) -> None:
    if not done.done():
        done.set_result(call)


async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    """Copy ``src`` to ``dst`` until ``src`` ends; then end ``dst`` too."""
    try:
        while chunk := await src.read(CHUNK):
            dst.write(chunk)
            await dst.drain()
    except (OSError, ConnectionError):
        pass
    finally:
        dst.close()
