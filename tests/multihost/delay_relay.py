"""A TCP relay that adds latency: the far side of a slow link, for the namespace tests.

This machine's kernel has no ``sch_netem`` (``tc netem``), so latency is added
here instead, on a host of its own between the bots and the engine replicas:
every byte read from either side is written to the other ``--delay-ms`` later,
in order, each way. A bot that dials the relay sees its replica
2 x delay further away, as behind a slow link (bandwidth is not limited, and
TCP's own handshakes and acknowledgements are the relay's, not delayed).

Run: ``python delay_relay.py LISTEN_HOST:PORT=TARGET_HOST:PORT/DELAY_MS ...``;
prints ``relaying`` once every listener is up, and serves until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy ``reader`` to ``writer``, each chunk ``delay`` seconds after it arrived."""
    chunks: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await chunks.get()
            if not data:
                break
            if (wait := due - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(deliver())
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            chunks.put_nowait((time.monotonic() + delay, data))
    chunks.put_nowait((time.monotonic() + delay, b""))  # the end, after what came before it
    with contextlib.suppress(ConnectionError):
        await sender


def handler(target: tuple[str, int], delay: float):  # type: ignore[no-untyped-def]
    async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(*target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            pipe(client_reader, server_writer, delay), pipe(server_reader, client_writer, delay), return_exceptions=True
        )

    return relay


def split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


async def main(specs: list[str]) -> None:
    servers = []
    for spec in specs:
        listen, _, rest = spec.partition("=")
        target, _, delay_ms = rest.partition("/")
        servers.append(await asyncio.start_server(handler(split(target), int(delay_ms) / 1000), *split(listen)))
    print("relaying", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
