"""Two engine replicas sharing one Redis prefix act as one arena.

Bots connected to different replicas play each other through the match runner
(it asks whichever replica holds each bot). A bot has one session at a time: a
second Hello on the other replica is refused while the first session is live
(that replica says so when asked), and takes over once the first has gone quiet
(the old stream then ends with ABORTED).
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from arena_harness import REDIS_URL, Arena
from service_kit import League, RawBot, check_clean, replica_of

from engine_service.rules import Rules
from worker.match_runner import run_match

# Short session TTL: replicas refresh their Redis entries (and notice a takeover) every 0.5 s;
# a session goes quiet after 2 s without a message.
ENV = {"TABLANETTE_SESSION_TTL_MS": "1500", "TABLANETTE_KEEPALIVE_MS": "2000"}


@pytest.fixture(scope="module")
def ports(module_arena: Arena) -> tuple[int, int]:
    _, a = module_arena.start_engine("engine-a", **ENV)
    _, b = module_arena.start_engine("engine-b", **ENV)
    bots = {"east-1": a, "west-1": b, "east-2": a, "west-2": b}
    for i, (name, port) in enumerate(bots.items()):
        module_arena.start_python_bot(("greedy", "random")[i % 2], name, module_arena.add_bot(name), port)
    module_arena.wait_connected(*bots)
    return a, b


def test_bots_on_different_replicas_play_each_other(module_arena: Arena, ports: tuple[int, int]) -> None:
    a, b = ports
    assert replica_of(module_arena, "east-1") == f"127.0.0.1:{a}"
    assert replica_of(module_arena, "west-1") == f"127.0.0.1:{b}"
    rules = Rules.preset("tablic", target=31)
    outcome = asyncio.run(run_match(REDIS_URL, module_arena.prefix, rules, "x", ["east-1", "west-1"], "cross/1"))
    check_clean(outcome, reasons=("target",))
    assert outcome.record["players"] == ["east-1@1", "west-1@1"]


def test_four_bots_on_two_replicas_play_a_partnership_match(module_arena: Arena, ports: tuple[int, int]) -> None:
    rules = Rules.preset("tablic", players=4, target=31)
    seats = ["east-1", "west-1", "east-2", "west-2"]  # partners 0+2 (replica A) against 1+3 (replica B)
    outcome = asyncio.run(run_match(REDIS_URL, module_arena.prefix, rules, "x4", seats, "cross4/1"))
    check_clean(outcome, reasons=("target",))
    assert outcome.record["teams"] == [[0, 2], [1, 3]]


def test_a_second_session_on_another_replica_waits_until_the_first_goes_quiet(
    module_arena: Arena, ports: tuple[int, int]
) -> None:
    a, b = ports
    league = League(module_arena.prefix, ["east-2", "west-2"], "takeover")  # across the replicas, meanwhile
    token = module_arena.add_bot("twin")
    first = RawBot(a)
    first.welcome(token, "twin")
    thief = RawBot(b)
    thief.hello(token, "twin")
    code, details = thief.status(timeout=10)
    assert code == grpc.StatusCode.ALREADY_EXISTS, (code, details)  # replica A says the session is live
    assert "connected already" in details
    assert replica_of(module_arena, "twin") == f"127.0.0.1:{a}" and not first.ended.is_set()
    time.sleep(2.5)  # the first session says nothing for a whole keepalive period: it has gone quiet
    second = RawBot(b)
    second.welcome(token, "twin")
    code, details = first.status(timeout=10)
    assert code == grpc.StatusCode.ABORTED, (code, details)
    assert "connected again elsewhere" in details
    assert replica_of(module_arena, "twin") == f"127.0.0.1:{b}"
    assert not second.ended.is_set()
    second.close()
    league.finish()
