"""Dispatch: the internal API a match runner uses to reach a bot on this replica.

Only the arena calls it: every call carries the arena's shared secret (created
in Redis on first use, :func:`store.sessions.internal_secret`) in the
``x-tablanette-internal`` metadata; anything else is refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import grpc

from engine_service.local_match import play_streamed
from engine_service.time_control import TimeControl
from tablanette.v1 import dispatch_pb2, dispatch_pb2_grpc

if TYPE_CHECKING:
    from engine_service.gateway import Gateway

from config.internal_calls import INTERNAL_METADATA


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
            async for batch in play_streamed(self.gateway, request):
                yield batch
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
