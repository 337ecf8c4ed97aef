"""The CPU clock through a real engine service: a host's meter, not the wall clock, decides a turn's time.

Each test connects a bot written from the ``.proto`` (:class:`RawBot`) and
offers the engine a real host meter (:class:`hosting.meter.CpuMeter`, over the
real ``Dispatch.Meter`` stream with the arena's secret) whose counter is a
function of the test's choosing instead of a sandbox's cgroup (the sandbox
tests meter real cgroups, tests/sandbox/test_cpu_clock.py). A bot that waits
(its wall time passes, its CPU time does not) keeps every turn on the CPU clock
and misses them on the wall clock; a bot that spends its CPU budget times out
on the CPU clock before the wall-clock cap; a bot no host meters stays on the
wall clock; a meter that goes away mid-turn costs the bot nothing.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator

import grpc
import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread, RawBot

from config.internal_calls import INTERNAL_METADATA
from engine_service.rules import Rules, verify_record
from engine_service.time_control import wall_cap_ms
from hosting.meter import CpuMeter
from store.sessions import internal_secret_sync
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import dispatch_pb2_grpc

MOVE_MS = 300
RULES = Rules.preset("tablic", deals=1, move_time_ms=MOVE_MS, timeout_action="trail_lowest")
TURNS = 24  # one deal of 52 cards, 4 on the table: 24 plays a seat


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


@pytest.fixture
def meter(engine: Engine) -> Iterator[Callable[[str, Callable[[], float]], CpuMeter]]:
    meters: list[CpuMeter] = []

    def make(bot: str, counter: Callable[[], float]) -> CpuMeter:
        arena = engine.arena
        m = CpuMeter([f"127.0.0.1:{engine.port}"], lambda: internal_secret_sync(arena.redis, arena.prefix))
        m.claim(bot, counter)
        assert m.joined(10), "the engine never acknowledged the meter"
        meters.append(m)
        return m

    yield make
    for m in meters:
        m.close()


def answer_after(raw: RawBot, wait_s: float, stop: threading.Event) -> threading.Thread:
    """Answer every turn with its first legal play, ``wait_s`` seconds (of wall time) after it arrives."""

    def run() -> None:
        while not stop.is_set():
            try:
                msg = raw.recv("turn", "game_over", timeout=30)
            except TimeoutError:
                return
            if msg.WhichOneof("kind") == "game_over":
                return
            time.sleep(wait_s)
            raw.play(msg.turn.game_id, msg.turn.turn_id, index=0)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def turns_of(raw: RawBot) -> list[apb.Turn]:
    return [m.turn for m in raw.received if m.WhichOneof("kind") == "turn"]


def bot_responses(match: MatchThread, seat: int) -> list[dpb.PlayResponse]:
    assert match.runner is not None
    return [resp for s, resp in match.runner.responses if s == seat]


def test_a_bot_that_waits_keeps_its_turns_on_the_cpu_clock_and_misses_them_on_the_wall_clock(
    engine: Engine, meter: Callable[[str, Callable[[], float]], CpuMeter]
) -> None:
    """It waits 1.5 move times a turn using a tenth of a core: the CPU clock charges ~0.15 of the move time."""
    name = "cpu-waiter"
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot(name), name)
    meter(name, lambda: 0.1 * time.monotonic())
    league = engine.league("cpu-waiter")
    engine.arena.wait_connected(*engine.healthy)
    stop = threading.Event()
    for clock, game in (("cpu", "cpu-waiter/1"), ("wall", "cpu-waiter/2")):
        answering = answer_after(raw, 1.5 * MOVE_MS / 1000, stop)
        match = MatchThread(engine.arena.prefix, RULES, "w", [name, engine.healthy[0]], game, clock=clock)
        outcome = match.result(timeout=120)
        answering.join(30)
        verify_record(outcome.record)
        mine = outcome.conduct[0]
        responses = bot_responses(match, 0)
        turns = [t for t in turns_of(raw) if t.game_id == game]
        if clock == "cpu":
            assert (mine.timeouts, mine.moves) == (0, TURNS), mine
            assert len(turns) == TURNS and all(t.clock == apb.CLOCK_CPU and t.time_left_ms == MOVE_MS for t in turns)
            assert all(r.cpu_metered and 0 < r.cpu_us < MOVE_MS * 1000 for r in responses), responses[:3]
        else:
            assert mine.timeouts == TURNS and mine.moves == 0, mine  # 1.5 move times, every time
            assert all(t.clock == apb.CLOCK_WALL for t in turns)
            assert not any(r.cpu_metered for r in responses)
        for r in responses:
            assert r.outcome == (dpb.PlayResponse.PLAYED if clock == "cpu" else dpb.PlayResponse.TIMEOUT)
        raw.received.clear()
    stop.set()
    raw.close()
    league.finish()


def test_the_wall_clock_cap_is_the_deadline_a_cpu_turn_carries(
    engine: Engine, meter: Callable[[str, Callable[[], float]], CpuMeter]
) -> None:
    name = "cpu-reader"
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot(name), name)
    meter(name, lambda: 0.0)
    engine.arena.wait_connected(*engine.healthy)
    before = time.time() * 1000
    match = MatchThread(engine.arena.prefix, RULES, "r", [name, engine.healthy[1]], "cpu-reader/1", clock="cpu")
    turn = raw.next_turn()
    after = time.time() * 1000
    cap = wall_cap_ms(MOVE_MS)
    assert turn.clock == apb.CLOCK_CPU and turn.time_left_ms == MOVE_MS
    assert before + cap - 50 <= turn.deadline_unix_ms <= after + cap + 50
    raw.play(turn.game_id, turn.turn_id, index=0)
    raw.play_out(turn.game_id)
    verify_record(match.result(timeout=120).record)
    raw.close()


def test_a_bot_that_spends_its_cpu_budget_times_out_before_the_wall_cap(
    engine: Engine, meter: Callable[[str, Callable[[], float]], CpuMeter]
) -> None:
    """Its counter runs at two cores' pace and it never answers: each turn ends at the meter's ``over``."""
    name = "cpu-spinner"
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot(name), name)
    meter(name, lambda: 2.0 * time.monotonic())
    match = MatchThread(engine.arena.prefix, RULES, "s", [name, engine.healthy[0]], "cpu-spinner/1", clock="cpu")
    outcome = match.result(timeout=120)
    verify_record(outcome.record)
    mine = outcome.conduct[0]
    assert (mine.timeouts, mine.auto, mine.moves) == (TURNS, TURNS, 0), mine
    responses = bot_responses(match, 0)
    assert all(r.outcome == dpb.PlayResponse.TIMEOUT and r.cpu_metered for r in responses)
    assert all(r.cpu_us >= MOVE_MS * 1000 for r in responses), [r.cpu_us for r in responses][:5]
    # ended by the meter, not the cap: each turn took less wall time than the cap (a whole match's worth of slack)
    assert sum(r.elapsed_ms for r in responses) < TURNS * wall_cap_ms(MOVE_MS)
    raw.close()


def test_a_bot_no_host_meters_stays_on_the_wall_clock(engine: Engine) -> None:
    name = "cpu-remote"
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot(name), name)
    match = MatchThread(engine.arena.prefix, RULES, "n", [engine.healthy[1], name], "cpu-remote/1", clock="cpu")
    turn = raw.next_turn()
    assert turn.clock == apb.CLOCK_WALL and turn.time_left_ms == MOVE_MS
    raw.play(turn.game_id, turn.turn_id, index=0)
    raw.play_out(turn.game_id)
    outcome = match.result(timeout=120)
    verify_record(outcome.record)
    assert not any(r.cpu_metered for r in bot_responses(match, 1))
    raw.close()


def test_a_meter_that_leaves_mid_turn_costs_the_bot_nothing(
    engine: Engine, meter: Callable[[str, Callable[[], float]], CpuMeter]
) -> None:
    """The host goes away while the bot thinks past its move time: the turn runs on under the wall cap."""
    name = "cpu-orphan"
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot(name), name)
    host = meter(name, lambda: 0.0)
    match = MatchThread(engine.arena.prefix, RULES, "o", [name, engine.healthy[0]], "cpu-orphan/1", clock="cpu")
    turn = raw.next_turn()
    assert turn.clock == apb.CLOCK_CPU
    host.close()  # the meter's stream ends; the bot has not answered yet
    time.sleep(1.5 * MOVE_MS / 1000)  # past the move time, well within the cap
    raw.play(turn.game_id, turn.turn_id, index=0)
    match.wait_answers(1, seat=0)
    first = bot_responses(match, 0)[0]
    assert first.outcome == dpb.PlayResponse.PLAYED and not first.cpu_metered
    raw.play_out(turn.game_id)  # the rest on the wall clock: this host's meter is gone
    outcome = match.result(timeout=120)
    verify_record(outcome.record)
    assert outcome.conduct[0].timeouts == 0
    raw.close()


def test_the_replica_acknowledges_each_report_that_claims_a_bot_so_a_host_knows_its_claims_are_in(
    engine: Engine,
) -> None:
    """Written from the ``.proto``: an ask 0 answers the first report and each later one that claims a bot,
    in order. (Once only the first was answered: a host that claimed a bot after its stream opened was told
    "joined" before the replica had the claim, and the bot's next turn could run on the wall clock.)"""
    arena = engine.arena
    reports: queue.Queue[dpb.MeterReport | None] = queue.Queue()
    with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
        secret = internal_secret_sync(arena.redis, arena.prefix)
        call = dispatch_pb2_grpc.DispatchStub(channel).Meter(
            iter(reports.get, None), metadata=((INTERNAL_METADATA, secret),), timeout=30
        )
        asks = iter(call)
        reports.put(dpb.MeterReport())  # the first report claims nothing: still answered
        assert next(asks) == dpb.MeterAsk()
        for bots in (["claim-late-1"], ["claim-late-2", "claim-late-3"]):
            reports.put(dpb.MeterReport(release=["nobody"]))  # claims nothing: not answered
            reports.put(dpb.MeterReport(claim=bots))
            assert next(asks) == dpb.MeterAsk(), bots
        reports.put(None)
        assert list(asks) == []  # the stream ends with the host's: no ask was left unread
