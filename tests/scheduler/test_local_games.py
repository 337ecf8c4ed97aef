"""Games on this machine through the arena's driver (``tablanette match``'s engine), bots in this process.

The bots here break the rules of the road as an author's bot would: one raises,
one sleeps past its move time, one names a play that is not legal. Each costs
that bot a move (a fault, a timeout, an illegal play) and never the game; every
record re-plays with the engine. No timing is asserted beyond "a second's sleep
at a 200 ms move time is late", which load cannot make false.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from bots import Bot, make_bot
from engine_service.driver import MatchDriver
from engine_service.rules import Observation, Play, Rules, verify_record
from engine_service.time_control import TimeControl
from scheduler.in_process import InProcessTransport, Seat
from scheduler.local_games import Entry, play_series
from scheduler.selfplay import run_selfplay

SHORT = Rules.preset("tablic").with_overrides({"target": 21})


def builtin(spec: str) -> Entry:
    return Entry(spec, lambda seed: make_bot(spec, seed))


class Raising(Bot):
    name = "raising"

    def __init__(self) -> None:
        self.turns = 0

    def choose(self, observation: Observation) -> Play:
        self.turns += 1
        if self.turns % 3 == 0:
            raise RuntimeError("\x1b[2Kbug on every third turn")
        return observation.legal_plays[-1]


class SleepsOnce(Bot):
    name = "sleepy"

    def __init__(self) -> None:
        self.slept = False

    def choose(self, observation: Observation) -> Play:
        if not self.slept:
            self.slept = True
            time.sleep(1.0)
        return observation.legal_plays[0]


class Illegal(Bot):
    name = "illegal"

    def choose(self, observation: Observation) -> Play:
        legal = observation.legal_plays[0]
        return Play(legal.card, 0xFFFF) if len(observation.legal_plays) < 3 else legal


def test_builtin_bots_play_the_same_games_as_selfplay() -> None:
    """Same seed, same deals, same seats, same bots: the driver's games are self-play's games."""
    records: list[dict] = []
    series = play_series(SHORT, [builtin("greedy"), builtin("random")], 6, "same", on_record=records.append)
    selfplay = run_selfplay(SHORT, ["greedy", "random"], 6, "same")
    assert [(b.wins, b.draws, b.losses, b.points) for b in series.stats.bots] == [
        (b.wins, b.draws, b.losses, b.points) for b in selfplay.bots
    ]
    assert [r["id"] for r in records] == [f"same/game-{g}" for g in range(1, 7)]
    for r in records:
        verify_record(r)
    # mirrored: games 1 and 2 share one deal, seats swapped
    assert records[0]["seed"] == records[1]["seed"] != records[2]["seed"]
    assert records[0]["players"] == records[1]["players"][::-1]
    assert all(c.timeouts == c.illegal == c.faults == 0 for c in series.conduct)
    ratings = {r.bot: r for r in series.fit().ratings}
    assert ratings["greedy"].low < ratings["greedy"].rating < ratings["greedy"].high


def test_independent_deals() -> None:
    records: list[dict] = []
    play_series(SHORT, [builtin("greedy"), builtin("random")], 4, "ind", mirrored=False, on_record=records.append)
    assert len({r["seed"] for r in records}) == 4


def test_a_bot_that_raises_loses_a_move_not_the_game() -> None:
    entries = [Entry("raising", lambda seed: Raising(), threaded=True), builtin("greedy")]
    records: list[dict] = []
    series = play_series(SHORT, entries, 2, "raise", on_record=records.append)
    conduct = series.conduct[0]
    assert conduct.faults > 0 and conduct.timeouts == 0
    [(reason, count)] = conduct.reasons.items()
    assert count == conduct.faults and reason.startswith("choose raised RuntimeError")
    assert series.stats.games == 2 and all(r["score"] for r in records)
    for r in records:
        verify_record(r)


def test_a_late_answer_is_a_timeout_and_the_game_goes_on() -> None:
    rules = SHORT.with_overrides({"move_time_ms": 200})
    entries = [Entry("sleepy", lambda seed: SleepsOnce(), threaded=True), builtin("greedy")]
    series = play_series(rules, entries, 2, "late")
    assert series.conduct[0].timeouts >= 2  # one a game at least: the first answer comes after a second
    assert series.conduct[1].timeouts == 0
    assert series.stats.games == 2


def test_a_late_inline_answer_is_a_timeout_too() -> None:
    """A bot asked inline (no thread) cannot be cut short, but its late answer is not played."""
    rules = SHORT.with_overrides({"move_time_ms": 200})
    series = play_series(rules, [Entry("sleepy", lambda seed: SleepsOnce()), builtin("greedy")], 1, "inline")
    assert series.conduct[0].timeouts == 1


def test_an_illegal_play_is_counted_and_replaced() -> None:
    series = play_series(SHORT, [Entry("illegal", lambda seed: Illegal()), builtin("greedy")], 2, "illegal")
    assert series.conduct[0].illegal > 0
    assert series.conduct[0].timeouts == series.conduct[0].illegal  # each answered as the timeout play
    assert series.stats.games == 2


def test_forfeit_rules_forfeit_a_late_bot() -> None:
    rules = SHORT.with_overrides({"move_time_ms": 200, "timeout_action": "forfeit"})
    series = play_series(rules, [Entry("sleepy", lambda seed: SleepsOnce(), threaded=True), builtin("greedy")], 2, "ff")
    assert series.conduct[0].forfeits == 2
    assert [b.losses for b in series.stats.bots] == [2, 0]


def test_the_wire_form_and_the_in_process_view_agree() -> None:
    """The transport reads the driver's observation instead of the turn's wire form: they must be the same."""
    from bots.sdk import observation_of

    seen: list[tuple[Observation, Observation]] = []

    class Both(InProcessTransport):
        async def ask(self, seat, turn):  # type: ignore[no-untyped-def]
            assert self.observe is not None
            direct = self.observe()
            assert direct is not None
            seen.append((direct, observation_of(turn, self.rules)))
            return await super().ask(seat, turn)

    rules = Rules.preset("tablic", players=3)
    driver = MatchDriver(rules, "agree", "agree/1", TimeControl.of_rules(rules))
    transport = Both(rules, [Seat(make_bot("greedy", s)) for s in range(3)], observe=lambda: driver.observation)
    transport.wire = True  # the driver builds the wire form, and this transport reads both
    asyncio.run(driver.play(transport))
    assert len(seen) > 100
    for direct, wired in seen:
        assert direct == wired


@pytest.mark.parametrize("games", [0, -1])
def test_no_games_is_an_error(games: int) -> None:
    with pytest.raises(ValueError, match="at least one game"):
        play_series(SHORT, [builtin("greedy"), builtin("random")], games)


def test_fewer_bots_than_seats_is_an_error_that_says_how_to_play_a_bot_against_itself() -> None:
    with pytest.raises(ValueError, match=r"2 bots for its 2 seats, and 1 was named: .*--bot greedy --bot greedy"):
        play_series(SHORT, [builtin("greedy")], 2)
    with pytest.raises(ValueError, match="3 bots for its 3 seats, and 2 were named"):
        play_series(Rules.preset("tablic", players=3), [builtin("greedy"), builtin("random")], 1)
    series = play_series(SHORT, [builtin("greedy"), builtin("greedy")], 2, "itself")  # self-play: once a seat
    assert [b.name for b in series.stats.bots] == ["greedy#1", "greedy#2"] and series.stats.games == 2
