"""Thousands of malformed messages to every RPC of a real engine, from a client that knows only the ``.proto``.

Per RPC (the arena's services, health and reflection: :data:`wire_kit.RPCS`),
from a seeded generator: random bytes, valid requests cut short, valid requests
with bits flipped (many of those still decode, into requests no SDK would
send), and JSON nested thousands deep where a request carries JSON (a record to
verify, a rule override). No reply may be UNKNOWN or INTERNAL, or name a Python
class, an exception or a traceback in its details (or, for VerifyRecord, in the
error it reports); the engine must still serve afterwards, and its log must
have grown by a few lines, not a line per message.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from arena_harness import Arena, Proc
from google.protobuf.message import Message
from wire_kit import INTERNALS, RPCS, Ended, Rpc, call, sample

from bots.base import play_match
from bots.greedy import GreedyBot
from engine_service.rules import Match, Rules, match_record
from engine_service.rules.record import dumps
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb

PER_RPC = 400
"""Messages per RPC (17 RPCs: about 7,000 in all, in about 10 s here)."""
SEED = 45
DEEP = ['{"a":' * 5000, "[" * 50_000, "[" * 33 + "]" * 33]


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> tuple[Proc, int]:
    """Limits that would refuse most of a flood raised, so the messages reach the servicers."""
    return module_arena.start_engine(
        "engine-fuzz",
        TABLANETTE_RULES_RATE="1000000",
        TABLANETTE_RULES_BURST="1000000",
        TABLANETTE_HELLO_RATE="1000000",
        TABLANETTE_HELLO_BURST="1000000",
        TABLANETTE_TOKEN_HELLO_RATE="1000000",
        TABLANETTE_TOKEN_HELLO_BURST="1000000",
    )


def realistic() -> dict[str, Message]:
    """Requests a real client sends, for the mutations to start from (the rest: every field set)."""
    spec = gpb.RulesSpec(preset="tablic-pagat", overrides={"ace_values": "[1,11]"})
    position = rpb.Position(table=["AH", "3S", "6D", "7C", "8H", "QS"], hand=["KC", "9C"])
    match = Match(Rules.preset("tablic"), seed="fuzz")
    for _ in range(5):
        match.play(GreedyBot().choose(match.observation(match.turn)))
    record = match_record(
        play_match(Rules.preset("pisti", target=11), "fuzz", [GreedyBot(), GreedyBot()]), ["a", "b"], "f/1"
    )
    return {
        "LegalPlays": rpb.LegalPlaysRequest(rules=spec, position=position, card="KC"),
        "ApplyPlay": rpb.ApplyPlayRequest(
            rules=spec, position=position, play=gpb.Play(card="KC", captured=["AH", "QS"])
        ),
        "ScoreDeal": rpb.ScoreDealRequest(
            rules=gpb.RulesSpec(preset="tablic"),
            piles=[gpb.CardList(cards=["TD", "2C"]), gpb.CardList(cards=["AS", "KC"])],
            bonus=[1, 0],
        ),
        "VerifyRecord": rpb.VerifyRecordRequest(record_json=dumps(record)),
        "PossibleWorlds": rpb.PossibleWorldsRequest(
            rules=gpb.RulesSpec(preset="tablic"),
            observation=convert.observation_to_pb(match.observation(match.turn)),
            k=4,
        ),
        "Connect": apb.BotMessage(hello=apb.Hello(token="t" * 43, bot_name="fuzz", version="1", max_games=1)),
    }


def deep_json(rpc: Rpc, text: str) -> bytes | None:
    """``rpc``'s request carrying ``text`` where it takes JSON, if it takes any."""
    if rpc.name == "VerifyRecord":
        return rpb.VerifyRecordRequest(record_json=text).SerializeToString()
    if "rules" in rpc.request.fields_by_name and rpc.request.fields_by_name["rules"].message_type.name == "RulesSpec":
        message = rpc.message()(rules=gpb.RulesSpec(preset="tablic", overrides={"card_points": text}))
        return bytes(message.SerializeToString())
    return None


