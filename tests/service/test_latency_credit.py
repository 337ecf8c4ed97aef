"""Clocks that credit latency, and time banks, through a real engine service and the real match runner.

A bot far from the arena loses the network's round trip on every turn. A league
with ``latency_credit_ms`` waits that much longer for its answers: the round trip
the replica measured with its keepalive echoes (:mod:`engine_service.round_trips`),
at most the league's cap. Here a Python SDK bot dials the engine through a relay
that delays every byte 150 ms each way (:mod:`delay_relay`, run on loopback), and
the move time is 250 ms: without the credit every one of its answers arrives too
late, with it none does. Both ways of playing a match are checked: the replica
playing it (``PlayMatch``) and the runner asking turn by turn (``RequestPlay``).

A bot written from the ``.proto`` checks what a bot can do to its credit: it
gets none without echoing or with made-up echoes, and no more than the cap by
holding its echoes back. And a time bank: a reserve on top of the move time
that pays a slow turn, emptied by a missed deadline.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread, RawBot

from cli.local import Child, free_port
from engine_service.rules import Rules, verify_record
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb

RELAY = Path(__file__).resolve().parents[1] / "multihost" / "delay_relay.py"
DELAY_MS = 150
"""Each way: the far bot is 300 ms of round trip away."""
FAR_RULES = Rules.preset("tablic", deals=1, move_time_ms=250, timeout_action="trail_lowest")


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


@pytest.fixture(scope="module")
def far_bot(engine: Engine) -> Iterator[str]:
    """A Python SDK bot whose every byte to and from the engine is 150 ms late."""
    arena = engine.arena
    port = free_port()
    relay: Child = arena.spawn(
        "relay", [sys.executable, str(RELAY), f"127.0.0.1:{port}=127.0.0.1:{engine.port}/{DELAY_MS}"]
    )
    relay.wait_for("relaying", "the delay relay")
    arena.start_python_bot("random", "far", arena.add_bot("far"), port)
    arena.wait_connected("far")
    yield "far"
    relay.stop()


def far_match(engine: Engine, tag: str, credit_ms: int, replica_matches: bool) -> MatchThread:
    """The far bot (seat 0) against a healthy one, on the league's credit ``credit_ms``."""
    engine.arena.wait_connected(*engine.healthy)
    return MatchThread(
        engine.arena.prefix,
        FAR_RULES,
        tag,
        ["far", engine.healthy[0]],
        f"far/{tag}",
        latency_credit_ms=credit_ms,
        replica_matches=replica_matches,
    )


@pytest.mark.parametrize("replica_matches", [True, False], ids=["played-on-the-replica", "turn-by-turn"])
def test_a_bot_300_ms_away_loses_every_move_to_time_without_the_credit_and_none_with_it(
    engine: Engine, far_bot: str, replica_matches: bool
) -> None:
    mode = "replica" if replica_matches else "runner"
    seat = 0
    outcome = far_match(engine, f"none-{mode}", 0, replica_matches).result(timeout=120)
    far = outcome.conduct[seat]
    assert (far.timeouts, far.moves) == (24, 0), far  # no answer can beat a 300 ms round trip to a 250 ms deadline

    with_credit = far_match(engine, f"credit-{mode}", 1000, replica_matches)
    outcome = with_credit.result(timeout=120)
    far = outcome.conduct[seat]
    assert (far.timeouts, far.illegal, far.moves, far.forfeit) == (0, 0, 24, False), far
    assert verify_record(outcome.record).totals == outcome.record["score"]
    assert with_credit.runner is not None
    credits = [r.credit_ms for s, r in with_credit.runner.responses if s == seat]
    used = [r.used_ms for s, r in with_credit.runner.responses if s == seat]
    assert len(credits) == 24 and all(2 * DELAY_MS <= c < 1000 for c in credits), credits
    assert max(used) < FAR_RULES.move_time_ms, used  # what it is charged is its own time, not the network's
    print(f"{mode}: credit {min(credits)}..{max(credits)} ms; charged {min(used)}..{max(used)} ms a move")


