"""Relayed connections: which hosted version a TCP connection from a bot host carries.

A hosted gRPC bot reaches the engine only through its host's relay
(:mod:`hosting.relay`), which opens a TCP connection to this replica for each
connection the bot makes and copies its bytes both ways. Every hosted bot of a
host thus arrives from the host's address, and the limits a replica keeps per
address (Hellos per second, live streams) would be shared by all of them: one
bot's Hello flood would hold up every other's login.

So the relay says, over ``Dispatch.Relayed`` with the arena's internal secret,
which version each of its connections carries, before it relays a byte; it
says so again while the connection lasts, and once more when it ends. This
replica keeps that map (:class:`RelayedPeers`: the relay's end of the connection
-> the version) and the gateway keys the per-address limits of a stream on such
a connection by ``relay:<version>`` instead (:meth:`RelayedPeers.key`).

What an announcement can do is bounded:

- only the arena makes one (the secret); a bot, which can call Dispatch through
  its relay like anything else, is refused with PERMISSION_DENIED;
- it names no bot to log in as: a Hello's token alone says which bot a stream
  is, whatever its connection was announced as;
- a connection never announced (the host's own clients, a relay that could not
  reach the replica in time) keeps being counted under its address;
- the map is bounded (:data:`MAX_ENTRIES`, the oldest forgotten first) and an
  entry not announced again within :data:`KEEP_S` is forgotten.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable

from engine_service.limits import peer_address

KEEP_S = 60.0
"""An entry not announced again within this is forgotten (the relay announces every third of it)."""
MAX_ENTRIES = 20_000
"""Relayed connections remembered at once; past it the one announced longest ago is forgotten."""
NAME_CHARS = 200
CONNECTION_CHARS = 64
KEY_PREFIX = "relay:"


def endpoint(host: str, port: int) -> tuple[str, int]:
    """``host`` and ``port`` in one canonical form (an IPv4 address mapped into IPv6 as plain IPv4).

    >>> endpoint("::ffff:10.0.0.7", 5555), endpoint("0:0::1", 80)
    (('10.0.0.7', 5555), ('::1', 80))
    """
    address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is out of range")
    return str(address), port


def peer_endpoint(peer: str) -> tuple[str, int] | None:
    """The address and port of a gRPC peer string (None: not an IP peer).

    >>> peer_endpoint("ipv4:127.0.0.1:5555"), peer_endpoint("ipv6:[::1]:40000"), peer_endpoint("unix:/s")
    (('127.0.0.1', 5555), ('::1', 40000), None)
    >>> peer_endpoint("ipv6:%5B::ffff:127.0.0.1%5D:7")
    ('127.0.0.1', 7)
    """
    if not peer.startswith(("ipv4:", "ipv6:")):
        return None
    host, _, port = peer[5:].replace("%5B", "[").replace("%5D", "]").rpartition(":")
    try:
        return endpoint(host, int(port))
    except ValueError:
        return None


class RelayedPeers:
    """The relayed connections of this replica: their relay's end -> the version they carry."""

    def __init__(
        self, keep_s: float = KEEP_S, max_entries: int = MAX_ENTRIES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.keep_s = keep_s
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[tuple[str, int], tuple[str, str, float]] = OrderedDict()
        """(address, port) -> (version, connection id, when announced), the oldest announcement first."""

    def announce(self, host: str, port: int, bot: str, connection: str) -> None:
        """The connection from ``host:port`` carries ``bot`` (ValueError: a malformed announcement)."""
        if not bot or len(bot) > NAME_CHARS:
            raise ValueError(f"a relayed connection needs a bot name of 1 to {NAME_CHARS} characters")
        if len(connection) > CONNECTION_CHARS:
            raise ValueError(f"a connection id is at most {CONNECTION_CHARS} characters")
        where = endpoint(host, port)
        now = self.clock()
        self._entries.pop(where, None)
        self._entries[where] = (bot, connection, now)
        self._expire(now)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, host: str, port: int, bot: str, connection: str) -> None:
        """The connection from ``host:port`` ended (an entry a newer connection on that port made stays)."""
        where = endpoint(host, port)
        entry = self._entries.get(where)
        if entry is not None and entry[:2] == (bot, connection):
            del self._entries[where]

    def bot(self, peer: str) -> str | None:
        """The version the connection of gRPC peer ``peer`` was announced to carry (None: not announced)."""
        where = peer_endpoint(peer)
        entry = self._entries.get(where) if where is not None else None
        if entry is None or self.clock() - entry[2] > self.keep_s:
            return None
        return entry[0]

    def key(self, peer: str) -> str:
        """What the per-address limits count a stream of ``peer`` under: ``relay:<version>`` for an
        announced connection, else its address (:func:`~engine_service.limits.peer_address`).

        >>> peers = RelayedPeers()
        >>> peers.announce("127.0.0.1", 4000, "mybot@2", "c1")
        >>> peers.key("ipv4:127.0.0.1:4000"), peers.key("ipv4:127.0.0.1:4001")
        ('relay:mybot@2', 'ipv4:127.0.0.1')
        """
        bot = self.bot(peer)
        return KEY_PREFIX + bot if bot is not None else peer_address(peer)

    def _expire(self, now: float) -> None:
        while self._entries:
            where, (_, _, when) = next(iter(self._entries.items()))
            if now - when <= self.keep_s:
                return
            del self._entries[where]

    def __len__(self) -> int:
        return len(self._entries)
