"""The SDKs' bot contract, through a real engine service and real match runners.

Python: each game its own bot, turns of different games answered concurrently, the
turn's time reaching ``choose``, and a ``choose`` that raises costing a move, not the
connection. Node.js and C++: the same two games at once, one thinking slowly (their
self-tests check the rest of the contract offline).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest
from arena_harness import REDIS_URL, ROOT, Arena
from service_kit import RawBot

from bots import Bot
from bots.sdk import BotClient, Clock
from engine_service.rules import Observation, Play, Rules, verify_record
from worker.match_runner import MatchOutcome, run_match

SLOW_TARGET = 52  # the juggler thinks slowly in the game played to 52 points
MOVE_MS = 60_000  # the slow game's move time: its first turn waits for the whole fast game
FAST_MOVE_MS = 5_000  # the fast game's: ample for an answer, far short of the slow game's wait


class Juggler(Bot):
    """One instance per game. In the slow game its first turn waits until the other game is over."""

    name, version = "juggler", "1"
    made: ClassVar[list[Juggler]] = []
    slow_entered = threading.Event()
    fast_over = threading.Event()

    def __init__(self) -> None:
        self.rules: Rules | None = None
        self.seat: int | None = None
        self.turns = 0
        self.clocks: list[float] = []
        Juggler.made.append(self)

    def new_match(self, rules: Rules, seat: int) -> None:
        self.rules, self.seat = rules, seat

    def choose(self, observation: Observation, clock: Clock | None = None) -> Play:
        assert observation.rules == self.rules and observation.seat == self.seat, "a game's turn reached another's bot"
        assert clock is not None
        self.clocks.append(clock.remaining())
        self.turns += 1
        if observation.rules.target == SLOW_TARGET and self.turns == 1:
            Juggler.slow_entered.set()
            Juggler.fast_over.wait(MOVE_MS / 1000 - 5)
        return observation.legal_plays[-1]


class Clumsy(Bot):
    """Raises on every other turn."""

    name, version = "clumsy", "1"
    turns = 0

    def choose(self, observation: Observation) -> Play:
        self.turns += 1
        if self.turns % 2:
            raise RuntimeError("a bug in the bot")
        return observation.legal_plays[-1]


def _client(arena: Arena, bot: Any, name: str, port: int, max_games: int, inline: bool = False) -> BotClient:
    client = BotClient(bot, f"127.0.0.1:{port}", arena.add_bot(name), name=name, max_games=max_games, inline=inline)
    threading.Thread(target=client.run_forever, daemon=True, name=f"sdk-{name}").start()
    return client


def _clean(outcome: MatchOutcome) -> None:
    record = outcome.record
    assert verify_record(record).totals == record["score"]
    for seat, c in enumerate(outcome.conduct):
        assert (c.timeouts, c.illegal, c.auto, c.forfeit) == (0, 0, 0, False), f"seat {seat}: {c}"


def test_one_slow_game_does_not_make_another_time_out(arena: Arena) -> None:
    _, port = arena.start_engine()
    juggler = _client(arena, Juggler, "juggler", port, max_games=2)
    for name in ("opp-a", "opp-b"):
        arena.start_python_bot("random", name, arena.add_bot(name), port)
    arena.wait_connected("juggler", "opp-a", "opp-b")
    slow_rules = Rules.preset("tablic", target=SLOW_TARGET, move_time_ms=MOVE_MS)
    fast_rules = Rules.preset("tablic", target=31, move_time_ms=FAST_MOVE_MS)

    async def both() -> tuple[MatchOutcome, MatchOutcome]:
        slow = asyncio.create_task(
            run_match(REDIS_URL, arena.prefix, slow_rules, "slow", ["juggler", "opp-a"], "sdk/slow")
        )
        assert await asyncio.to_thread(Juggler.slow_entered.wait, 30), "the slow game's first turn never came"
        # The juggler now sits in the slow game's first turn, and will until the fast game is over.
        fast = await run_match(REDIS_URL, arena.prefix, fast_rules, "fast", ["opp-b", "juggler"], "sdk/fast")
        Juggler.fast_over.set()
        return await slow, fast

    try:
        slow, fast = asyncio.run(both())
    finally:
        Juggler.fast_over.set()
        juggler.stop()
    _clean(fast)  # answered while the other game's turn was still thinking
    _clean(slow)
    games = [b for b in Juggler.made if b.rules is not None]
    assert len(games) == 2, "each game its own bot"
    assert {b.seat for b in games} == {0, 1}
    assert all(0 < t <= b.rules.move_time_ms / 1000 for b in games if b.rules for t in b.clocks), "the turn's time left"


@pytest.mark.parametrize("inline", [False, True], ids=["threads", "inline"])
def test_a_choose_that_raises_costs_a_move_not_the_connection(arena: Arena, inline: bool) -> None:
    _, port = arena.start_engine()
    clumsy = _client(arena, Clumsy(), "clumsy", port, max_games=1, inline=inline)
    arena.start_python_bot("greedy", "steady", arena.add_bot("steady"), port)
    arena.wait_connected("clumsy", "steady")
    try:
        outcome = asyncio.run(
            run_match(
                REDIS_URL, arena.prefix, Rules.preset("tablic", target=31), "oops", ["clumsy", "steady"], "sdk/oops"
            )
        )
    finally:
        clumsy.stop()
    _clean(outcome)  # no timeout, no illegal play, no forfeit: the SDK answered for the bot
    assert clumsy.choose_errors > 0


class Counting(Bot):
    """One instance per game; says which game each turn reached and how much time it had."""

    name, version = "counting", "1"
    made: ClassVar[list[Counting]] = []

    def __init__(self) -> None:
        self.rules: Rules | None = None
        self.clocks: list[float] = []
        self.ended: list[dict[str, Any]] = []
        Counting.made.append(self)

    def new_match(self, rules: Rules, seat: int) -> None:
        self.rules = rules

    def choose(self, observation: Observation, clock: Clock | None = None) -> Play:
        assert observation.rules == self.rules, "a game's turn reached another's bot"
        assert clock is not None
        self.clocks.append(clock.remaining())
        return observation.legal_plays[len(self.clocks) % len(observation.legal_plays)]

    def end_match(self, result: dict[str, Any]) -> None:
        self.ended.append(result)


def test_an_inline_client_plays_two_games_at_once_keeps_its_session_alive_and_stops(arena: Arena) -> None:
    """``inline=True``: the same contract but for concurrency (each game its bot, the clock, end_match),
    keepalives that keep the session live (a second Hello with its token is refused), and stop()
    from another thread ending run_forever."""
    _, port = arena.start_engine(TABLANETTE_KEEPALIVE_MS="1000")
    token = arena.add_bot("quick")
    client = BotClient(Counting, f"127.0.0.1:{port}", token, name="quick", max_games=2, inline=True)
    runner = threading.Thread(target=client.run_forever, daemon=True, name="sdk-quick")
    runner.start()
    for name in ("opp-a", "opp-b"):
        arena.start_python_bot("random", name, arena.add_bot(name), port)
    arena.wait_connected("quick", "opp-a", "opp-b")
    rules = Rules.preset("tablic", target=31)

    async def both() -> list[MatchOutcome]:
        return list(
            await asyncio.gather(
                run_match(REDIS_URL, arena.prefix, rules, "a", ["quick", "opp-a"], "inline/a"),
                run_match(REDIS_URL, arena.prefix, rules, "b", ["opp-b", "quick"], "inline/b"),
            )
        )

    try:
        for outcome in asyncio.run(both()):
            _clean(outcome)
        games = [b for b in Counting.made if b.rules is not None]
        assert len(games) == 2 and all(len(b.ended) == 1 for b in games), "each game its bot, told the end"
        assert all(0 < t <= 5 for b in games for t in b.clocks)
        time.sleep(2.5)  # two and a half keepalive periods: only the client's keepalives keep it live
        thief = RawBot(port)
        thief.hello(token, "quick")
        code, details = thief.status()
        assert code == grpc.StatusCode.ALREADY_EXISTS, details
    finally:
        client.stop()
    runner.join(10)
    assert not runner.is_alive(), "stop() did not end run_forever"


@pytest.mark.parametrize("inline", [False, True], ids=["threads", "inline"])
def test_a_replica_that_never_answers_is_left_for_the_next_address(arena: Arena, inline: bool) -> None:
    """A listener that takes the connection and says nothing (a host cut off mid-way): no Welcome
    within the SDK's 3 s, and the client moves on to the next replica of its list."""
    _, port = arena.start_engine()
    mute = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    taker = threading.Thread(target=lambda: held.append(mute.accept()[0]), daemon=True)
    taker.start()
    addresses = f"127.0.0.1:{mute.getsockname()[1]},127.0.0.1:{port}"
    client = BotClient(Counting, addresses, arena.add_bot("patient"), name="patient", inline=inline)
    runner = threading.Thread(target=client.run_forever, daemon=True, name="sdk-patient")
    runner.start()
    try:
        assert client.connected.wait(20), "the client never got past the mute replica"
        assert held, "the mute replica never saw the client"
    finally:
        client.stop()
        mute.close()
        for conn in held:
            conn.close()
    runner.join(10)
    assert not runner.is_alive()


