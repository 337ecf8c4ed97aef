"""The packed form of a turn, as a client written from the .proto sees it.

Two hand-driven bots play one real match against each other through the engine
service: one asks for ``packed`` in its Hello, the other asks for nothing (as
every bot written before the form existed). The test replays the same match on
its own copy of the rules engine (same rules, same seed), so at every turn it
knows exactly what the seat may see and play, and checks that each bot's turn,
read in its own form, says exactly that: the packed one as card numbers and
masks only, the named one as names only.
"""

from __future__ import annotations

import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread, RawBot

from engine_service.rules import Match, Rules, verify_record
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb

RULES = Rules.preset("tablic", deals=1)


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


def greet(engine: Engine, name: str, features: list[str]) -> tuple[RawBot, apb.Welcome]:
    raw = engine.raw()
    token = engine.arena.add_bot(name)
    raw.send(apb.BotMessage(hello=apb.Hello(token=token, bot_name=name, version="raw", features=features)))
    return raw, raw.recv("welcome").welcome


def test_a_packed_and_a_named_bot_each_see_exactly_the_engines_view(engine: Engine) -> None:
    packed_bot, welcome = greet(engine, "packed-bot", ["zstd-someday", "packed"])
    assert list(welcome.features) == ["packed"]  # granted; the unknown one is ignored, not refused
    named_bot, welcome = greet(engine, "named-bot", [])
    assert list(welcome.features) == []

    seed, game_id = "packed-vs-named", "packed/1"
    match = MatchThread(engine.arena.prefix, RULES, seed, ["packed-bot", "named-bot"], game_id)
    twin = Match(RULES, seed)  # the test's own copy of the match
    bots = [packed_bot, named_bot]
    turns = 0
    while not twin.is_over:
        seat = twin.turn
        turn = bots[seat].next_turn()
        if turns < 2:  # each bot's first turn comes after its GameStarted
            assert any(m.HasField("game_started") and m.game_started.game_id == game_id for m in bots[seat].received)
        expected = twin.observation(seat)
        if seat == 0:
            assert turn.HasField("packed") and not turn.HasField("observation") and not turn.legal_plays
            seen = convert.observation_from_packed(turn.packed, RULES, turn.legal_cards, turn.legal_captured)
        else:
            assert turn.HasField("observation") and not turn.HasField("packed") and not turn.legal_cards
            seen = convert.observation_from_pb(turn.observation, RULES, list(turn.legal_plays))
        assert seen == expected, f"turn {turn.turn_id}, seat {seat}"
        assert turn.time_left_ms == RULES.move_time_ms and turn.deadline_unix_ms > 0
        legal = expected.legal_plays
        index = turns * 7 % len(legal)
        if seat == 0 and turns % 5 == 1:  # now and then the packed bot answers out of range, then by the cards
            bots[0].play(game_id, turn.turn_id, index=len(legal))
            reject = bots[0].recv("play_rejected").play_rejected
            assert f"there are {len(legal)} legal plays" in reject.reason
            bots[0].play(game_id, turn.turn_id, play=convert.play_to_pb(legal[index]))
        else:
            bots[seat].play(game_id, turn.turn_id, index=index)
        twin.play(legal[index])
        turns += 1

    over = [bot.recv("game_over").game_over for bot in bots]
    outcome = match.result()
    assert outcome.record["score"] == twin.totals == list(over[0].result.score)
    assert verify_record(outcome.record).totals == twin.totals
    assert [c.moves for c in outcome.conduct] == [24, 24]
    assert [c.timeouts for c in outcome.conduct] == [0, 0]
    for bot in bots:
        bot.close()


def test_a_packed_turn_with_numbers_no_server_sends_is_refused_by_the_reader() -> None:
    good = apb.Turn(packed=convert.observation_to_packed(Match(RULES, "x").observation(1)))
    good.legal_cards.append(60)
    good.legal_captured.append(0)
    with pytest.raises(ValueError, match=r"outside 0\.\.51"):
        convert.observation_from_packed(good.packed, RULES, good.legal_cards, good.legal_captured)
    high = apb.Turn(packed=convert.observation_to_packed(Match(RULES, "x").observation(1)))
    high.packed.table |= 1 << 60
    with pytest.raises(ValueError, match="52 cards"):
        convert.observation_from_packed(high.packed, RULES, [], [])
    ragged = apb.Turn(packed=convert.observation_to_packed(Match(RULES, "x").observation(1)))
    ragged.legal_cards.append(3)
    with pytest.raises(ValueError, match="differ in length"):
        convert.observation_from_packed(ragged.packed, RULES, ragged.legal_cards, ragged.legal_captured)


def test_naming_a_packed_turn_gives_what_the_named_form_always_said() -> None:
    twin = Match(RULES, "naming")
    for _ in range(30):
        obs = twin.observation(twin.turn)
        common = {"game_id": "g", "turn_id": 7, "deadline_unix_ms": 123, "time_left_ms": 1000, "clock": apb.CLOCK_CPU}
        named_before = apb.Turn(
            observation=convert.observation_to_pb(obs),
            legal_plays=[convert.play_to_pb(p) for p in obs.legal_plays],
            **common,
        )
        packed = apb.Turn(
            packed=convert.observation_to_packed(obs),
            legal_cards=[p.card for p in obs.legal_plays],
            legal_captured=[p.mask for p in obs.legal_plays],
            **common,
        )
        assert convert.named_turn(packed) == named_before
        twin.play(obs.legal_plays[-1])
