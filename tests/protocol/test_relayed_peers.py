"""The engine's map of relayed connections: what an announcement can and cannot do to a stream's limit key."""

from __future__ import annotations

import pytest

from engine_service.relayed import RelayedPeers


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_announced_connection_is_keyed_by_its_version_and_every_other_by_its_address() -> None:
    peers = RelayedPeers()
    peers.announce("127.0.0.1", 40000, "mybot@2", "c1")
    peers.announce("::ffff:10.0.0.9", 41000, "other@1", "c2")  # as an IPv6 socket names an IPv4 peer
    peers.announce("::1", 42000, "six@1", "c3")
    assert peers.key("ipv4:127.0.0.1:40000") == "relay:mybot@2"
    assert peers.key("ipv4:10.0.0.9:41000") == "relay:other@1"
    assert peers.key("ipv6:[::1]:42000") == "relay:six@1"
    assert peers.key("ipv6:%5B::1%5D:42000") == "relay:six@1"
    # the same address on another port, another address on the same port, a Unix socket: their address
    assert peers.key("ipv4:127.0.0.1:40001") == "ipv4:127.0.0.1"
    assert peers.key("ipv4:127.0.0.2:40000") == "ipv4:127.0.0.2"
    assert peers.key("unix:/tmp/x.sock") == "unix:/tmp/x.sock"
    assert not peers.key("ipv4:garbage").startswith("relay:")


def test_a_closed_connection_is_forgotten_but_not_a_newer_one_on_its_port() -> None:
    peers = RelayedPeers()
    peers.announce("127.0.0.1", 40000, "a@1", "old")
    peers.announce("127.0.0.1", 40000, "a@1", "new")  # the port taken again by the relay's next connection
    peers.forget("127.0.0.1", 40000, "a@1", "old")  # the late word that the first one ended
    assert peers.bot("ipv4:127.0.0.1:40000") == "a@1"
    peers.forget("127.0.0.1", 40000, "b@1", "new")  # a closed naming another bot changes nothing
    assert peers.bot("ipv4:127.0.0.1:40000") == "a@1"
    peers.forget("127.0.0.1", 40000, "a@1", "new")
    assert peers.bot("ipv4:127.0.0.1:40000") is None and len(peers) == 0


def test_entries_expire_unless_announced_again_and_their_number_is_bounded() -> None:
    clock = Clock()
    peers = RelayedPeers(keep_s=60, max_entries=100, clock=clock)
    peers.announce("127.0.0.1", 1000, "kept@1", "k")
    peers.announce("127.0.0.1", 1001, "dropped@1", "d")
    clock.now = 50
    peers.announce("127.0.0.1", 1000, "kept@1", "k")  # the relay's announcement again, every third of keep_s
    clock.now = 70
    assert peers.bot("ipv4:127.0.0.1:1000") == "kept@1"
    assert peers.bot("ipv4:127.0.0.1:1001") is None  # 70 s without a word
    for port in range(2000, 2500):  # a flood of announcements: the oldest go first
        peers.announce("127.0.0.1", port, "many@1", str(port))
    assert len(peers) == 100
    assert peers.bot("ipv4:127.0.0.1:2499") == "many@1" and peers.bot("ipv4:127.0.0.1:1000") is None


@pytest.mark.parametrize(
    ("host", "port", "bot", "connection"),
    [("not-an-ip", 1, "a", "c"), ("127.0.0.1", 0, "a", "c"), ("127.0.0.1", 70000, "a", "c"),
     ("127.0.0.1", 1, "", "c"), ("127.0.0.1", 1, "x" * 201, "c"), ("127.0.0.1", 1, "a", "c" * 65)],
)  # fmt: skip
def test_a_malformed_announcement_is_refused(host: str, port: int, bot: str, connection: str) -> None:
    peers = RelayedPeers()
    with pytest.raises(ValueError):
        peers.announce(host, port, bot, connection)
    assert len(peers) == 0
