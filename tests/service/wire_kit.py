"""A client of every RPC an engine replica serves, written from the ``.proto`` files alone, that sends bytes.

:data:`RPCS` lists every method of the arena's services, of gRPC health and of
reflection, from their descriptors; :func:`call` sends one method exactly the
bytes it is given (an identity serializer: no SDK, no stub checks them) and
returns how the call ended. :func:`sample` builds a request with every field
set, for a mutation to start from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

from tablanette.v1 import arena_pb2, dispatch_pb2, rules_pb2

INTERNALS = re.compile(r"<class|Traceback|\b[A-Z]\w*(Error|Exception)\b|File \"")
"""What no reply may show: a Python class, a traceback, an exception's name, a source line."""


@dataclass(frozen=True)
class Rpc:
    path: str
    request: descriptor.Descriptor
    client_streaming: bool
    server_streaming: bool

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[1]

    def message(self) -> type[Message]:
        return message_factory.GetMessageClass(self.request)


RPCS = [
    Rpc(f"/{service.full_name}/{m.name}", m.input_type, m.client_streaming, m.server_streaming)
    for module in (rules_pb2, dispatch_pb2, arena_pb2, health_pb2, reflection_pb2)
    for service in module.DESCRIPTOR.services_by_name.values()
    for m in service.methods
]
BY_NAME = {rpc.path.lstrip("/"): rpc for rpc in RPCS}


@dataclass
class Ended:
    """How a call ended: its status, details and the responses it got first."""

    code: grpc.StatusCode
    details: str
    responses: list[bytes]


def call(
    channel: grpc.Channel,
    rpc: Rpc,
    payload: bytes | list[bytes],
    timeout: float = 10,
    max_responses: int = 2,
    metadata: tuple[tuple[str, str], ...] = (),
) -> Ended:
    """Send ``payload`` as ``rpc``'s request (a list: a stream's requests), exactly; a stream's requests then end.

    A response stream is read until it ends, or ``max_responses`` came (then the call is cancelled: OK).
    """

    def raw(b: bytes) -> bytes:
        return b

    kind = ("unary" if not rpc.client_streaming else "stream") + "_" + ("stream" if rpc.server_streaming else "unary")
    method = getattr(channel, kind)(rpc.path, request_serializer=raw, response_deserializer=raw)
    if rpc.client_streaming:
        request: Any = iter(payload if isinstance(payload, list) else [payload])
    else:
        request = payload
    responses: list[bytes] = []
    try:
        if not rpc.server_streaming:
            responses.append(method(request, timeout=timeout, metadata=metadata))
            return Ended(grpc.StatusCode.OK, "", responses)
        stream = method(request, timeout=timeout, metadata=metadata)
        for response in stream:
            responses.append(response)
            if len(responses) >= max_responses:
                stream.cancel()
                break
        return Ended(grpc.StatusCode.OK, "", responses)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.CANCELLED and len(responses) >= max_responses:
            return Ended(grpc.StatusCode.OK, "", responses)
        return Ended(exc.code(), exc.details() or "", responses)


def sample(kind: descriptor.Descriptor, depth: int = 0) -> Message:
    """A message of ``kind`` with every field set (twice for a repeated one), nested messages too (3 deep)."""
    msg = message_factory.GetMessageClass(kind)()
    for field in kind.fields:
        values = [_value(field, depth, i) for i in range(2 if _repeated(field) else 1)]
        if any(v is None for v in values):
            continue
        target = getattr(msg, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            for key, v in values:
                if isinstance(v, Message):
                    target[key].CopyFrom(v)
                else:
                    target[key] = v
        elif _repeated(field):
            for v in values:
                if isinstance(v, Message):
                    target.add().CopyFrom(v)
                else:
                    target.append(v)
        elif isinstance(values[0], Message):
            target.CopyFrom(values[0])
        else:
            setattr(msg, field.name, values[0])
    return msg


def _repeated(field: descriptor.FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def _value(field: descriptor.FieldDescriptor, depth: int, i: int) -> Any:
    t = descriptor.FieldDescriptor
    if field.message_type is not None:
        if field.message_type.GetOptions().map_entry:
            key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
            return (_value(key, depth + 1, i), _value(value, depth + 1, i))
        return sample(field.message_type, depth + 1) if depth < 3 else None
    scalars = {
        t.TYPE_STRING: ["AH", "10D"][i],
        t.TYPE_BYTES: b"\x01\x02",
        t.TYPE_BOOL: True,
        t.TYPE_DOUBLE: 1.5,
        t.TYPE_FLOAT: 0.5,
    }
    if field.type == t.TYPE_ENUM:
        return field.enum_type.values[-1].number
    return scalars.get(field.type, 1 + i)
