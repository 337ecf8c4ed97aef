"""A TCP relay in front of Redis that can hold back Redis's answer to one command: the command runs in
Redis at once, its reply reaches the client only when the test says so.

Only the relay is stalled, never Redis: the other tests (and CI) sharing that Redis go on as before.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class StallingRelay:
    """Relays every connection to ``target``; the first connection that sends a chunk containing every one
    of :attr:`trigger` has its replies held from then on (:attr:`held` is set) until :meth:`unstall`.
    :attr:`dropped` is set when the client closes that connection while its reply is held."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.trigger: tuple[bytes, ...] = ()
        self.held = threading.Event()
        self.dropped = threading.Event()
        self._go = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, *trigger: bytes) -> None:
        """Hold the replies of the next connection that sends ``trigger`` (all of it, in one chunk)."""
        self.trigger = trigger

    def unstall(self) -> None:
        self._go.set()

    def close(self) -> None:
        self._go.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self._listener.close()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self._listener.accept()
                server = socket.create_connection(self.target)
                stalled = threading.Event()
                threading.Thread(target=self._up, args=(client, server, stalled), daemon=True).start()
                threading.Thread(target=self._down, args=(server, client, stalled), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, stalled: threading.Event) -> None:
        """Client to Redis, never held; marks the connection stalled before the trigger is passed on."""
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self.trigger and not self.held.is_set() and all(t in data for t in self.trigger):
                    stalled.set()
                    self.held.set()
                server.sendall(data)
        if stalled.is_set() and not self._go.is_set():
            self.dropped.set()
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)

    def _down(self, server: socket.socket, client: socket.socket, stalled: threading.Event) -> None:
        """Redis to client: held while the connection is stalled and the test has not said go."""
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if stalled.is_set():
                    self._go.wait()
                client.sendall(data)
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_RDWR)
