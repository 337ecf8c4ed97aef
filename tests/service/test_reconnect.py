"""A bot that comes back within the grace period continues its game, on the same or another replica.

Two engine replicas share one Redis prefix. Bots are killed with SIGKILL mid-game
and restarted with the same token; the match must finish by reaching its target,
with no timeout and no forfeit, and its record must re-verify.
"""

from __future__ import annotations

import signal

import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread, check_clean, replica_of, session_of, wait_until

from engine_service.rules import Rules

GRACE_MS = 8000
RULES = Rules.preset("tablic", target=31)


@pytest.fixture(scope="module")
def replicas(module_arena: Arena) -> tuple[Engine, Engine]:
    env = {"TABLANETTE_GRACE_MS": str(GRACE_MS)}
    return Engine.start(module_arena, "engine-a", **env), Engine.start(module_arena, "engine-b", **env)


@pytest.mark.parametrize("where", ["same", "other"])
def test_sdk_bot_killed_and_restarted_continues_its_game(replicas: tuple[Engine, Engine], where: str) -> None:
    a, b = replicas
    arena = a.arena
    name = f"phoenix-{where}"
    token = arena.add_bot(name)
    first = arena.start_python_bot("greedy", name, token, a.port)
    arena.wait_connected(name)
    league = a.league(f"phoenix-{where}")
    match = MatchThread(arena.prefix, RULES, f"p-{where}", [name, a.healthy[1]], f"phoenix-{where}/1", GRACE_MS)

    match.wait_answers(4, seat=0)
    old = session_of(arena, name)
    first.stop(signal.SIGKILL)
    assert match.thread.is_alive(), "the match ended before the bot was killed"
    back_to = a if where == "same" else b
    arena.start_python_bot("greedy", name, token, back_to.port)
    # the old session's entry may still be there for a moment: wait for the new one's
    wait_until(lambda: session_of(arena, name) not in (None, old), what="the restarted bot's session")
    assert replica_of(arena, name) == f"127.0.0.1:{back_to.port}"

    outcome = match.result()
    check_clean(outcome, reasons=("target",))
    assert outcome.conduct[0].moves == sum(1 for d in outcome.record["deals"] for p in d["plays"] if p["seat"] == 0)
    league.finish()


def test_hand_client_gets_its_pending_turn_again_on_another_replica(replicas: tuple[Engine, Engine]) -> None:
    a, b = replicas
    arena = a.arena
    token = arena.add_bot("hopper")
    raw = a.raw()
    raw.welcome(token, "hopper")
    league = b.league("hopper")
    match = MatchThread(arena.prefix, RULES, "hop", [a.healthy[0], "hopper"], "hopper/1", GRACE_MS)

    turn = raw.next_turn()
    raw.play(turn.game_id, turn.turn_id, index=0)
    turn = raw.next_turn()  # left unanswered: the bot moves to replica B
    raw.close()
    moved = b.raw()
    moved.welcome(token, "hopper")
    started = moved.recv("game_started").game_started
    assert (started.game_id, started.seat) == ("hopper/1", 1)
    assert list(started.players) == [f"{a.healthy[0]}@1", "hopper@raw"]
    again = moved.next_turn()
    assert again.turn_id == turn.turn_id and list(again.legal_plays) == list(turn.legal_plays)
    assert again.deadline_unix_ms > turn.deadline_unix_ms  # a fresh deadline
    moved.play(again.game_id, again.turn_id, index=0)
    over = moved.play_out("hopper/1")

    outcome = match.result()
    check_clean(outcome, reasons=("target",))
    assert over.result.reason == "target" and list(over.result.score) == outcome.record["score"]
    moved.close()
    league.finish()
