"""A replica that shuts down just as a stream to it starts must hang nobody: no bot, no match runner.

What the replica does then is what a gRPC server does when its shutdown catches a
stream it has not taken yet: it answers the stream's HEADERS with a GOAWAY whose
last stream id is 0 (error INTERNAL_ERROR, "Server shutdown"), closes the
connection, and is gone. A CI run caught an SDK bot that met this during an engine
restart and never tried again (gRPC parked the stream for a transparent retry that
never ended, even once cancelled). Here a small TCP server plays that replica,
deterministically (h2, as the hostile tests use it): a bot's address list names
it first and a real engine second, and every bot must give up on the first and
connect to the second; a match runner whose bots the registry places on it must
give the match up as the arena's fault. With gRPC's retries on, the Python SDK's
threads mode hangs here; its inline mode, the Node.js and C++ bots and the runner
did not, and are here as guards.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import h2.config
import h2.connection
import h2.errors
import h2.events
import pytest
from arena_harness import Arena
from service_kit import Engine, MatchThread

from cli.local import ROOT, Child
from engine_service.rules import Rules
from store.keys import Keys
from store.sessions import SessionEntry
from worker.match_runner import ReplicaUnreachable


class ShuttingDownReplica:
    """Listens on a free port; for the first connection only, waits for a stream's HEADERS, answers
    GOAWAY(last stream 0) and closes, then stops listening."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.goaway_sent = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        finally:
            self.listener.close()  # a retry finds nobody, as after a real shutdown
        with conn:
            h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
            h2conn.initiate_connection()
            conn.sendall(h2conn.data_to_send())
            events: list[h2.events.Event] = []
            while not any(isinstance(e, h2.events.RequestReceived) for e in events):  # until a stream's HEADERS
                data = conn.recv(65536)
                if not data:
                    return
                events = h2conn.receive_data(data)
            h2conn.clear_outbound_data_buffer()  # the client's SETTINGS are never acknowledged: it is going away
            h2conn.close_connection(h2.errors.ErrorCodes.INTERNAL_ERROR, b"Server shutdown", last_stream_id=0)
            conn.sendall(h2conn.data_to_send())
            self.goaway_sent.set()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def engine(module_arena: Arena) -> Engine:
    return Engine.start(module_arena)


@pytest.fixture
def replica() -> Iterator[ShuttingDownReplica]:
    fault = ShuttingDownReplica()
    yield fault
    fault.close()


def start(arena: Arena, kind: str, name: str, address: str) -> Child:
    token = arena.add_bot(name)
    if kind == "python":
        return arena.start_python_bot("greedy", name, token, address)
    if kind == "python-inline":
        return arena.start_python_bot("greedy", name, token, address, "--inline")
    if kind == "node":
        bot = arena.start_node_bot(name, token, address)
        if bot is None:
            pytest.fail("Node.js or the example's packages are missing (scripts/setup_test_deps.sh)")
        return bot
    if not (ROOT / "bots/cpp/build/tablanette-cpp-bot").exists():
        pytest.fail("the C++ example is not built (scripts/setup_test_deps.sh)")
    return arena.start_cpp_bot(name, token, address)


@pytest.mark.parametrize("kind", ["python", "python-inline", "node", "cpp"])
def test_a_bot_whose_replica_goes_away_as_its_stream_starts_moves_on(
    engine: Engine, replica: ShuttingDownReplica, kind: str
) -> None:
    name = f"goaway-{kind}"
    bot = start(engine.arena, kind, name, f"127.0.0.1:{replica.port},127.0.0.1:{engine.port}")
    engine.arena.wait_connected(name)  # the regression: stuck on the first address for good
    assert replica.goaway_sent.is_set(), f"the bot never met the GOAWAY:\n{bot.tail()}"
    assert bot.alive()


def test_a_match_runner_whose_replica_goes_away_as_its_call_starts_gives_the_match_up(
    engine: Engine, replica: ShuttingDownReplica
) -> None:
    """The runner asks the replica to play the match (a PlayMatch stream) and meets the GOAWAY; then
    nobody answers there. The arena's fault: after its patience the match is abandoned (to be played
    again), never scored, and the worker is free for the next one. (A PlayMatch sends its request at
    once: with gRPC's retries on it was not parked as a bot's stream was, but nothing must hang here
    either.)"""
    arena = engine.arena
    bots = ["gone-a", "gone-b"]
    for k, bot in enumerate(bots):
        entry = SessionEntry(bot, f"127.0.0.1:{replica.port}", f"gone{k}", "1", 1)
        arena.redis.set(Keys(arena.prefix).session(bot), entry.to_json(), px=120_000)
    match = MatchThread(arena.prefix, Rules.preset("tablic", target=31), "gone", bots, "gone/1", grace_ms=1000)
    with pytest.raises(ReplicaUnreachable, match=str(replica.port)):
        match.result(timeout=60)
    assert replica.goaway_sent.is_set()
