"""Every request of the server decoded in one place, so a malformed one is refused alike on every RPC.

Left to itself, gRPC decodes a request before the servicer sees it and answers
bytes that do not decode with ``UNKNOWN`` "Unexpected <class
'google.protobuf.message.DecodeError'>: ...", logging an ERROR and a traceback
each time. :class:`DecodeGuard`, a server interceptor, takes the decoding over
for every method the server has (the Rules service, Dispatch, health,
reflection): the servicer is handed the message as before, and bytes that are
not one end the call with ``INVALID_ARGUMENT`` and
:func:`engine_service.malformed.reason`, noted in the
:class:`~engine_service.malformed.MalformedLog`.

A request stream is decoded message by message as the servicer reads it; a
malformed message ends the call with ``INVALID_ARGUMENT`` even when the
servicer catches what its reading raised. ``BotGateway.Connect`` decodes its own
(:data:`OWN_DECODING`): on the bot stream a wrapper would cost a step for every
message, and the gateway refuses a malformed one the same way.

The guard wraps the forms an asyncio server's servicers take (coroutines and
async generators: every servicer here, gRPC's health and reflection included)
with one coroutine or generator each, made once per method: a call costs one
more frame (``bench/rules_api.py`` could not tell ``LegalPlays`` with the guard
from without it on a shared 2-core machine: 1.56–1.81 against 1.18–2.15 times a
raw unary call, three runs each).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn

import grpc

from engine_service.limits import peer_address
from engine_service.malformed import MalformedLog, reason

OWN_DECODING = frozenset({"/tablanette.v1.BotGateway/Connect"})
"""Methods whose servicer decodes its own messages (:meth:`engine_service.gateway.Gateway.connect`)."""


class Malformed(ValueError):
    """A message of a request stream did not decode (raised to the servicer reading it)."""


class DecodeGuard(grpc.aio.ServerInterceptor):
    def __init__(self, malformed: MalformedLog) -> None:
        self.malformed = malformed
        self._guarded: dict[str, tuple[Any, Any]] = {}
        """Per method: the handler gRPC found, and its guarded twin (made once, not at every call)."""

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[Any]], details: grpc.HandlerCallDetails
    ) -> Any:
        handler = await continuation(details)
        if handler is None or handler.request_deserializer is None or details.method in OWN_DECODING:
            return handler
        method = details.method
        known = self._guarded.get(method)
        if known is not None and known[0] is handler:
            return known[1]
        guarded = self._guard(handler, method)
        self._guarded[method] = (handler, guarded)
        return guarded

    async def _refuse(self, context: grpc.aio.ServicerContext, method: str) -> NoReturn:
        self.malformed.note(peer_address(context.peer() or "?"), method)
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, reason(method))
        raise AssertionError("unreachable")  # context.abort raises

    def _guard(self, handler: Any, method: str) -> Any:
        """``handler`` with its requests decoded here (unchanged if its behavior is not of an asyncio form)."""
        decode, serialize = handler.request_deserializer, handler.response_serializer
        kind = ("stream" if handler.request_streaming else "unary") + "_"
        kind += "stream" if handler.response_streaming else "unary"
        behavior = getattr(handler, kind)
        generator = inspect.isasyncgenfunction(behavior)
        if not (generator or inspect.iscoroutinefunction(behavior)):
            return handler
        if not handler.request_streaming:

            async def unary(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
                try:
                    request = decode(raw)
                except Exception:  # whatever the decoder raises, the bytes are not the method's message
                    await self._refuse(context, method)
                return await behavior(request, context)

            async def unary_generator(raw: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                try:
                    request = decode(raw)
                except Exception:
                    await self._refuse(context, method)
                async for response in behavior(request, context):
                    yield response

            guarded: Any = unary_generator if generator else unary
        else:

            async def requests(raw: AsyncIterator[bytes], seen: list[bool]) -> AsyncIterator[Any]:
                async for message in raw:
                    try:
                        request = decode(message)
                    except Exception:
                        seen.append(True)
                        raise Malformed(reason(method)) from None
                    yield request

            async def streaming(raw: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> Any:
                seen: list[bool] = []
                with contextlib.suppress(Malformed):
                    response = await behavior(requests(raw, seen), context)
                if seen:  # even when the servicer caught it and ended as if all were well
                    await self._refuse(context, method)
                return response

            async def streaming_generator(
                raw: AsyncIterator[bytes], context: grpc.aio.ServicerContext
            ) -> AsyncIterator[Any]:
                seen: list[bool] = []
                with contextlib.suppress(Malformed):
                    async for response in behavior(requests(raw, seen), context):
                        yield response
                if seen:
                    await self._refuse(context, method)

            guarded = streaming_generator if generator else streaming
        make = getattr(grpc, f"{kind}_rpc_method_handler")
        return make(guarded, request_deserializer=None, response_serializer=serialize)
