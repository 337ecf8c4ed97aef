"""What a client written from the ``.proto`` alone gets for bytes that are not a request (issue 45, items 1–4).

Every client here sends exact bytes (:mod:`wire_kit`, or raw HTTP/2 frames for
what no gRPC library sends): no SDK, no token. Every RPC answers a message that
does not decode with INVALID_ARGUMENT and a reason of the arena's own, never a
Python class or a traceback; JSON nested too deep to parse is refused the same
way; the engine logs malformed input once per peer per interval, as a counted
line, and counts it in a metric; ``ListPresets`` is inside the Rules rate limit.
"""

from __future__ import annotations

import re
import struct
import time
from collections.abc import Iterator

import grpc
import pytest
from arena_harness import Arena, Proc, metrics_port, scrape
from hostile_kit import H2Stream
from wire_kit import BY_NAME, RPCS, call

from config.internal_calls import INTERNAL_METADATA
from store.keys import Keys
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb

GARBAGE = b"\xff\xff\xff"
"""The issue's reproducer: a field tag whose varint never ends."""
LOG_S = 2
"""The strict engine's interval between two counted lines of one peer."""


@pytest.fixture(scope="module")
def port(module_arena: Arena) -> int:
    return module_arena.start_engine("engine-wire")[1]


@pytest.fixture(scope="module")
def channel(port: int) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield ch


@pytest.fixture(scope="module")
def strict(module_arena: Arena) -> tuple[Proc, int, int]:
    """An engine of its own (its log and counters are the tests'): a short log interval, metrics, a small
    Rules bucket."""
    proc, port = module_arena.start_engine(
        "engine-strict",
        TABLANETTE_MALFORMED_LOG_S=str(LOG_S),
        TABLANETTE_METRICS_PORT="0",
        TABLANETTE_RULES_RATE="0.5",
        TABLANETTE_RULES_BURST="3",
    )
    return proc, port, metrics_port(proc)


UNARY_REQUEST = [rpc for rpc in RPCS if not rpc.client_streaming]


@pytest.mark.parametrize("rpc", UNARY_REQUEST, ids=[rpc.name for rpc in UNARY_REQUEST])
def test_an_undecodable_request_is_invalid_argument_with_a_reason_of_ours(channel: grpc.Channel, rpc: object) -> None:
    """``ff ff ff``, no token: every unary or server-streaming RPC (Rules, Dispatch, health) answers
    INVALID_ARGUMENT "malformed message: not a request of SERVICE/METHOD", not UNKNOWN "Unexpected <class ...".
    """
    ended = call(channel, rpc, GARBAGE)  # type: ignore[arg-type]
    assert ended.code == grpc.StatusCode.INVALID_ARGUMENT, (ended.code, ended.details)
    assert ended.details == f"malformed message: not a request of {rpc.path.lstrip('/')}"  # type: ignore[attr-defined]


def test_an_undecodable_message_on_a_request_stream_is_invalid_argument(channel: grpc.Channel) -> None:
    """The request streams: reflection's (gRPC's own servicer), and the bot stream (the gateway decodes its own)."""
    for name in ("grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", "tablanette.v1.BotGateway/Connect"):
        ended = call(channel, BY_NAME[name], GARBAGE)
        assert ended.code == grpc.StatusCode.INVALID_ARGUMENT, (name, ended.code, ended.details)
        assert ended.details == f"malformed message: not a request of {name}"


def test_a_malformed_report_ends_the_meter_stream_invalid_argument(module_arena: Arena, channel: grpc.Channel) -> None:
    """Dispatch.Meter (with the arena's secret) catches whatever reading its stream raises and ended OK: the
    guard still answers the malformed message INVALID_ARGUMENT."""
    secret = module_arena.redis.get(Keys(module_arena.prefix).internal_secret)
    assert secret
    valid = dpb.MeterReport(claim=["a-bot"]).SerializeToString()
    rpc = BY_NAME["tablanette.v1.Dispatch/Meter"]
    ended = call(channel, rpc, [valid, GARBAGE], metadata=((INTERNAL_METADATA, secret.decode()),), max_responses=9)
    assert (ended.code, ended.details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "malformed message: not a request of tablanette.v1.Dispatch/Meter",
    )


