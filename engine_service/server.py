"""The engine service process: bot gateway, Rules API, Dispatch, health, reflection, metrics.

``tablanette serve`` runs :func:`run`. Servicers here only translate; the logic
lives in :mod:`engine_service.gateway` and :mod:`engine_service.rules_api`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

import telemetry
from config import ArenaSettings
from config.internal_calls import CHANNEL_OPTIONS, INTERNAL_METADATA, KEEPALIVE_MS
from engine_service import metrics
from engine_service.admission import Admission
from engine_service.decode_guard import DecodeGuard
from engine_service.dispatch import DispatchServicer
from engine_service.gateway import Gateway
from engine_service.health_service import HealthServicer
from engine_service.rules_api import RulesServicer
from store import printable
from store.audit import AsyncAuditLog
from store.client import SentinelError, connect_async, redacted
from store.keys import Keys
from store.sessions import SessionEntry, SessionRegistry, internal_secret
from store.tokens import lookup_token
from tablanette.v1 import arena_pb2, arena_pb2_grpc, dispatch_pb2, dispatch_pb2_grpc, rules_pb2

log = logging.getLogger("tablanette.server")
TRANSPORT_MIN_BYTES = 64 << 10
REDIS_CONNECTIONS = 64
"""Redis connections of one replica; more concurrent commands wait for one."""
PROBE_TIMEOUT_S = 1.0
RELEASE_WAIT_S = 5.0
"""How long a stopping replica waits for the registry deletes of its ended sessions (else their TTL ends them)."""
MAX_STREAMS_PER_CONNECTION = 1000
"""Concurrent streams on one HTTP/2 connection (a bot uses one; a worker, one per game it plays)."""
SERVICES = (
    arena_pb2.DESCRIPTOR.services_by_name["BotGateway"].full_name,
    rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name,
    dispatch_pb2.DESCRIPTOR.services_by_name["Dispatch"].full_name,
)


class BotGatewayServicer(arena_pb2_grpc.BotGatewayServicer):
    """``Connect`` is the gateway's own :meth:`~engine_service.gateway.Gateway.connect` (an async
    generator gRPC drives directly): a wrapper would cost a generator step for every message."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.Connect = gateway.connect


def server_options(settings: ArenaSettings) -> list[tuple[str, int]]:
    return [
        ("grpc.so_reuseport", 0),  # a second replica on a taken port must fail, not share it
        # The transport refuses a message over the bot message limit before reading it whole; a limit
        # set below 64 KiB still lets the runners' Dispatch requests through (the gateway then applies
        # the bot limit itself).
        ("grpc.max_receive_message_length", max(settings.max_message_bytes, TRANSPORT_MIN_BYTES)),
        ("grpc.max_send_message_length", 16 << 20),
        # A client that stops reading can leave streams that gRPC's core holds until its connection
        # closes (the gateway has let go of them: see BotConnection.cut); bound them per connection.
        ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        # The arena's own callers ping every KEEPALIVE_MS during a call, even one waiting on a slow bot with
        # no data moving (engine_service.dispatch): take that without counting it as abuse (gRPC's default
        # answers pings more often than every 5 minutes without data with GOAWAY "too_many_pings").
        ("grpc.http2.min_recv_ping_interval_without_data_ms", KEEPALIVE_MS - 1_000),
        ("grpc.http2.max_pings_without_data", 0),
    ]


