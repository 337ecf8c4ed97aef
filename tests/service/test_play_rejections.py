"""Bad answers to a turn: each gets a PlayRejected naming the problem and the stream stays open.

A hand-driven bot plays a real match (real runner, real healthy opponent) and
misbehaves on its turns; then it plays legally and the match finishes. The
runner's conduct counts the illegal answers. A league of healthy bots plays on
the same engine the whole time.
"""

from __future__ import annotations

import time

import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread, RawBot, auto_plays

from engine_service.rules import Rules, verify_record
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import game_pb2 as gpb
from worker.match_runner import MatchOutcome

RULES = Rules.preset("tablic", target=21)


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


def join_match(engine: Engine, name: str, game_id: str, rules: Rules = RULES) -> tuple[RawBot, MatchThread]:
    """A hand-driven bot ``name`` (seat 0) against a healthy bot, in a running match."""
    raw = engine.raw()
    raw.welcome(engine.arena.add_bot(name), name)
    match = MatchThread(engine.arena.prefix, rules, f"seed-{game_id}", [name, engine.healthy[0]], game_id)
    return raw, match


def rejection(raw: RawBot) -> apb.PlayRejected:
    msg = raw.recv()
    assert msg.WhichOneof("kind") == "play_rejected", msg
    return msg.play_rejected


def finished(match: MatchThread, raw_seat: int = 0) -> MatchOutcome:
    outcome = match.result()
    record = outcome.record
    assert record["result"]["reason"] == "target", record["result"]
    assert verify_record(record).totals == record["score"]
    healthy = outcome.conduct[1 - raw_seat]
    assert (healthy.timeouts, healthy.illegal, healthy.forfeit) == (0, 0, False)
    return outcome


def test_unknown_game_and_stale_turn_are_rejected_and_the_stream_stays_open(engine: Engine) -> None:
    league = engine.league("stale")
    raw, match = join_match(engine, "stale-bot", "stale/1")

    first = raw.recv("game_started", "turn")
    assert first.WhichOneof("kind") == "game_started"
    assert first.game_started.game_id == "stale/1" and first.game_started.seat == 0
    turn = raw.next_turn()
    assert turn.game_id == "stale/1" and turn.legal_plays

    raw.play("no-such-game", turn.turn_id, index=0)
    rej = rejection(raw)
    assert (rej.game_id, rej.turn_id) == ("no-such-game", turn.turn_id)
    assert "no-such-game" in rej.reason

    raw.play(turn.game_id, turn.turn_id, index=0)  # the real turn still waits, and is played
    old_id = turn.turn_id
    turn = raw.next_turn()
    assert turn.turn_id > old_id

    raw.play(turn.game_id, old_id, index=0)  # a stale turn id
    rej = rejection(raw)
    assert rej.game_id == turn.game_id and rej.turn_id == old_id
    assert str(old_id) in rej.reason and str(turn.turn_id) in rej.reason
    raw.play(turn.game_id, turn.turn_id + 1000, index=0)  # a turn from the future
    assert str(turn.turn_id + 1000) in rejection(raw).reason

    raw.play(turn.game_id, turn.turn_id, index=0)
    over = raw.play_out("stale/1")
    outcome = finished(match)
    assert over.result.reason == "target" and over.seat == 0
    assert list(over.result.score) == outcome.record["score"]
    # answers naming another game or turn are not illegal plays: nothing counted, nothing forfeited
    raw_seat = outcome.conduct[0]
    assert (raw_seat.timeouts, raw_seat.illegal, raw_seat.forfeit) == (0, 0, False)
    raw.close()
    league.finish()


