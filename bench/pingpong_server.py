"""A raw gRPC echo server: the baseline for bench/gateway.py and bench/rules_api.py.

No protobuf, no logic: each message received on the bidirectional ``Stream`` is
sent straight back, and ``Unary`` returns its request. Prints its port on
stdout, serves until killed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc

METHOD = "/bench.PingPong/Stream"
UNARY = "/bench.PingPong/Unary"


async def _echo(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for msg in requests:
        yield msg


async def _unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


async def main() -> None:
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.PingPong",
        {
            "Stream": grpc.stream_stream_rpc_method_handler(_echo),
            "Unary": grpc.unary_unary_rpc_method_handler(_unary),
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
