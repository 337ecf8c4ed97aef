"""Hostile and broken bots against a real engine service, while a healthy league plays beside them.

Every client here is written against the wire contract: gRPC stubs generated
from the ``.proto`` files (:class:`service_kit.RawBot`) or raw HTTP/2 frames
(:class:`hostile_kit.H2Stream`), never the SDK. Each attack is refused or
contained with a clear status, the engine's memory is noted after each (the
last test prints the table and bounds the growth), and the league beside must
finish clean: every match counted once, no healthy bot charged anything.

The tests share one arena and run in file order; an attack that drains a
rate limit waits for it to refill before the next one needs it.
"""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
from hostile_kit import BESIDE, HEALTHY, H2Stream, HostileArena, wait_until
from service_kit import RawBot, StreamEnded

from cli.local import CLI
from store.results import LeagueResults
from store.tokens import BotTokens
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import game_pb2 as gpb
from tablanette.v1 import rules_pb2 as rpb
from tablanette.v1 import rules_pb2_grpc
from web.queries import Reads, bot_page

HELLO_REFILL_S = 6.0
"""The default per-address Hello bucket (100, refilled at 20 a second) is full again after 5 s."""
SHORT = 300
"""No error a client gets back may be longer than this, whatever it sent."""


def register(hostile: HostileArena, *names: str) -> dict[str, str]:
    return {name: hostile.arena.add_bot(name) for name in names}


def retry_after_ms(exc: grpc.RpcError) -> int | None:
    for key, value in exc.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == "retry-after-ms":
            return int(value)
    return None


