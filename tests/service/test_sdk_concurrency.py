"""The Python SDK's bot contract, through a real engine service and real match runners:
each game its own bot, turns of different games answered concurrently, the turn's
time reaching ``choose``, and a ``choose`` that raises costing a move, not the connection.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, ClassVar

from arena_harness import REDIS_URL, Arena

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


def _client(arena: Arena, bot: Any, name: str, port: int, max_games: int) -> BotClient:
    client = BotClient(bot, f"127.0.0.1:{port}", arena.add_bot(name), name=name, max_games=max_games)
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


def test_a_choose_that_raises_costs_a_move_not_the_connection(arena: Arena) -> None:
    _, port = arena.start_engine()
    clumsy = _client(arena, Clumsy(), "clumsy", port, max_games=1)
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