def test_the_python_sdk_echoes_in_its_inline_mode_too(engine: Engine) -> None:
    """Answering on the event loop that reads the stream (``--inline``), the SDK echoes the pings as well."""
    arena = engine.arena
    arena.start_python_bot("random", "inline-echo", arena.add_bot("inline-echo"), engine.port, "--inline")
    arena.wait_connected("inline-echo", *engine.healthy)
    match = MatchThread(
        arena.prefix, FAR_RULES, "i", ["inline-echo", engine.healthy[0]], "inline/i", latency_credit_ms=1000
    )
    match.result()
    assert match.runner is not None
    credits = [r.credit_ms for s, r in match.runner.responses if s == 0]
    assert credits[1:] and all(0 < c < 1000 for c in credits[1:]), credits  # the first turn may beat the first echo


# -------------------------------------------------------------------- what a bot can do to its credit


def raw_turns(raw: RawBot, game_id: str, answer_after: list[float | None], timeout: float = 60) -> list[apb.Turn]:
    """Answer ``raw``'s turns of ``game_id`` (legal play 0), the i-th after ``answer_after[i]`` seconds
    (None: never; at once from there on), until the game is over: the turns it got."""
    turns = []
    deadline = time.monotonic() + timeout
    while True:
        msg = raw.recv("turn", "game_over", timeout=max(deadline - time.monotonic(), 0.001))
        if msg.WhichOneof("kind") == "game_over":
            if msg.game_over.game_id == game_id:
                return turns
            continue
        turn = msg.turn
        if turn.game_id != game_id:
            continue
        delay = answer_after[len(turns)] if len(turns) < len(answer_after) else 0.0
        turns.append(turn)
        if delay is not None:
            time.sleep(delay)
            raw.play(turn.game_id, turn.turn_id, index=0)


def ping(raw: RawBot) -> apb.Keepalive:
    """The next keepalive from the server that asks for its echo."""
    while not (keepalive := raw.recv("keepalive").keepalive).echo:
        pass
    return keepalive


def echo(raw: RawBot, value: int) -> None:
    """Send ``value`` back as a ping's echo (whether the server sent it or not)."""
    raw.send(apb.BotMessage(keepalive=apb.Keepalive(unix_ms=int(time.time() * 1000), echo=value)))


def test_a_bot_that_never_echoes_or_makes_echoes_up_gets_no_credit(engine: Engine) -> None:
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot("no-echo"), "no-echo")
    made_up = ping(raw).echo ^ 0x5A5A
    for value in (made_up, 1, 0):
        echo(raw, value)
    match = MatchThread(
        engine.arena.prefix, FAR_RULES, "n", ["no-echo", engine.healthy[1]], "raw/n", latency_credit_ms=500
    )
    turns = raw_turns(raw, "raw/n", [])
    assert turns and {t.latency_credit_ms for t in turns} == {0}
    assert all(t.time_left_ms == 250 for t in turns)
    match.result()
    raw.close()


def test_a_bot_that_holds_its_echoes_back_gains_no_more_than_the_cap(engine: Engine) -> None:
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot("slow-echo"), "slow-echo")
    keepalive = ping(raw)
    time.sleep(1.0)  # a round trip of a second, as far as the arena can tell
    echo(raw, keepalive.echo)
    match = MatchThread(
        engine.arena.prefix, FAR_RULES, "s", ["slow-echo", engine.healthy[1]], "raw/s", latency_credit_ms=300
    )
    turns = raw_turns(raw, "raw/s", [0.0, 0.45])  # the second answer is late by the move time, not by the cap
    # the echo is in the stream before the first answer, so from the second turn on it has been counted
    assert {t.latency_credit_ms for t in turns[1:]} == {300}
    assert all(t.time_left_ms == 250 for t in turns)
    outcome = match.result()
    assert outcome.conduct[0].timeouts == 0
    assert match.runner is not None
    late = [r for s, r in match.runner.responses if s == 0][1]
    assert late.credit_ms == 300 and 150 <= late.used_ms <= 250, late  # 450 ms, less the 300 credited
    raw.close()