def unplayable(turn: apb.Turn) -> tuple[gpb.Play, gpb.Play]:
    """A card this seat does not hold, and a capture the rules do not allow with a card it holds."""
    obs = turn.observation
    seen = set(obs.hand) | set(obs.table)
    foreign = next(c for c in obs.unseen if c not in seen)
    legal = {(p.card, tuple(p.captured)) for p in turn.legal_plays}
    for card in obs.hand:
        for target in obs.table:
            if (card, (target,)) not in legal:
                return gpb.Play(card=foreign), gpb.Play(card=card, captured=[target])
    raise AssertionError(f"every capture is legal on {list(obs.table)} with {list(obs.hand)}")


def test_illegal_plays_are_rejected_with_a_reason_and_counted(engine: Engine) -> None:
    league = engine.league("illegal")
    raw, match = join_match(engine, "illegal-bot", "illegal/1")
    turn = raw.next_turn()
    n = len(turn.legal_plays)
    not_held, bad_capture = unplayable(turn)
    attempts: list[tuple[apb.PlayMove, str]] = [
        (apb.PlayMove(index=n), f"index {n} is out of range"),
        (apb.PlayMove(index=-1), "index -1 is out of range"),
        (apb.PlayMove(play=not_held), f"illegal play {not_held.card}"),
        (apb.PlayMove(play=bad_capture), f"illegal play {bad_capture.card}:{bad_capture.captured[0]}"),
        (apb.PlayMove(play=gpb.Play(card="ZZ")), "malformed play"),
        (apb.PlayMove(), "needs an index or a play"),
    ]
    for move, reason in attempts:
        move.game_id, move.turn_id = turn.game_id, turn.turn_id
        raw.send(apb.BotMessage(play=move))
        rej = rejection(raw)
        assert (rej.game_id, rej.turn_id) == (turn.game_id, turn.turn_id)
        assert reason in rej.reason, rej.reason
    assert "legal plays are" in raw.received[-3].play_rejected.reason  # the reason lists the choices

    # retry within the deadline, naming the play itself this time
    chosen = turn.legal_plays[-1]
    raw.play(turn.game_id, turn.turn_id, play=chosen)
    turn = raw.next_turn()
    raw.play(turn.game_id, turn.turn_id, index=len(turn.legal_plays) + 5)
    assert "out of range" in rejection(raw).reason
    raw.play(turn.game_id, turn.turn_id, index=0)
    raw.play_out("illegal/1")

    outcome = finished(match)
    conduct = outcome.conduct[0]
    assert conduct.illegal == len(attempts) + 1
    assert (conduct.timeouts, conduct.auto, conduct.forfeit) == (0, 0, False)
    mine = next(p for p in outcome.record["deals"][0]["plays"] if p["seat"] == 0)
    assert (mine["card"], mine["captured"]) == (chosen.card, list(chosen.captured))
    raw.close()
    league.finish()


def test_illegal_answers_until_the_deadline_time_out(engine: Engine) -> None:
    """Rejections do not extend the deadline: the runner then plays for the seat and counts both."""
    league = engine.league("illegal-timeout")
    rules = Rules.preset("tablic", target=21, move_time_ms=600)
    raw, match = join_match(engine, "stubborn-bot", "stubborn/1", rules)
    turn = raw.next_turn()
    rejected = 0
    while True:
        raw.play(turn.game_id, turn.turn_id, index=999)
        msg = raw.recv("play_rejected", "turn")
        time.sleep(0.005)  # paced: at full speed an idle machine passes the 500 messages/s limit of a stream
        if msg.WhichOneof("kind") == "turn":
            break  # the runner moved on: our deadline passed
        rejected += "out of range" in msg.play_rejected.reason  # (after the deadline: "no turn ... waiting")
    assert rejected >= 2
    next_turn = msg.turn
    raw.play(next_turn.game_id, next_turn.turn_id, index=0)
    raw.play_out("stubborn/1")
    outcome = finished(match)
    conduct = outcome.conduct[0]
    assert (conduct.timeouts, conduct.auto, conduct.forfeit) == (1, 1, False)
    assert conduct.illegal == rejected
    assert auto_plays(outcome.record, 0) == 1
    raw.close()
    league.finish()
