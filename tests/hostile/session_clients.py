"""Bot clients in processes of their own, for a test to kill: ``python session_clients.py PORT MODE``.

Reads ``NAME TOKEN`` lines on stdin and forks one process per line (after
reading them all: nothing but ``h2`` and the generated ``arena_pb2`` is loaded,
no gRPC library, so a fork is cheap and safe). Each child opens its own TCP
connection, speaks ``BotGateway.Connect`` frame by frame as the ``.proto``
says, sends a Hello and prints one line::

    ready PID NAME SESSION_ID          the Welcome came
    refused PID NAME STATUS MESSAGE    the stream ended first

and then, by ``MODE``:

- ``hold``: keeps the stream open (answering HTTP/2 pings) until it is killed;
- ``halfclose``: waits for SIGUSR1, then ends its request stream (a
  half-close) and, 0 to 20 ms later, kills itself with SIGKILL: a client that
  says it is done and dies before the server has finished with it.

The parent exits once every child has. The test kills the children itself, by
the process ids they printed.

``python session_clients.py PORT silent COUNT`` rather opens COUNT streams at
once (over 8 connections, with the gRPC library) that never say Hello, waits
until the server has ended each, and prints one line of JSON: how many ended
with each status, and one message per status.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events

from tablanette.v1 import arena_pb2 as apb

CONNECT = "/tablanette.v1.BotGateway/Connect"
WINDOW = 1 << 20


def say(line: str) -> None:
    os.write(1, (line.replace("\n", " ")[:400] + "\n").encode())  # one write under PIPE_BUF: never interleaved


def frame(message: bytes) -> bytes:
    return struct.pack(">BI", 0, len(message)) + message


class Stream:
    """One ``Connect`` stream on a connection of its own."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(WINDOW)
        self.sid = self.conn.get_next_available_stream_id()
        headers = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", CONNECT),
            (":authority", f"127.0.0.1:{port}"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ]
        self.conn.send_headers(self.sid, headers)
        self.conn.increment_flow_control_window(WINDOW, self.sid)
        self.buffer = b""
        self.trailers: dict[str, str] = {}
        self.ended = False
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def send(self, msg: apb.BotMessage) -> None:
        self.conn.send_data(self.sid, frame(msg.SerializeToString()))
        self.flush()

    def half_close(self) -> None:
        self.conn.end_stream(self.sid)
        self.flush()

    def pump(self, timeout: float | None) -> list[apb.ServerMessage]:
        """Read what arrives (within ``timeout``; None: wait): the messages it completed."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except TimeoutError:
            return []
        if not data:
            self.ended = True
            return []
        out = []
        for event in self.conn.receive_data(data):
            if isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                self.buffer += event.data
            elif isinstance(event, h2.events.TrailersReceived | h2.events.ResponseReceived):
                self.trailers.update(dict(event.headers))
            if isinstance(event, h2.events.StreamEnded | h2.events.StreamReset | h2.events.ConnectionTerminated):
                self.ended = True
        self.flush()
        while len(self.buffer) >= 5:
            (size,) = struct.unpack(">I", self.buffer[1:5])
            if len(self.buffer) < 5 + size:
                break
            out.append(apb.ServerMessage.FromString(self.buffer[5 : 5 + size]))
            self.buffer = self.buffer[5 + size :]
        return out


def child(port: int, mode: str, name: str, token: str) -> None:
    pid = os.getpid()
    if mode == "halfclose":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    stream = Stream(port)
    stream.send(apb.BotMessage(hello=apb.Hello(token=token, bot_name=name, version="kill", max_games=1)))
    deadline = time.monotonic() + 30
    welcome = None
    while welcome is None and not stream.ended and time.monotonic() < deadline:
        for msg in stream.pump(1.0):
            if msg.WhichOneof("kind") == "welcome":
                welcome = msg.welcome
    if welcome is None:
        status = stream.trailers.get("grpc-status", "?")
        say(f"refused {pid} {name} {status} {stream.trailers.get('grpc-message', 'no welcome')}")
        return
    say(f"ready {pid} {name} {welcome.session_id}")
    if mode == "halfclose":
        signal.sigwait({signal.SIGUSR1})
        stream.half_close()
        time.sleep(random.uniform(0, 0.02))
        os.kill(pid, signal.SIGKILL)
    while not stream.ended:
        stream.pump(None)


async def silent(port: int, count: int) -> dict[str, list[object]]:
    import grpc

    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(8)]
    ended: dict[str, list[object]] = {}

    async def one(channel: grpc.aio.Channel) -> None:
        call = channel.stream_stream(CONNECT, request_serializer=bytes, response_deserializer=bytes)()
        try:
            await asyncio.wait_for(call.read(), 60)
            code, details = "OK", ""
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code().name, exc.details() or ""
        except TimeoutError:
            code, details = "NOT_ENDED", "the server did not end the stream within 60 s"
        call.cancel()
        seen = ended.setdefault(code, [0, details])
        seen[0] = int(str(seen[0])) + 1

    await asyncio.gather(*(one(channels[i % len(channels)]) for i in range(count)))
    await asyncio.gather(*(c.close() for c in channels))
    return ended


def main() -> None:
    port, mode = int(sys.argv[1]), sys.argv[2]
    if mode == "silent":
        print(json.dumps(asyncio.run(silent(port, int(sys.argv[3])))), flush=True)
        return
    bots = [line.split() for line in sys.stdin.read().splitlines() if line.strip()]
    children = []
    for name, token in bots:
        pid = os.fork()
        if pid == 0:
            try:
                child(port, mode, name, token)
            except BaseException as exc:  # a child reports, never returns into the parent's loop
                say(f"refused {os.getpid()} {name} error {exc!r}")
            finally:
                os._exit(0)
        children.append(pid)
    say(f"forked {len(children)}")
    for _ in children:
        os.wait()


if __name__ == "__main__":
    main()