def test_a_bot_that_reconnects_mid_turn_gets_the_turn_again_with_its_credit(engine: Engine) -> None:
    """Its new stream has no echo yet when the turn is sent again: the bot's earlier round trip stands."""
    token = engine.arena.add_bot("comeback")
    raw = engine.raw()
    raw.welcome(token, "comeback")
    keepalive = ping(raw)
    time.sleep(0.2)
    echo(raw, keepalive.echo)
    match = MatchThread(
        engine.arena.prefix, FAR_RULES, "c", ["comeback", engine.healthy[1]], "raw/c", latency_credit_ms=1000
    )
    first = raw.next_turn()
    raw.play(first.game_id, first.turn_id, index=0)
    second = raw.next_turn()  # the echo was read before the first answer: counted
    assert 200 <= second.latency_credit_ms < 1000
    raw.close()  # gone mid-turn, back at once on a new stream that never echoes
    again = engine.raw()
    again.welcome(token, "comeback")
    resent = again.next_turn()
    assert (resent.turn_id, resent.latency_credit_ms) == (second.turn_id, second.latency_credit_ms)
    again.play(resent.game_id, resent.turn_id, index=0)
    raw_turns(again, "raw/c", [])
    assert not match.result().conduct[0].forfeit
    again.close()


def test_a_turn_for_a_bot_that_has_just_connected_waits_for_its_first_echo(engine: Engine) -> None:
    """As after a move to a replica that never measured the bot: the turn is held (the arena's time, not the
    bot's) until the first echo is back, so even the first turn is credited."""
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot("newcomer"), "newcomer")
    match = MatchThread(
        engine.arena.prefix, FAR_RULES, "f", ["newcomer", engine.healthy[1]], "raw/f", latency_credit_ms=1000
    )
    keepalive = ping(raw)
    time.sleep(0.5)  # a 500 ms round trip
    echo(raw, keepalive.echo)
    turns = raw_turns(raw, "raw/f", [])
    assert 500 <= turns[0].latency_credit_ms < 1000, turns[0]
    assert match.result().conduct[0].timeouts == 0
    raw.close()


# -------------------------------------------------------------------- time banks


@pytest.mark.parametrize("replica_matches", [True, False], ids=["played-on-the-replica", "turn-by-turn"])
def test_a_time_bank_pays_for_slow_turns_until_it_is_spent(engine: Engine, replica_matches: bool) -> None:
    """Move time 250 ms, bank 1000 ms; the bot takes 450 ms on each of its first three turns, which the
    bank pays 200 ms of each, and never answers its fourth, which empties the bank."""
    name = f"banker-{int(replica_matches)}"
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot(name), name)
    game_id = f"bank/{name}"
    match = MatchThread(
        engine.arena.prefix,
        FAR_RULES,
        name,
        [name, engine.healthy[0]],
        game_id,
        time_bank_ms=1000,
        replica_matches=replica_matches,
    )
    turns = raw_turns(raw, game_id, [0.45, 0.45, 0.45, None])
    banks = [t.time_bank_ms for t in turns]
    assert [t.time_left_ms - t.time_bank_ms for t in turns] == [250] * len(turns)
    assert banks[0] == 1000
    for before, after in itertools.pairwise(banks[:4]):
        assert 200 <= before - after <= 300, banks  # 200 ms over the move time each, and the way there
    assert banks[4:] == [0] * (len(banks) - 4), banks  # the fourth turn timed out: the bank is gone
    outcome = match.result()
    me = outcome.conduct[0]
    assert (me.timeouts, me.forfeit) == (1, False), me
    assert match.runner is not None
    outcomes = [r.outcome for s, r in match.runner.responses if s == 0]
    assert outcomes[:4] == [dpb.PlayResponse.PLAYED] * 3 + [dpb.PlayResponse.TIMEOUT]
    raw.close()
