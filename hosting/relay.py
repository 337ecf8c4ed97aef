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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import threading
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger("tablanette.relay")
CHUNK = 65536
CONNECT_TIMEOUT_S = 5.0


class Relay:
    """A Unix socket at ``path`` whose connections are relayed to ``addresses`` (``host:port``)."""

    def __init__(self, path: str | Path, addresses: Sequence[str], ca: bytes | None = None) -> None:
        self.path = Path(path)
        self.addresses = list(addresses)
        self.tls: ssl.SSLContext | None = None
        if ca is not None:
            self.tls = ssl.create_default_context(cadata=ca.decode())
            self.tls.set_alpn_protocols(["h2"])
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
            with contextlib.suppress(FileNotFoundError):
                if self.path.stat().st_ino == self._inode:  # ours, not a socket bound there since
                    self.path.unlink()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to the next engine replica that answers (None: none does now)."""
        for _ in range(len(self.addresses)):
            address = self.addresses[self._next % len(self.addresses)]
            self._next += 1
            host, _, port = address.rpartition(":")
            host = host.strip("[]")
            try:
                opening = asyncio.open_connection(
                    host, int(port), ssl=self.tls, server_hostname=host if self.tls else None
                )
                return await asyncio.wait_for(opening, CONNECT_TIMEOUT_S)
            except (OSError, ValueError, TimeoutError) as exc:
                log.warning("relay %s: cannot reach %s: %s", self.path, address, exc)
        return None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            outside = await self._connect()
            if outside is None:
                return  # the SDK sees the connection fail and tries again, as over TCP
            far_reader, far_writer = outside
            try:
                await asyncio.gather(_pump(reader, far_writer), _pump(far_reader, writer))
            finally:
                far_writer.close()
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()
            self._tasks.discard(task)


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