@pytest.mark.parametrize(
    "json_text", ['{"a":' * 5000, "[" * 200_000, "[" * 40 + "]" * 40], ids=["objects", "arrays", "just-too-deep"]
)
def test_verify_record_refuses_json_nested_too_deep(channel: grpc.Channel, json_text: str) -> None:
    """Before: UNKNOWN "Unexpected <class 'RecursionError'>" (the parser recursed once per level)."""
    request = rpb.VerifyRecordRequest(record_json=json_text).SerializeToString()
    ended = call(channel, BY_NAME["tablanette.v1.RulesService/VerifyRecord"], request)
    assert (ended.code, ended.details) == (grpc.StatusCode.INVALID_ARGUMENT, "JSON nested deeper than 32 levels")


def test_a_rule_override_nested_too_deep_is_invalid_argument(channel: grpc.Channel) -> None:
    """An override's value is JSON too (``ace_values='[1,14]'``), parsed where the question is answered."""
    spec = gpb.RulesSpec(preset="tablic", overrides={"ace_values": "[" * 4000})
    request = rpb.LegalPlaysRequest(rules=spec, position=rpb.Position(table=["AH"]), card="KC")
    ended = call(channel, BY_NAME["tablanette.v1.RulesService/LegalPlays"], request.SerializeToString())
    assert ended.code == grpc.StatusCode.INVALID_ARGUMENT, (ended.code, ended.details)
    assert ended.details == "rule ace_values: JSON nested deeper than 32 levels"


@pytest.mark.parametrize(
    "frames",
    [b"", b"\x00\x00\x00", struct.pack(">BI", 0, 100) + b"x" * 10],
    ids=["no-message", "a-cut-prefix", "a-cut-message"],
)
def test_a_bot_stream_that_ends_before_its_hello_is_invalid_argument(port: int, frames: bytes) -> None:
    """Raw HTTP/2: the request stream ends with nothing, or with a first message cut short (gRPC drops it).
    Before: status OK, as if the bot had said goodbye."""
    stream = H2Stream(port, window=65535)
    stream.send_bytes(frames, end_stream=True)
    assert stream.status() == ("3", "the stream ended before its Hello")


def test_a_cut_hello_then_more_writes_is_invalid_argument_on_the_wire(port: int) -> None:
    """'INTERNAL Internal error from Core' after a cut first message is grpc.aio's client writing on after the
    server's answer (it sets that status itself, grpc/aio/_call.py): on the wire the answer is INVALID_ARGUMENT."""
    stream = H2Stream(port, window=65535)
    stream.send_bytes(struct.pack(">BI", 0, 3) + b"\x0a\x05h")  # a Hello cut inside its first field
    stream.send_bytes(struct.pack(">BI", 0, 0) * 3)  # the client writes on
    code, details = stream.status()
    assert (code, details) == ("3", "malformed message: not a request of tablanette.v1.BotGateway/Connect")


def test_malformed_input_is_logged_once_per_peer_per_interval_and_counted(strict: tuple[Proc, int, int]) -> None:
    """Before: an ERROR line and a traceback for every message."""
    proc, port, metrics = strict
    sent, started = 300, time.monotonic()
    rpc = BY_NAME["tablanette.v1.RulesService/ListPresets"]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        codes = {call(channel, rpc, GARBAGE).code for _ in range(sent)}
    log = proc.text()
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
    assert codes == {grpc.StatusCode.INVALID_ARGUMENT}
    assert log.count("malformed message from ipv4:127.0.0.1 to tablanette.v1.RulesService/ListPresets") == 1, log
    # the rest in counted lines, one per interval (usually one line: "299 malformed messages from ...")
    counted = re.compile(rf"(\d+) malformed messages from ipv4:127\.0\.0\.1 in the last {LOG_S}s")

    def tallied() -> int:
        return sum(int(n) for n in counted.findall(proc.text()))

    deadline = time.monotonic() + 3 * LOG_S + 10
    while tallied() < sent - 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tallied() == sent - 1, proc.text()
    intervals = (time.monotonic() - started) / LOG_S
    assert len(counted.findall(proc.text())) <= intervals + 1, proc.text()
    samples = scrape(metrics)
    assert samples['tablanette_malformed_messages_total{rpc="tablanette.v1.RulesService/ListPresets"}'] == sent


def test_list_presets_is_inside_the_rules_rate_limit(strict: tuple[Proc, int, int]) -> None:
    _, port, _ = strict
    rpc = BY_NAME["tablanette.v1.RulesService/ListPresets"]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        ended = [call(channel, rpc, b"") for _ in range(4)]
    assert [e.code for e in ended[:3]] == [grpc.StatusCode.OK] * 3
    assert ended[3].code == grpc.StatusCode.RESOURCE_EXHAUSTED, (ended[3].code, ended[3].details)
    assert "more than 0.5 Rules calls per second" in ended[3].details