def mutations(rpc: Rpc, valid: bytes, rng: random.Random) -> list[bytes]:
    """``PER_RPC`` malformed messages for ``rpc``: its deep JSON, then a third each random, cut short, bit-flipped."""
    out = [text for t in DEEP if (text := deep_json(rpc, t)) is not None]
    while len(out) < PER_RPC:
        kind = len(out) % 3
        if kind == 0 or len(valid) < 2:
            out.append(rng.randbytes(rng.randint(1, 64)))
        elif kind == 1:
            out.append(valid[: rng.randint(1, len(valid) - 1)])
        else:
            flipped = bytearray(valid)
            for _ in range(rng.randint(1, 4)):
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            out.append(bytes(flipped))
    return out


def checked(rpc: Rpc, ended: Ended) -> str | None:
    """What is wrong with a reply (None: nothing)."""
    if ended.code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
        return f"{rpc.name}: {ended.code.name} {ended.details[:200]!r}"
    if INTERNALS.search(ended.details):
        return f"{rpc.name}: {ended.code.name} names an internal: {ended.details[:200]!r}"
    if rpc.name == "VerifyRecord" and ended.responses:
        error = rpb.VerifyRecordResponse.FromString(ended.responses[0]).error
        if INTERNALS.search(error):
            return f"VerifyRecord reports an internal: {error[:200]!r}"
    return None


def test_thousands_of_malformed_messages_to_every_rpc(engine: tuple[Proc, int]) -> None:
    proc, port = engine
    # the pattern catches what the engine used to answer, and passes what it answers now
    assert INTERNALS.search("Unexpected <class 'google.protobuf.message.DecodeError'>: Error parsing message")
    assert INTERNALS.search("Unexpected <class 'RecursionError'>: maximum recursion depth exceeded")
    assert not INTERNALS.search("malformed message: not a request of tablanette.v1.RulesService/ListPresets")
    rng = random.Random(SEED)
    samples = realistic()
    work: list[tuple[Rpc, bytes]] = []
    for rpc in RPCS:
        valid = samples.get(rpc.name) or sample(rpc.request)
        work += [(rpc, m) for m in mutations(rpc, valid.SerializeToString(), rng)]
    rng.shuffle(work)
    lines_before = len(proc.text().splitlines())
    started = time.monotonic()
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel, ThreadPoolExecutor(4) as pool:

        def one(item: tuple[Rpc, bytes]) -> tuple[Rpc, Ended]:
            return item[0], call(channel, item[0], item[1], timeout=20, max_responses=1)

        replies = list(pool.map(one, work))
        health = call(channel, next(r for r in RPCS if r.name == "Check"), b"", timeout=5)
    elapsed = time.monotonic() - started
    codes: Counter[str] = Counter(ended.code.name for _, ended in replies)
    print(f"{len(work)} malformed messages to {len(RPCS)} RPCs in {elapsed:.1f} s: {dict(codes)}")
    problems = [p for rpc, ended in replies if (p := checked(rpc, ended)) is not None]
    assert not problems, f"{len(problems)} bad replies, e.g.:\n" + "\n".join(sorted(set(problems))[:20])
    assert proc.alive() and health.code == grpc.StatusCode.OK, (health, proc.tail())
    log = proc.text()
    assert "Traceback" not in log and " ERROR " not in log, log[-5000:]
    added = [line for line in log.splitlines()[lines_before:] if "tablanette.audit" not in line]
    # one line per RPC at most (the first malformed message from this address to it); the audit trail's
    # lines (each refused Hello, by design) are not counted
    audit = len(log.splitlines()) - lines_before - len(added)
    print(f"the engine's log grew by {len(added)} lines, and {audit} of its audit trail")
    assert len(added) <= len(RPCS), "\n".join(added[:50])
