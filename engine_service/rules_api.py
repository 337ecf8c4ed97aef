"""The stateless Rules service: rules questions over gRPC, answered off the event loop.

Each call, ``ListPresets`` included, is rate-limited per peer address. A
question whose size bounds its cost (a position of a real deal: see
:func:`engine_service.rules_answers.small`) is answered at once; any other goes
to a small pool of worker processes (:mod:`engine_service.rules_answers`) with a
deadline, so no question, however hard, can stall the bot streams this replica
serves. Bad input answers INVALID_ARGUMENT with the engine's own message (so do
a message that does not decode, :mod:`engine_service.decode_guard`, and JSON
too long or nested too deep, :mod:`engine_service.rules.bounded_json`); a
position with too many capture sets, too many calls or a full pool answer
RESOURCE_EXHAUSTED (with a ``retry-after-ms`` hint where waiting helps); a
question past its deadline, DEADLINE_EXCEEDED.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import grpc

from config import ArenaSettings
from engine_service.limits import RateLimit, abort_busy, peer_address
from engine_service.rules import PRESETS, Rules
from engine_service.rules_answers import answer, respond, small
from engine_service.wire import convert
from tablanette.v1 import rules_pb2 as rpb
from tablanette.v1 import rules_pb2_grpc

QUEUE_PER_WORKER = 4
"""Questions waiting per worker process before the service says it is busy."""


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    def __init__(self, settings: ArenaSettings, key: Callable[[str], str] = peer_address) -> None:
        """``key``: what a call's rate is counted under, from its peer string (the address; a relayed hosted
        bot's version, :meth:`engine_service.relayed.RelayedPeers.key`)."""
        self.settings = settings
        self.key = key
        self.limit = RateLimit(settings.rules_rate, settings.rules_burst)
        self.in_flight = 0
        self._pool: ProcessPoolExecutor | None = None

    @property
    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:  # started on first use; "spawn": a clean process, not a fork of the server
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(self.settings.rules_workers, mp_context=context)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    async def _limited(self, context: grpc.aio.ServicerContext) -> None:
        """Spend one of the caller's Rules calls (RESOURCE_EXHAUSTED when it has none left)."""
        wait = self.limit.take(self.key(context.peer() or ""))
        if wait:
            await abort_busy(context, f"more than {self.settings.rules_rate:g} Rules calls per second", wait)

    async def _ask(self, method: str, request: Any, response: Any, context: grpc.aio.ServicerContext) -> Any:
        await self._limited(context)
        if small(method, request):
            status, payload = respond(method, request, self.settings.rules_max_plays)
            return await self._reply(status, payload, response, context)
        if self.in_flight >= self.settings.rules_workers * QUEUE_PER_WORKER:
            await abort_busy(context, "the Rules service is busy", 0.1)
        self.in_flight += 1
        try:
            future = self.pool.submit(answer, method, request.SerializeToString(), self.settings.rules_max_plays)
            status, payload = await asyncio.wait_for(
                asyncio.wrap_future(future), self.settings.rules_deadline_ms / 1000
            )
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"the question took over {self.settings.rules_deadline_ms} ms"
            )
        finally:
            self.in_flight -= 1
        return await self._reply(status, payload, response, context)

    async def _reply(self, status: str, payload: Any, response: Any, context: grpc.aio.ServicerContext) -> Any:
        """The answer, or the refusal it stands for."""
        if status == "invalid":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(payload))
        if status == "too-many":
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(payload))
        return response.FromString(payload) if isinstance(payload, bytes) else payload

    async def ListPresets(
        self, request: rpb.ListPresetsRequest, context: grpc.aio.ServicerContext
    ) -> rpb.ListPresetsResponse:
        await self._limited(context)
        return rpb.ListPresetsResponse(
            presets=[
                rpb.Preset(
                    name=name,
                    allowed_players=list(spec.players),
                    source=spec.source,
                    rules=convert.rules_to_pb(Rules.preset(name, players=spec.players[0])),
                )
                for name, spec in PRESETS.items()
            ]
        )

    async def LegalPlays(
        self, request: rpb.LegalPlaysRequest, context: grpc.aio.ServicerContext
    ) -> rpb.LegalPlaysResponse:
        return await self._ask("LegalPlays", request, rpb.LegalPlaysResponse, context)  # type: ignore[no-any-return]

    async def ApplyPlay(
        self, request: rpb.ApplyPlayRequest, context: grpc.aio.ServicerContext
    ) -> rpb.ApplyPlayResponse:
        return await self._ask("ApplyPlay", request, rpb.ApplyPlayResponse, context)  # type: ignore[no-any-return]

    async def ScoreDeal(
        self, request: rpb.ScoreDealRequest, context: grpc.aio.ServicerContext
    ) -> rpb.ScoreDealResponse:
        return await self._ask("ScoreDeal", request, rpb.ScoreDealResponse, context)  # type: ignore[no-any-return]

    async def VerifyRecord(
        self, request: rpb.VerifyRecordRequest, context: grpc.aio.ServicerContext
    ) -> rpb.VerifyRecordResponse:
        return await self._ask("VerifyRecord", request, rpb.VerifyRecordResponse, context)  # type: ignore[no-any-return]

    async def PossibleWorlds(
        self, request: rpb.PossibleWorldsRequest, context: grpc.aio.ServicerContext
    ) -> rpb.PossibleWorldsResponse:
        return await self._ask("PossibleWorlds", request, rpb.PossibleWorldsResponse, context)  # type: ignore[no-any-return]