JUGGLERS = {
    "node": lambda: [shutil.which("node") or "node", str(ROOT / "tests/service/bots/juggler.js")],
    "cpp": lambda: [str(ROOT / "bots/cpp/build/tablanette-cpp-juggler")],
}


@pytest.mark.parametrize("lang", list(JUGGLERS))
def test_node_and_cpp_bots_answer_one_game_while_another_thinks(arena: Arena, lang: str, tmp_path: Path) -> None:
    """The same two games as above, the juggler written with the Node.js or the C++ SDK.

    Its slow game's first turn thinks until a file appears; the test creates the
    file only once the other game is over. With turns answered one at a time, the
    fast game would stall behind it and time out (each of its moves has 5 s).
    """
    argv = JUGGLERS[lang]()
    if not Path(argv[-1]).exists() or (lang == "node" and not (ROOT / "bots/node/node_modules").exists()):
        pytest.fail("build the example bots first: bash scripts/setup_test_deps.sh")
    release = tmp_path / "release"
    _, port = arena.start_engine()
    name = f"{lang}-juggler"
    juggler = arena.spawn(
        name,
        [*argv, "--address", f"127.0.0.1:{port}", "--name", name, "--max-games", "2"],
        {"TABLANETTE_TOKEN": arena.add_bot(name), "TABLANETTE_JUGGLER_RELEASE": str(release)},
    )
    for opponent in ("opp-a", "opp-b"):
        arena.start_python_bot("random", opponent, arena.add_bot(opponent), port)
    arena.wait_connected(name, "opp-a", "opp-b")
    slow_rules = Rules.preset("tablic", target=SLOW_TARGET, move_time_ms=MOVE_MS)
    fast_rules = Rules.preset("tablic", target=31, move_time_ms=FAST_MOVE_MS)

    async def both() -> tuple[MatchOutcome, MatchOutcome]:
        slow = asyncio.create_task(
            run_match(REDIS_URL, arena.prefix, slow_rules, "slow", [name, "opp-a"], f"sdk/{lang}/slow")
        )
        await asyncio.to_thread(juggler.wait_for, "slow game thinking", "the slow game's first turn", 30)
        fast = await run_match(REDIS_URL, arena.prefix, fast_rules, "fast", ["opp-b", name], f"sdk/{lang}/fast")
        assert "slow game released" not in juggler.text(), "the fast game finished only after the slow turn"
        release.touch()
        return await slow, fast

    try:
        slow, fast = asyncio.run(both())
    finally:
        release.touch()
    _clean(fast)  # every move answered while the other game's turn was still thinking
    _clean(slow)