def unary_hello(port: int, hello: apb.Hello, timeout: float = 15) -> tuple[grpc.StatusCode, str, int | None]:
    """Open a stream, send one Hello, and return how it ended: OK on a Welcome (then hang up)."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.stream_stream(
            "/tablanette.v1.BotGateway/Connect",
            request_serializer=apb.BotMessage.SerializeToString,
            response_deserializer=apb.ServerMessage.FromString,
        )(iter([apb.BotMessage(hello=hello)]), timeout=timeout)
        try:
            first = next(call)
        except grpc.RpcError as exc:
            return exc.code(), exc.details() or "", retry_after_ms(exc)
        call.cancel()
        return (grpc.StatusCode.OK if first.WhichOneof("kind") == "welcome" else grpc.StatusCode.UNKNOWN), "", None


# ----------------------------------------------------------------- sessions that cannot leak


def test_hellos_cancelled_right_after_sending_leave_no_ghost(hostile: HostileArena) -> None:
    tokens = register(hostile, *(f"ghost{i}" for i in range(5)))
    for bot, token in tokens.items():
        for delay in (0.0, 0.0002, 0.0005, 0.001, 0.002, 0.003):
            raw = RawBot(hostile.port)
            raw.hello(token, bot)
            time.sleep(delay)
            raw.close()
    # A ghost would be refreshed by the upkeep for ever: every session must be gone for good.
    for bot in tokens:
        wait_until(lambda bot=bot: hostile.session(bot) is None, 30, f"{bot}'s session to be released")
    for bot, token in tokens.items():  # and the gateway agrees: a live ghost would refuse this as ALREADY_EXISTS
        raw = RawBot(hostile.port)
        assert raw.welcome(token, bot).bot_name == bot
        raw.close()
    hostile.note_memory("30 Hellos cancelled 0-3 ms after sending")


def test_a_client_with_a_zero_window_that_vanishes_leaves_no_ghost(hostile: HostileArena) -> None:
    token = register(hostile, "vanisher")["vanisher"]
    client = H2Stream(hostile.port, window=0)
    client.hello(token, "vanisher")
    wait_until(lambda: hostile.session("vanisher"), 15, "the session to be registered (its Welcome cannot be sent)")
    client.pump(0.5)
    client.vanish()
    wait_until(lambda: hostile.session("vanisher") is None, 30, "the session of a vanished client to be released")
    raw = RawBot(hostile.port)
    assert raw.welcome(token, "vanisher").bot_name == "vanisher"
    raw.close()
    hostile.note_memory("a zero-window client vanished mid-Welcome")


def test_a_client_that_never_reads_is_cut_and_forgotten(hostile: HostileArena) -> None:
    token = register(hostile, "deaf")["deaf"]
    client = H2Stream(hostile.port, window=0)
    client.hello(token, "deaf")
    wait_until(lambda: hostile.session("deaf"), 15, "the session to be registered")
    # It keeps sending (1 MB moves) as far as the server's window lets it, and never reads a byte.
    sent = sum(client.send(apb.BotMessage(play=apb.PlayMove(game_id="g" * 1_000_000, turn_id=i))) for i in range(100))
    print(f"the deaf client got {sent} of 100 one-megabyte moves through the server's flow control")
    start = time.monotonic()

    def gone() -> bool:
        client.pump(0.2)  # it answers PINGs: its connection stays up, only its stream is stuck
        return hostile.session("deaf") is None

    wait_until(gone, 60, "the engine to cut a session that does not read")
    print(f"cut after {time.monotonic() - start:.1f} s (limit: one keepalive period, checked every 5 s)")
    assert hostile.engine is not None
    assert "session" in hostile.engine.text() and "stopped reading" in hostile.engine.text()
    client.vanish()
    hostile.note_memory("a client that never read, sent up to 100 x 1 MB")


def test_revoking_a_token_ends_its_live_session_at_once(hostile: HostileArena) -> None:
    token = register(hostile, "revokee")["revokee"]
    raw = RawBot(hostile.port)
    raw.welcome(token, "revokee")
    start = time.monotonic()
    BotTokens(hostile.arena.redis, hostile.arena.prefix).revoke("revokee")
    code, details = raw.status(timeout=30)
    took = time.monotonic() - start
    print(f"revocation closed the live session in {took * 1000:.0f} ms")
    assert code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in details
    engine = hostile.engine
    assert engine is not None  # the notice closed it, not the upkeep's safety net (a pass every 5 s)
    by_notice = re.compile(r"bot revokee: session \w+ closed, its token was revoked \(the revocation notice\)")
    wait_until(lambda: by_notice.search(engine.text()), 10, "the engine's log of the revocation")
    code, _, _ = unary_hello(hostile.port, apb.Hello(token=token, bot_name="revokee"))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert any(e["bot"] == "revokee" for e in hostile.audit("revoked"))


# ----------------------------------------------------------------- every resource bounded


def test_huge_game_ids_are_refused_without_being_echoed(hostile: HostileArena) -> None:
    token = register(hostile, "bigid")["bigid"]
    raw = RawBot(hostile.port)
    raw.welcome(token, "bigid")
    for i in range(40):
        raw.play("x" * 1_000_000, i, index=0)
    for _ in range(40):
        rejected = raw.recv("play_rejected").play_rejected
        assert rejected.game_id == "" and len(rejected.reason) < SHORT, rejected.reason[:SHORT]
    raw.close()
    hostile.note_memory("40 moves with a 1 MB game id")


def test_oversized_hellos_are_refused_before_they_are_read(hostile: HostileArena) -> None:
    big = apb.Hello(token="t" * 16, bot_name="big", version="v" * (4 << 20))
    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(lambda _: unary_hello(hostile.port, big), range(20)))
    for code, details, _ in answers:
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details[:SHORT])
        assert len(details) < SHORT
    hostile.note_memory("20 unauthenticated 4 MiB Hellos")


def test_long_names_are_never_echoed_whole(hostile: HostileArena) -> None:
    token = register(hostile, "named")["named"]
    long_name = "n" * 10_000
    for hello, want in (
        (apb.Hello(token="no-such-token", bot_name=long_name), grpc.StatusCode.UNAUTHENTICATED),
        (apb.Hello(token=token, bot_name=long_name), grpc.StatusCode.PERMISSION_DENIED),
        (apb.Hello(token=token, bot_name="named", version="v" * 10_000), grpc.StatusCode.INVALID_ARGUMENT),
    ):
        code, details, _ = unary_hello(hostile.port, hello)
        assert code == want and len(details) < SHORT, (code, details[:SHORT])
    refused = hostile.audit("login_refused")
    assert refused and all(len(e.get("bot", "")) <= 80 for e in refused)


def test_a_message_flood_is_cut(hostile: HostileArena) -> None:
    token = register(hostile, "chatty")["chatty"]
    raw = RawBot(hostile.port)
    raw.welcome(token, "chatty")
    for i in range(5000):
        raw.send(apb.BotMessage(keepalive=apb.Keepalive(unix_ms=i)))
    code, details = raw.status(timeout=30)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "messages per second" in details, details
    raw.close()


# ----------------------------------------------------------------- the Rules service off the event loop

HARD_TABLE = [r + s for r in "A234" for s in "CDHS"][:13]
"""Thirteen small cards: with the 1939 rules, most of a second of CPU (0.75-1.3 s measured) to list the plays
of four cards."""


def question_cost(request: rpb.LegalPlaysRequest) -> float:
    """Seconds one answer to ``request`` takes on this machine now, measured in this process (the least of
    three): what the event loop would be held for if it answered the question itself."""
    from config import load_settings
    from engine_service.rules_answers import respond

    limit = load_settings().rules_max_plays
    costs = []
    for _ in range(3):
        started = time.perf_counter()
        status, _ = respond("LegalPlays", request, limit)
        costs.append(time.perf_counter() - started)
        assert status == "ok", status
    return min(costs)


def test_a_rules_hammer_does_not_stall_bot_traffic(hostile: HostileArena) -> None:
    """Questions that each take the CPU for a while, asked by eight threads at once, are answered off the
    event loop: a health check, which the event loop answers, waits for none of them. Compared with the cost
    of one question, measured here too (so a slow or loaded machine moves both): answered on the loop, a
    check would wait for the question in hand, half its cost on average, and more behind a queue of them."""
    request = rpb.LegalPlaysRequest(
        rules=gpb.RulesSpec(preset="tablanette-1939"),
        position=rpb.Position(table=HARD_TABLE, hand=["KC", "QC", "JC", "KD"]),
    )
    cost = question_cost(request)
    stop = threading.Event()
    codes: dict[str, int] = {}
    hints: list[int] = []
    lock = threading.Lock()

    def hammer() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{hostile.port}") as channel:
            stub = rules_pb2_grpc.RulesServiceStub(channel)
            while not stop.is_set():
                try:
                    stub.LegalPlays(request, timeout=10)
                    code = "OK"
                except grpc.RpcError as exc:
                    code = exc.code().name
                    if (hint := retry_after_ms(exc)) is not None:
                        with lock:
                            hints.append(hint)
                with lock:
                    codes[code] = codes.get(code, 0) + 1

    latencies = []
    threads = [threading.Thread(target=hammer, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    token = register(hostile, "prober")["prober"]
    try:
        with grpc.insecure_channel(f"127.0.0.1:{hostile.port}") as channel:
            from grpc_health.v1 import health_pb2, health_pb2_grpc

            health = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:
                t0 = time.monotonic()
                health.Check(health_pb2.HealthCheckRequest(), timeout=30)
                latencies.append(time.monotonic() - t0)
                time.sleep(0.05)
        raw = RawBot(hostile.port)  # a bot still gets in while the hammer goes on
        raw.welcome(token, "prober")
        raw.close()
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    latencies.sort()
    median = latencies[len(latencies) // 2]
    print(f"Rules calls during the hammer: {codes}; one question costs {cost * 1000:.0f} ms here")
    print(
        f"event-loop round trips meanwhile: median {median * 1000:.1f} ms, "
        f"max {latencies[-1] * 1000:.1f} ms over {len(latencies)}"
    )
    assert set(codes) <= {"OK", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"}, codes
    asked = codes.get("OK", 0) + codes.get("DEADLINE_EXCEEDED", 0)
    assert asked, f"no hard question was worked on (answered or timed out): the hammer tested nothing ({codes})"
    assert median < cost / 4, (
        f"health checks waited {median * 1000:.1f} ms (median) while Rules questions of {cost * 1000:.0f} ms "
        "each were asked: the event loop answered them"
    )
    assert codes.get("RESOURCE_EXHAUSTED") and hints, "the hammer must hit the per-address rate limit"
    hostile.note_memory("8 threads hammering LegalPlays on a 16-card table")


# ----------------------------------------------------------------- rate and connection limits


def test_a_hello_flood_from_one_address_is_rate_limited(hostile: HostileArena) -> None:
    bad = apb.Hello(token="tbl_guess", bot_name="guess")
    answers = [unary_hello(hostile.port, bad) for _ in range(200)]
    codes = {code for code, _, _ in answers}
    assert codes <= {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED}, codes
    limited = [(details, hint) for code, details, hint in answers if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert limited, "200 Hellos in a row must hit the per-address limit"
    assert all(hint and hint > 0 and "retry in" in details for details, hint in limited)
    assert hostile.audit("rate_limited")
    time.sleep(HELLO_REFILL_S)
    token = register(hostile, "after-flood")["after-flood"]
    assert unary_hello(hostile.port, apb.Hello(token=token, bot_name="after-flood"))[0] == grpc.StatusCode.OK


def test_150_concurrent_hellos_get_clear_answers(hostile: HostileArena) -> None:
    time.sleep(HELLO_REFILL_S)
    tokens = register(hostile, *(f"crowd{i}" for i in range(150)))
    with ThreadPoolExecutor(150) as pool:
        answers = list(
            pool.map(lambda kv: unary_hello(hostile.port, apb.Hello(token=kv[1], bot_name=kv[0])), tokens.items())
        )
    codes: dict[str, int] = {}
    for code, _, _ in answers:
        codes[code.name] = codes.get(code.name, 0) + 1
    print(f"150 concurrent Hellos: {codes}")
    assert set(codes) <= {"OK", "RESOURCE_EXHAUSTED"}, [
        d for c, d, _ in answers if c.name not in ("OK", "RESOURCE_EXHAUSTED")
    ]
    assert codes.get("OK", 0) >= 90  # the burst lets (nearly) a hundred in at once; none fails for a Redis connection
    hostile.engine_alive()
    assert hostile.engine is not None and "MaxConnectionsError" not in hostile.engine.text()
    hostile.note_memory("150 concurrent Hellos")
    time.sleep(HELLO_REFILL_S)


def test_a_token_thief_cannot_take_over_a_live_session(hostile: HostileArena) -> None:
    victim = HEALTHY[0]
    before = hostile.session(victim)
    code, details, hint = unary_hello(hostile.port, apb.Hello(token=hostile.tokens[victim], bot_name=victim))
    assert code == grpc.StatusCode.ALREADY_EXISTS and "connected already" in details, details
    assert hint is not None and hint >= 1000
    assert hostile.session(victim) == before, "the live session must stay the bot's"
    assert any(e["bot"] == victim and e.get("code") == "ALREADY_EXISTS" for e in hostile.audit("login_refused"))


# ----------------------------------------------------------------- quarantine


def _liar(raw: RawBot, stop: threading.Event) -> None:
    """Three illegal answers to every turn, then a legal one."""
    while not stop.is_set():
        try:
            turn = raw.next_turn(timeout=1)
        except TimeoutError:
            continue
        except StreamEnded:
            return
        for _ in range(3):
            raw.play(turn.game_id, turn.turn_id, index=10_000)
        raw.play(turn.game_id, turn.turn_id, index=0)


def test_broken_bots_are_quarantined_and_an_operator_lifts_them(hostile: HostileArena) -> None:
    arena = hostile.arena
    tokens = register(hostile, "eve", "liar", "mute")
    arena.start_python_bot("greedy", "eve", tokens["eve"], hostile.port)
    arena.wait_connected("eve")
    liar, mute = RawBot(hostile.port), RawBot(hostile.port)
    liar.welcome(tokens["liar"], "liar")
    mute.welcome(tokens["mute"], "mute")  # it reads its turns and never answers one
    stop = threading.Event()
    threading.Thread(target=_liar, args=(liar, stop), daemon=True).start()
    hostile.cli("league", "create", "rogues", "--games", "2", "--rule", "deals=1", "--rule", "move_time_ms=300")
    hostile.cli("league", "add-bot", "rogues", "eve", "liar", "mute")
    feeder = arena.spawn("scheduler-rogues", [*CLI, "league", "start", "rogues", "--window", "1"])
    try:
        store = hostile.store()
        held = wait_until(
            lambda: len(store.quarantined("rogues")) == 2 and store.quarantined("rogues"),
            180,
            "both rogues in quarantine",
        )
        assert "illegal answers" in held["liar"]["reason"], held
        assert "timeouts" in held["mute"]["reason"], held
        wait_until(
            lambda: store.status("rogues").status == "waiting", 120, "the league to wait on its quarantined bots"
        )
        status = store.status("rogues")
        assert status.failed == 0 and status.remaining > 0, status
        out = hostile.cli("league", "status", "rogues")
        assert "liar in quarantine" in out and "mute in quarantine" in out, out
        rows = {r.bot: r for r in LeagueResults(arena.redis, arena.prefix).standings("rogues")}
        assert all(r.forfeits == 0 for r in rows.values()), "held matches are never forfeited"
        if "eve" in rows:
            assert (rows["eve"].timeouts, rows["eve"].illegal) == (0, 0)
        page = bot_page(Reads.open(arena.redis, arena.prefix), "rogues", "liar")
        assert page["quarantine"]["reason"] == held["liar"]["reason"]
        assert hostile.cli("league", "lift", "rogues", "liar")
        # Lifted: still lying and now free to play, the liar may already be back in quarantine for a new
        # match (a loaded machine gives it time to), never still under the quarantine that was lifted
        again_held = store.quarantined("rogues").get("liar")
        assert again_held is None or again_held["at"] > held["liar"]["at"], (held["liar"], again_held)
        # A bot not in quarantine cannot be lifted. (Not the liar again, for the same reason.)
        again = arena.tablanette("league", "lift", "rogues", "eve")
        assert again.returncode != 0 and "not in quarantine" in again.stderr
        assert {e["bot"] for e in hostile.audit("quarantined") if e.get("league") == "rogues"} == {"liar", "mute"}
        assert [e["bot"] for e in hostile.audit("quarantine_lifted")] == ["liar"]
    finally:
        stop.set()
        hostile.cli("league", "cancel", "rogues")
        wait_until(lambda: not feeder.alive(), 60, "the rogues' scheduler to stop")
        liar.close()
        mute.close()


# ----------------------------------------------------------------- the league beside, and the memory


def test_the_league_beside_finished_clean_and_memory_stayed_bounded(hostile: HostileArena) -> None:
    during = hostile.done(BESIDE) - hostile.matches_at_start
    hostile.check_beside_clean()
    print(f"the league beside: {hostile.done(BESIDE)} matches, {during} of them finished during the attacks")
    hostile.engine_alive()
    hostile.note_memory("every attack")
    hostile.write_memory_report()
    growth = max(rss for _, rss in hostile.memory) - hostile.memory[0][1]
    # Measured here: about +9 MB at the peak. Before the limits, the 1 MB game ids alone grew the engine by
    # about 90 MB and the unread 1 MB moves by over 200 MB, so this bound catches either coming back.
    assert growth < 48, f"the engine grew by {growth:.0f} MB"
    assert hostile.engine is not None
    assert "Traceback" not in hostile.engine.text(), hostile.engine.tail(3000)
