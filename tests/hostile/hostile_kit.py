"""A real arena to attack, and clients that misbehave below the gRPC library.

:class:`HostileArena` is one engine service replica with the arena's default
limits, two Celery workers, four healthy Python SDK bots and a league of
theirs (``beside``) fed by the real scheduler. Every attack runs while that
league plays; the last test checks it finished clean and that the engine's
memory stayed bounded (:meth:`HostileArena.rss_mb` before and after each
attack, printed and kept in ``artifacts/hostile-memory.txt``).

:class:`H2Stream` speaks HTTP/2 frame by frame (the ``h2`` library, no gRPC
code): it can open ``BotGateway.Connect`` with a zero receive window, so the
server can never deliver a byte to it, and then vanish.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings
from arena_harness import unique_prefix
from service_kit import wait_until

from cli.local import CLI, Child, LocalArena
from engine_service.rules import verify_record
from store.keys import LeagueKeys
from store.leagues import LeagueStore
from store.results import LeagueResults
from store.sessions import read_session
from tablanette.v1 import arena_pb2 as apb

BESIDE = "beside"
HEALTHY = ("ann", "bob", "cat", "dan")
PACE = ("--think-ms", "20")
"""The healthy bots think a little, so the league beside lasts through the attacks."""
BESIDE_GAMES = "10"
"""Games per pairing of the league beside: 6 pairings x 10 = 60 matches."""
REPORT = Path(os.environ.get("TABLANETTE_ARTIFACTS", "artifacts")) / "hostile-memory.txt"
CONNECT = "/tablanette.v1.BotGateway/Connect"


def grpc_frame(message: bytes) -> bytes:
    """One gRPC length-prefixed message (uncompressed)."""
    return struct.pack(">BI", 0, len(message)) + message


@dataclass
class HostileArena:
    arena: LocalArena
    engine: Child | None = None
    port: int = 0
    feeder: Child | None = None
    memory: list[tuple[str, float]] = field(default_factory=list)
    matches_at_start: int = 0
    tokens: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, workdir: Path) -> HostileArena:
        from arena_harness import REDIS_URL

        ha = cls(LocalArena(workdir, redis_url=REDIS_URL, prefix=unique_prefix("hostile")))
        ha.engine, ha.port = ha.arena.start_engine("engine")
        for name in ("w1", "w2"):
            ha.arena.start_worker(name)
        for i, bot in enumerate(HEALTHY):
            token = ha.tokens[bot] = ha.arena.add_bot(bot)
            kind = ("greedy", "random")[i % 2]
            ha.arena.spawn(
                f"bot-{bot}",
                [sys.executable, "-m", "bots", kind, "--name", bot, "--address", f"127.0.0.1:{ha.port}", *PACE],
                {"TABLANETTE_TOKEN": token},
            )
        ha.arena.wait_connected(*HEALTHY)
        ha.cli("league", "create", BESIDE, "--games", BESIDE_GAMES, "--rule", "deals=2")
        ha.cli("league", "add-bot", BESIDE, *HEALTHY)
        ha.feeder = ha.arena.spawn("scheduler", [*CLI, "league", "start", BESIDE, "--window", "4"])
        wait_until(lambda: ha.done(BESIDE) >= 2, 120, "the league beside to be under way")
        ha.matches_at_start = ha.done(BESIDE)
        ha.note_memory("start (the league beside under way)")
        return ha

    # ----------------------------------------------------------- looking on

    def cli(self, *args: str) -> str:
        done = self.arena.tablanette(*args)
        assert done.returncode == 0, f"tablanette {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def store(self) -> LeagueStore:
        return LeagueStore(self.arena.redis, self.arena.prefix)

    def done(self, league: str) -> int:
        return int(self.arena.redis.llen(LeagueKeys(self.arena.prefix, league).finished_order))

    def session(self, bot: str) -> Any:
        return read_session(self.arena.redis, self.arena.prefix, bot)

    def rss_mb(self) -> float:
        """Resident memory of the engine service process, in MB."""
        assert self.engine is not None
        for line in Path(f"/proc/{self.engine.popen.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS for the engine process")

    def note_memory(self, after: str) -> float:
        rss = self.rss_mb()
        self.memory.append((after, rss))
        print(f"engine RSS after {after}: {rss:.1f} MB")
        return rss

    def engine_alive(self) -> None:
        assert self.engine is not None and self.engine.alive(), "the engine died:\n" + self.engine.tail(3000)

    def audit(self, kind: str) -> list[dict[str, Any]]:
        return [
            json.loads(line) for line in self.cli("audit", "--kind", kind, "--limit", "1000", "--json").splitlines()
        ]

    # ----------------------------------------------------------- the promises

    def check_beside_clean(self) -> None:
        """The league beside finished by itself: every match counted once, no healthy bot charged anything."""
        feeder = self.feeder
        assert feeder is not None
        wait_until(lambda: not feeder.alive(), 600, "the scheduler to finish the league beside:\n" + feeder.tail(3000))
        assert feeder.popen.returncode == 0, feeder.tail(3000)
        store = self.store()
        status = store.status(BESIDE)
        plan = store.match_ids(BESIDE)
        assert (status.status, status.done, status.failed) == ("finished", len(plan), 0), store.troubles(BESIDE)
        keys = LeagueKeys(self.arena.prefix, BESIDE)
        finished = [m.decode() for m in self.arena.redis.lrange(keys.finished_order, 0, -1)]
        assert sorted(finished) == sorted(plan), "every match counted exactly once"
        results = LeagueResults(self.arena.redis, self.arena.prefix)
        games = int(BESIDE_GAMES) * (len(HEALTHY) - 1)
        for row in results.standings(BESIDE):
            assert row.games == row.wins + row.draws + row.losses == games, row
            assert (row.timeouts, row.illegal, row.forfeits) == (0, 0, 0), f"{row.bot} was charged: {row}"
        for record in results.records(BESIDE):
            assert not any(p.get("auto") for d in record["deals"] for p in d["plays"])
            verify_record(record)

    def write_memory_report(self) -> None:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        base = self.memory[0][1]
        lines = [f"{after}: {rss:.1f} MB ({rss - base:+.1f} MB)" for after, rss in self.memory]
        REPORT.write_text("engine service resident memory, per attack\n" + "\n".join(lines) + "\n")
        print("\n".join(lines))

    def close(self) -> None:
        self.arena.close()


class H2Stream:
    """``BotGateway.Connect`` spoken in raw HTTP/2 frames: a client that can refuse to receive.

    With ``window=0`` the client advertises a zero stream receive window and
    never grants more, so nothing the server writes on the stream (the Welcome
    included) can be delivered. It still answers the server's SETTINGS and
    PINGs, as a live but stuck client would.
    """

    def __init__(self, port: int, window: int = 0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window}
        )
        self.conn.initiate_connection()
        self.stream_id = self.conn.get_next_available_stream_id()
        headers = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", CONNECT),
            (":authority", f"127.0.0.1:{port}"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ]
        self.conn.send_headers(self.stream_id, headers)
        self.events: list[Any] = []
        self._flush()

    def _flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def send(self, msg: apb.BotMessage | bytes) -> bool:
        """Send one message if the server's flow-control window lets it through whole; False if not."""
        frame = grpc_frame(msg if isinstance(msg, bytes) else msg.SerializeToString())
        if len(frame) > self.conn.local_flow_control_window(self.stream_id):
            return False
        max_frame = self.conn.max_outbound_frame_size
        for i in range(0, len(frame), max_frame):
            self.conn.send_data(self.stream_id, frame[i : i + max_frame])
        self._flush()
        return True

    def send_bytes(self, data: bytes, end_stream: bool = False) -> None:
        """Send ``data`` as it is (gRPC framing included, or cut short), then end the request stream if asked."""
        self.conn.send_data(self.stream_id, data, end_stream=end_stream)
        self._flush()

    def status(self, seconds: float = 10) -> tuple[str | None, str | None]:
        """The stream's ``grpc-status`` and ``grpc-message``, once the server has ended it (None: not in time)."""
        deadline = time.monotonic() + seconds
        while not self.ended() and time.monotonic() < deadline:
            self.pump(0.1)
        headers: dict[str, str] = {}
        for event in self.events:
            if isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
                headers.update(dict(event.headers))
        return headers.get("grpc-status"), headers.get("grpc-message")

    def hello(self, token: str, name: str) -> None:
        self.send(apb.BotMessage(hello=apb.Hello(token=token, bot_name=name, version="h2", max_games=1)))

    def pump(self, seconds: float) -> list[Any]:
        """Read and answer connection-level frames for a while (never widening the stream window)."""
        deadline = time.monotonic() + seconds
        self.sock.settimeout(0.05)
        while time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not data:
                break
            self.events += self.conn.receive_data(data)
            self._flush()
        return self.events

    def ended(self) -> bool:
        return any(isinstance(e, h2.events.StreamEnded | h2.events.StreamReset) for e in self.events)

    def vanish(self) -> None:
        """Close the socket without a word (a client that crashed, or a cable pulled)."""
        self.sock.close()