class EngineServer:
    """A started engine service; :meth:`stop` drains it."""

    def __init__(self, settings: ArenaSettings) -> None:
        self.settings = settings
        # waits out Redis outages (and logs them); a burst of Hellos waits for a connection, never fails for one
        self.redis = connect_async(settings.redis_url, ride_out=True, max_connections=REDIS_CONNECTIONS)
        self.registry = SessionRegistry(self.redis, settings.prefix, settings.session_ttl_ms)
        self.audit = AsyncAuditLog(self.redis, settings.prefix)
        admission = Admission(settings, self.registry, self._lookup_token, self.audit, self._session_live_elsewhere)
        self.gateway = Gateway(settings, self.registry, admission, self._tokens_exist)
        self._secret = ""
        self._peers: dict[str, grpc.aio.Channel] = {}
        self._events: asyncio.Task[None] | None = None
        self.health = HealthServicer()
        # every request decoded by the guard: a malformed one is INVALID_ARGUMENT on every RPC, never UNKNOWN
        self.server = grpc.aio.server(
            interceptors=[DecodeGuard(self.gateway.malformed)], options=server_options(settings)
        )
        self._upkeep: asyncio.Task[None] | None = None
        self.rules: RulesServicer | None = None
        self.port = 0

    async def _lookup_token(self, token: str) -> str | None:
        return await lookup_token(self.redis, self.settings.prefix, token)

    async def _tokens_exist(self, digests: list[str]) -> list[bool]:
        keys = Keys(self.settings.prefix)
        pipe = self.redis.pipeline(transaction=False)
        for d in digests:
            pipe.exists(keys.token(d))
        return [bool(n) for n in await pipe.execute()]

    async def _session_live_elsewhere(self, entry: SessionEntry) -> bool:
        """Ask the replica holding the bot whether that session is live; a replica that does not answer: no."""
        channel = self._peers.get(entry.replica)
        if channel is None:
            if self.settings.tls_ca:
                creds = grpc.ssl_channel_credentials(Path(self.settings.tls_ca).read_bytes())
                channel = grpc.aio.secure_channel(entry.replica, creds, CHANNEL_OPTIONS)
            else:
                channel = grpc.aio.insecure_channel(entry.replica, CHANNEL_OPTIONS)
            self._peers[entry.replica] = channel
        request = dispatch_pb2.SessionLiveRequest(bot_name=entry.bot, session_id=entry.session_id)
        try:
            reply = await dispatch_pb2_grpc.DispatchStub(channel).SessionLive(
                request, metadata=((INTERNAL_METADATA, self._secret),), timeout=PROBE_TIMEOUT_S
            )
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.live)

    async def _follow_events(self) -> None:
        """Every replica acts on the arena's notices (a revoked token) at once; resubscribes after an outage."""
        channel = Keys(self.settings.prefix).events
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(channel)
                await self.gateway.upkeep.follow(pubsub.listen())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: the upkeep's token check covers what is missed meanwhile
                log.warning("notices from Redis interrupted (%s); subscribing again", exc)
                await asyncio.sleep(1.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]  # untyped before redis-py 8.2

    async def start(self) -> int:
        secret = self._secret = await internal_secret(self.redis, self.settings.prefix)
        arena_pb2_grpc.add_BotGatewayServicer_to_server(BotGatewayServicer(self.gateway), self.server)
        from tablanette.v1 import rules_pb2_grpc

        self.rules = RulesServicer(self.settings, self.gateway.relayed.key)
        rules_pb2_grpc.add_RulesServiceServicer_to_server(self.rules, self.server)
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
            self.gateway.settings = self.gateway.admission.settings = self.gateway.upkeep.settings = self.settings
        await self.server.start()
        for name in ("", *SERVICES):
            await _set_health(self.health, name, health_pb2.HealthCheckResponse.SERVING)
        self._upkeep = asyncio.create_task(self.gateway.upkeep.run())
        self._events = asyncio.create_task(self._follow_events())
        metrics.count_connected(lambda: len(self.gateway.connections))
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
        for task in (self._upkeep, self._events):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.gateway.released(RELEASE_WAIT_S)  # the registry deletes of the streams that just ended
        for channel in self._peers.values():
            await channel.close()
        if self.rules is not None:
            self.rules.close()
        await self.redis.aclose()


async def _set_health(servicer: HealthServicer, name: str, status: int) -> None:
    await servicer.set(name, status)


async def serve(settings: ArenaSettings) -> None:
    """Run until SIGINT/SIGTERM, then drain."""
    server = EngineServer(settings)
    port = await server.start()
    print(
        f"engine service listening on {settings.host}:{port} "
        f"(redis {redacted(settings.redis_url)}, prefix {settings.prefix!r})",
        flush=True,
    )
    if settings.metrics_port is not None:
        metrics_port = telemetry.serve(settings.metrics_port, settings.metrics_host)
        print(f"metrics on {settings.metrics_host}:{metrics_port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    print("draining engine service ...", flush=True)
    await server.stop()


class ClientGoneFilter(logging.Filter):
    """Drop gRPC's error (with a traceback) for a stream whose client went away while a message was
    being written to it: an everyday event, which the gateway logs itself in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("ExecuteBatchError raised in core")


def run(settings: ArenaSettings) -> None:
    printable.log_printably(logging.INFO)
    logging.getLogger("grpc._cython.cygrpc").addFilter(ClientGoneFilter())
    try:
        asyncio.run(serve(settings))
    except SentinelError as exc:  # Sentinels that cannot name a primary: a line, not a traceback
        sys.exit(f"tablanette serve: {exc}")
