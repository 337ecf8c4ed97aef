"""Dispatch: the internal API a match runner uses to reach a bot on this replica.

Only the arena calls it: every call carries the arena's shared secret (created
in Redis on first use, :func:`store.sessions.internal_secret`) in the
``x-tablanette-internal`` metadata; anything else is refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import grpc

from engine_service.local_match import play_match
from engine_service.time_control import TimeControl
from tablanette.v1 import dispatch_pb2, dispatch_pb2_grpc

if TYPE_CHECKING:  # match runners import INTERNAL_METADATA without the gateway
    from engine_service.gateway import Gateway

INTERNAL_METADATA = "x-tablanette-internal"
KEEPALIVE_MS = 5_000
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.enable_retries", 0),
    # A replica whose host is cut off sends no reset: without pings, a call to it (a match played
    # there) waited for the kernel to give the connection up, 7 minutes in tests/multihost. Pinged
    # every 5 s and given 5 s to answer, a dead replica fails its calls within about 10 s (UNAVAILABLE:
    # an arena fault), and the runner goes on through the replica its bots moved to. Only while a call
    # is open: an idle channel has nothing to lose. The replicas take pings this often, data or not
    # (engine_service.server.server_options).
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_MS),
    ("grpc.keepalive_permit_without_calls", 0),
)
"""Every arena channel to a replica's Dispatch service (match runners, other replicas, the hosting
meter). A restarted replica is reached again within about 2 s (gRPC's own default backs off to
2 minutes). gRPC's retries are off: every caller has its own, and with them on (grpcio 1.85) a
bot's stream that met a replica's shutdown GOAWAY as it started was parked for good, past its
deadline and past a cancel. Dispatch calls send their request at once and were not caught so in
tests/service/test_shutdown_goaway.py, but gRPC's retries would add nothing here but that risk."""


class DispatchServicer(dispatch_pb2_grpc.DispatchServicer):
    def __init__(self, gateway: Gateway, secret: str) -> None:
        self.gateway = gateway
        self.secret = secret

    async def _check(self, context: grpc.aio.ServicerContext) -> None:
        given = dict(context.invocation_metadata() or ()).get(INTERNAL_METADATA)
        if given != self.secret:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "Dispatch is internal to the arena")

    async def RequestPlay(
        self, request: dispatch_pb2.PlayRequest, context: grpc.aio.ServicerContext
    ) -> dispatch_pb2.PlayResponse:
        await self._check(context)
        try:
            control = TimeControl.from_pb(request.time_control) if request.HasField("time_control") else None
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad time control: {exc}")
        return await self.gateway.request_play(request, control)

    async def EndGame(
        self, request: dispatch_pb2.EndGameRequest, context: grpc.aio.ServicerContext
    ) -> dispatch_pb2.EndGameResponse:
        await self._check(context)
        return await self.gateway.end_game(request)

    async def SessionLive(
        self, request: dispatch_pb2.SessionLiveRequest, context: grpc.aio.ServicerContext
    ) -> dispatch_pb2.SessionLiveResponse:
        await self._check(context)
        return dispatch_pb2.SessionLiveResponse(live=self.gateway.session_live(request.bot_name, request.session_id))

    async def Meter(
        self, request_iterator: AsyncIterator[dispatch_pb2.MeterReport], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[dispatch_pb2.MeterAsk]:
        await self._check(context)
        async for ask in self.gateway.meters.serve(request_iterator, context.peer() or "?"):
            yield ask

    async def Relayed(
        self, request: dispatch_pb2.RelayedRequest, context: grpc.aio.ServicerContext
    ) -> dispatch_pb2.RelayedResponse:
        """A bot host's relay says which hosted version a connection carries (:mod:`engine_service.relayed`)."""
        await self._check(context)
        relayed = self.gateway.relayed
        args = (request.host, request.port, request.bot_name, request.connection)
        try:
            if request.closed:
                relayed.forget(*args)
            else:
                relayed.announce(*args)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed relayed connection: {exc}")
        return dispatch_pb2.RelayedResponse(known=not request.closed, keep_ms=int(relayed.keep_s * 1000))

    async def PlayMatch(
        self, request: dispatch_pb2.PlayMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[dispatch_pb2.MatchEvents]:
        await self._check(context)
        try:
            async for batch in play_match(self.gateway, request):
                yield batch
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
