"""Who may connect: the Hello is checked and a refused stream ends with the status arena.proto lists.

Every refusal happens next to a league of healthy bots on the same engine, whose
matches must all finish normally and re-verify.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import grpc
import pytest
from arena_harness import Arena
from service_kit import Engine, RawBot, wait_until

from bots.sdk import BACKOFF_START
from store.keys import Keys
from store.tokens import BotTokens
from tablanette.v1 import arena_pb2 as apb


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


def refused(raw: RawBot, code: grpc.StatusCode) -> str:
    got, details = raw.status()
    assert got == code, f"expected {code.name}, got {got.name}: {details}"
    assert not [m for m in raw.received if m.WhichOneof("kind") == "welcome"], "a refused bot was welcomed"
    return details


def test_wrong_token_is_unauthenticated(engine: Engine) -> None:
    engine.arena.add_bot("wt-bot")
    league = engine.league("wrong-token")

    raw = engine.raw()
    raw.hello("tbl_not-a-token", "wt-bot")
    assert "unknown or revoked token" in refused(raw, grpc.StatusCode.UNAUTHENTICATED)

    raw = engine.raw()
    raw.hello("", "wt-bot")
    assert "no token" in refused(raw, grpc.StatusCode.UNAUTHENTICATED)

    league.finish()


def test_revoked_token_is_unauthenticated(engine: Engine) -> None:
    token = engine.arena.add_bot("rv-bot")
    league = engine.league("revoked")

    raw = engine.raw()
    assert raw.welcome(token, "rv-bot").bot_name == "rv-bot"  # the token works before it is revoked
    raw.half_close()
    assert raw.status()[0] == grpc.StatusCode.OK

    BotTokens(engine.arena.redis, engine.arena.prefix).revoke("rv-bot")
    raw = engine.raw()
    raw.hello(token, "rv-bot")
    assert "revoked" in refused(raw, grpc.StatusCode.UNAUTHENTICATED)

    league.finish()


def test_token_of_another_bot_is_permission_denied(engine: Engine) -> None:
    token = engine.arena.add_bot("pd-owner")
    engine.arena.add_bot("pd-other")
    league = engine.league("other-name")

    raw = engine.raw()
    raw.hello(token, "pd-other")
    details = refused(raw, grpc.StatusCode.PERMISSION_DENIED)
    assert "pd-owner" in details and "pd-other" in details
    # a healthy bot's own name with a foreign token is refused the same way
    raw = engine.raw()
    raw.hello(token, engine.healthy[0])
    assert engine.healthy[0] in refused(raw, grpc.StatusCode.PERMISSION_DENIED)

    league.finish()


@pytest.mark.parametrize(
    "first",
    [
        apb.BotMessage(play=apb.PlayMove(game_id="g", turn_id=1, index=0)),
        apb.BotMessage(keepalive=apb.Keepalive(unix_ms=1)),
        apb.BotMessage(),
    ],
    ids=["play", "keepalive", "empty"],
)
def test_first_message_not_a_hello_is_invalid_argument(engine: Engine, first: apb.BotMessage) -> None:
    league = engine.league(f"not-hello-{first.WhichOneof('kind')}")
    raw = engine.raw()
    raw.send(first)
    assert "must be a Hello" in refused(raw, grpc.StatusCode.INVALID_ARGUMENT)
    league.finish()


def test_malformed_hello_is_invalid_argument(engine: Engine) -> None:
    token = engine.arena.add_bot("mh-bot")
    league = engine.league("bad-hello")
    raw = engine.raw()
    raw.send(apb.BotMessage(hello=apb.Hello(token=token, bot_name="mh-bot", max_games=-1)))
    assert "max_games" in refused(raw, grpc.StatusCode.INVALID_ARGUMENT)
    raw = engine.raw()
    raw.send(apb.BotMessage(hello=apb.Hello(token=token, bot_name="mh-bot", version="v" * 65)))
    assert "version" in refused(raw, grpc.StatusCode.INVALID_ARGUMENT)
    league.finish()


def test_sdk_bot_with_a_bad_token_stops_with_an_error(engine: Engine) -> None:
    league = engine.league("sdk-bad-token")
    argv = [sys.executable, "-m", "bots", "greedy", "--token", "tbl_bad", "--address", f"127.0.0.1:{engine.port}"]
    done = subprocess.run(argv, env=engine.arena.child_env(), capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1, done.stderr
    assert "refused bot greedy: UNAUTHENTICATED" in done.stderr
    league.finish()


def test_a_second_session_is_refused_while_the_first_plays_and_nobody_exits(engine: Engine) -> None:
    """A stolen token cannot push a playing bot off its games: the newer Hello is refused (ALREADY_EXISTS)."""
    arena = engine.arena
    token = arena.add_bot("dup-bot")
    sdk = arena.start_python_bot("greedy", "dup-bot", token, engine.port)
    arena.wait_connected("dup-bot")
    league = engine.league("dup")

    thief = engine.raw()
    thief.hello(token, "dup-bot")
    code, details = thief.status()
    assert code == grpc.StatusCode.ALREADY_EXISTS and "connected already" in details
    session = arena.redis.get(Keys(arena.prefix).session("dup-bot"))
    assert session is not None and '"version": "1"' in session.decode()  # the SDK bot still holds its session
    assert sdk.alive() and "ABORTED" not in sdk.text()
    audit = [json.loads(e) for e in arena.redis.lrange(Keys(arena.prefix).audit, 0, 20)]
    assert any(e["event"] == "login_refused" and e["code"] == "ALREADY_EXISTS" for e in audit)
    league.finish()


def test_the_sdk_bot_comes_back_promptly_after_every_engine_restart(engine: Engine) -> None:
    """A welcomed session resets the SDK's backoff: after each restart the bot's first wait is the
    first step (0.25 s, jittered), not the 0.5, 1, 2 s a backoff that kept growing would choose.

    Checked on the waits the bot logs, not on a stopwatch (load on the machine must not decide it)."""
    arena = engine.arena
    token = arena.add_bot("phoenix")
    sdk = arena.start_python_bot("greedy", "phoenix", token, engine.port)
    port = engine.port

    def welcomed(times: int) -> None:  # the bot read its Welcome (a registered session alone is not enough)
        wait_until(lambda: sdk.text().count(": connected to ") >= times, what=f"the bot's welcome no. {times}")

    welcomed(1)
    for round_ in range(4):
        engine.proc.stop()
        arena.redis.delete(Keys(arena.prefix).session("phoenix"))
        engine.proc, _ = arena.start_engine(f"engine-again-{round_}", TABLANETTE_PORT=str(port))
        welcomed(round_ + 2)
    assert sdk.alive()
    waits = re.findall(r"ended \((.*?)\); reconnecting to \S+ in ([\d.]+) s", sdk.text())
    drains = [k for k, (why, _) in enumerate(waits) if "shutting down" in why]
    assert len(drains) == 4, waits
    checked = 0
    for k in drains:
        assert float(waits[k][1]) == 0.0, f"a draining replica's bot waited {waits[k][1]} s"
        if k + 1 < len(waits) and "shutting down" not in waits[k + 1][0]:  # the engine was not back yet
            first = float(waits[k + 1][1])
            assert first <= BACKOFF_START * 1.2 + 0.005, f"the backoff was not reset: first wait {first} s"
            checked += 1
    assert checked, f"no round left a wait to check: {waits}"


def test_a_second_hello_is_rejected_and_the_stream_stays_open(engine: Engine) -> None:
    token = engine.arena.add_bot("twice-bot")
    league = engine.league("twice")
    raw = engine.raw()
    raw.welcome(token, "twice-bot")
    raw.hello(token, "twice-bot")
    assert "already greeted" in raw.recv("play_rejected").play_rejected.reason
    raw.play("none", 1, index=0)  # still answered: the stream is open
    assert "'none'" in raw.recv("play_rejected").play_rejected.reason
    raw.half_close()
    assert raw.status() == (grpc.StatusCode.OK, "")
    league.finish()


def test_escape_codes_in_a_hello_never_reach_the_audit_log_or_a_record(engine: Engine) -> None:
    """A terminal obeys what it prints (``tablanette audit``, records on a terminal): a Hello's free text
    is cleaned before it is audited, and a version with control codes is refused."""
    token = engine.arena.add_bot("esc-bot")
    league = engine.league("escapes")

    raw = engine.raw()
    raw.hello(token, "esc-bot", version="1.0\x1b]0;pwned\x07\x1b[2K\rpreflight passed")
    assert "printable" in refused(raw, grpc.StatusCode.INVALID_ARGUMENT)

    raw = engine.raw()
    raw.hello("tbl_not-a-token", "esc\x1b]52;c;ZXZpbA==\x07\u202ebot")
    refused(raw, grpc.StatusCode.UNAUTHENTICATED)
    audit = [json.loads(e) for e in engine.arena.redis.lrange(Keys(engine.arena.prefix).audit, 0, 50)]
    claimed = [e["bot"] for e in audit if e["event"] == "login_refused" and e["bot"].startswith("esc")]
    assert claimed == ["escbot", "esc-bot"], claimed  # the newest first; nothing but printable text

    league.finish()
