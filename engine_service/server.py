"""The engine service process: bot gateway, Rules API, Dispatch, health, reflection.

``tablanette serve`` runs :func:`run`. Servicers here only translate; the logic
lives in :mod:`engine_service.gateway` and :mod:`engine_service.rules_api`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from config import ArenaSettings
from engine_service.dispatch import DispatchServicer
from engine_service.gateway import Gateway
from engine_service.rules_api import RulesServicer
from store.client import connect_async
from store.sessions import SessionRegistry, internal_secret
from store.tokens import lookup_token
from tablanette.v1 import arena_pb2, arena_pb2_grpc, dispatch_pb2, dispatch_pb2_grpc, rules_pb2

log = logging.getLogger("tablanette.server")
TRANSPORT_MIN_BYTES = 4 << 20
SERVICES = (
    arena_pb2.DESCRIPTOR.services_by_name["BotGateway"].full_name,
    rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name,
    dispatch_pb2.DESCRIPTOR.services_by_name["Dispatch"].full_name,
)


class BotGatewayServicer(arena_pb2_grpc.BotGatewayServicer):
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def Connect(
        self, request_iterator: AsyncIterator[arena_pb2.BotMessage], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[arena_pb2.ServerMessage]:
        async for msg in self.gateway.connect(request_iterator, context):
            yield msg


def server_options(settings: ArenaSettings) -> list[tuple[str, int]]:
    return [
        ("grpc.so_reuseport", 0),  # a second replica on a taken port must fail, not share it
        # The transport cap; the gateway applies the (smaller) bot message limit itself, so
        # the runner's Dispatch requests are never refused for a bot's limit.
        ("grpc.max_receive_message_length", max(settings.max_message_bytes, TRANSPORT_MIN_BYTES)),
        ("grpc.max_send_message_length", 16 << 20),
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.http2.max_pings_without_data", 0),
    ]


class EngineServer:
    """A started engine service; :meth:`stop` drains it."""

    def __init__(self, settings: ArenaSettings) -> None:
        self.settings = settings
        self.redis = connect_async(settings.redis_url, ride_out=True)  # waits out Redis outages, and logs them
        self.registry = SessionRegistry(self.redis, settings.prefix, settings.session_ttl_ms)
        self.gateway = Gateway(settings, self.registry, self._lookup_token)
        self.health = health.aio.HealthServicer() if hasattr(health, "aio") else health.HealthServicer()
        self.server = grpc.aio.server(options=server_options(settings))
        self._upkeep: asyncio.Task[None] | None = None
        self.port = 0

    async def _lookup_token(self, token: str) -> str | None:
        return await lookup_token(self.redis, self.settings.prefix, token)

    async def start(self) -> int:
        secret = await internal_secret(self.redis, self.settings.prefix)
        arena_pb2_grpc.add_BotGatewayServicer_to_server(BotGatewayServicer(self.gateway), self.server)
        from tablanette.v1 import rules_pb2_grpc

        rules_pb2_grpc.add_RulesServiceServicer_to_server(RulesServicer(), self.server)
        dispatch_pb2_grpc.add_DispatchServicer_to_server(DispatchServicer(self.gateway, secret), self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            (*SERVICES, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            self.server,
        )
        address = f"{self.settings.host}:{self.settings.port}"
        if self.settings.tls_cert and self.settings.tls_key:
            creds = grpc.ssl_server_credentials(
                [(Path(self.settings.tls_key).read_bytes(), Path(self.settings.tls_cert).read_bytes())]
            )
            self.port = self.server.add_secure_port(address, creds)
        else:
            self.port = self.server.add_insecure_port(address)
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        if self.settings.port == 0:  # a free port was asked for: advertise the real one
            self.settings = self.settings.model_copy(
                update={"port": self.port, "advertise": f"{self.settings.host}:{self.port}"}
            )
            self.gateway.settings = self.settings
        await self.server.start()
        for name in ("", *SERVICES):
            await _set_health(self.health, name, health_pb2.HealthCheckResponse.SERVING)
        self._upkeep = asyncio.create_task(self.gateway.upkeep())
        log.info(
            "engine service listening on %s (%s), advertised as %s; redis %s, key prefix %r",
            f"{self.settings.host}:{self.port}",
            "TLS" if self.settings.tls_cert else "plaintext",
            self.settings.advertise,
            self.settings.redis_url,
            self.settings.prefix,
        )
        return self.port

    async def stop(self, grace: float | None = None) -> None:
        """Graceful drain: NOT_SERVING, ask bots to reconnect elsewhere, finish in-flight calls."""
        for name in ("", *SERVICES):
            await _set_health(self.health, name, health_pb2.HealthCheckResponse.NOT_SERVING)
        self.gateway.drain()
        await self.server.stop(self.settings.drain_seconds if grace is None else grace)
        if self._upkeep is not None:
            self._upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._upkeep
        await self.redis.aclose()


async def _set_health(servicer: object, name: str, status: int) -> None:
    result = servicer.set(name, status)  # type: ignore[attr-defined]
    if asyncio.iscoroutine(result):
        await result


async def serve(settings: ArenaSettings) -> None:
    """Run until SIGINT/SIGTERM, then drain."""
    server = EngineServer(settings)
    port = await server.start()
    print(
        f"engine service listening on {settings.host}:{port} (redis {settings.redis_url}, prefix {settings.prefix!r})",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    print("draining engine service ...", flush=True)
    await server.stop()


def run(settings: ArenaSettings) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    asyncio.run(serve(settings))
