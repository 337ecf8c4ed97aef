"""A raw gRPC bidirectional echo server: the baseline for bench/gateway.py.

No protobuf, no logic: each message received is sent straight back. Prints its
port on stdout, serves until killed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc

METHOD = "/bench.PingPong/Stream"


async def _echo(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for msg in requests:
        yield msg


async def main() -> None:
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.PingPong", {"Stream": grpc.stream_stream_rpc_method_handler(_echo)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
