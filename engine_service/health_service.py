"""gRPC health checking, all of it: ``Check``, ``Watch`` and ``List``.

grpcio-health-checking's asyncio servicer leaves ``List`` out: its generated
base class answers every ``List`` call with UNIMPLEMENTED "Unexpected <class
'NotImplementedError'>: Method not implemented!" and logs a traceback for it.
:class:`HealthServicer` answers it with the status of every service set here.
"""

from __future__ import annotations

from typing import Any

from grpc_health.v1 import health, health_pb2


class HealthServicer(health.aio.HealthServicer):
    def __init__(self) -> None:
        super().__init__()
        self.statuses: dict[str, int] = {"": health_pb2.HealthCheckResponse.SERVING}

    async def set(self, service: str, status: int) -> None:
        self.statuses[service] = status
        await super().set(service, status)

    async def List(self, request: health_pb2.HealthListRequest, context: Any) -> health_pb2.HealthListResponse:
        return health_pb2.HealthListResponse(
            statuses={name: health_pb2.HealthCheckResponse(status=status) for name, status in self.statuses.items()}
        )
