"""Standard gRPC health checking and server reflection on a real engine."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from arena_harness import Arena
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

EXPECTED = {"tablanette.v1.BotGateway", "tablanette.v1.RulesService", "tablanette.v1.Dispatch", "grpc.health.v1.Health"}


@pytest.fixture(scope="module")
def port(module_arena: Arena) -> int:
    return module_arena.start_engine()[1]


@pytest.fixture(scope="module")
def channel(port: int) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield ch


def test_health_is_serving_for_the_server_and_each_service(channel: grpc.Channel) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ("", *sorted(EXPECTED - {"grpc.health.v1.Health"})):
        resp = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert resp.status == health_pb2.HealthCheckResponse.SERVING, service
    with pytest.raises(grpc.RpcError) as info:
        stub.Check(health_pb2.HealthCheckRequest(service="tablanette.v1.Nope"), timeout=5)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_health_list_names_each_service_with_its_status(channel: grpc.Channel) -> None:
    """The asyncio servicer of grpcio-health-checking leaves List out (UNIMPLEMENTED "Unexpected <class
    'NotImplementedError'>" and a traceback in the log, for every call): the engine's answers it."""
    resp = health_pb2_grpc.HealthStub(channel).List(health_pb2.HealthListRequest(), timeout=5)
    assert set(resp.statuses) == {"", *(EXPECTED - {"grpc.health.v1.Health"})}
    assert {s.status for s in resp.statuses.values()} == {health_pb2.HealthCheckResponse.SERVING}


def reflect(channel: grpc.Channel, **request: Any) -> reflection_pb2.ServerReflectionResponse:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(**request)]), timeout=5)
    return next(iter(responses))


def test_reflection_lists_the_services(channel: grpc.Channel) -> None:
    resp = reflect(channel, list_services="")
    names = {s.name for s in resp.list_services_response.service}
    assert names >= EXPECTED, names
    assert "grpc.reflection.v1alpha.ServerReflection" in names


def test_reflection_describes_the_bot_gateway(channel: grpc.Channel) -> None:
    resp = reflect(channel, file_containing_symbol="tablanette.v1.BotGateway")
    raw = resp.file_descriptor_response.file_descriptor_proto
    files = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in raw]
    arena = next(f for f in files if f.name == "tablanette/v1/arena.proto")
    connect = next(m for s in arena.service if s.name == "BotGateway" for m in s.method if m.name == "Connect")
    assert connect.client_streaming and connect.server_streaming
    assert connect.input_type == ".tablanette.v1.BotMessage"
    assert "tablanette/v1/game.proto" in arena.dependency
    resp = reflect(channel, file_containing_symbol="tablanette.v1.Nope")
    assert resp.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


GRPCURL = shutil.which("grpcurl")


@pytest.mark.skipif(GRPCURL is None, reason="grpcurl is not installed")
def test_grpcurl_lists_and_calls_the_services(port: int) -> None:
    assert GRPCURL is not None

    def grpcurl(*args: str) -> str:
        done = subprocess.run([GRPCURL, "-plaintext", *args], capture_output=True, text=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = set(grpcurl(f"127.0.0.1:{port}", "list").split())
    assert listed >= EXPECTED
    presets = json.loads(grpcurl("-d", "{}", f"127.0.0.1:{port}", "tablanette.v1.RulesService/ListPresets"))
    assert len(presets["presets"]) == 5
    health = json.loads(grpcurl(f"127.0.0.1:{port}", "grpc.health.v1.Health/Check"))
    assert health["status"] == "SERVING"
