"""A network of test hosts on one machine: each host a Linux network namespace, all on one bridge.

The bridge lives in a namespace of the network's own, every host gets one veth
port on it and an address in a private /24 (``10.X.Y.0/24``, chosen at random
per network), and no host has a route beyond that /24. The machine's own
namespace is never attached: no packet of the network can leave the machine or
reach its real interfaces, and inside a host 127.0.0.1 is that host's own
loopback, where nothing listens, so a process that fell back to it would fail
rather than pass by the shortcut.

Processes run in a host with ``ip netns exec`` (:meth:`Host.argv`). A host is
cut off by taking its port on the bridge down (:meth:`Network.cut`); packet loss
and latency are the deployment's business (nftables, and a delaying relay: this
machine's kernel has no ``tc netem``).
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field


def unavailable() -> str | None:
    """Why network namespaces cannot be made on this machine; None when they can."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2's ip command is not installed"
    probe = f"tbl-probe-{secrets.token_hex(3)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` is not permitted here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


@dataclass
class Host:
    name: str
    namespace: str
    address: str
    port: str
    """Its veth port on the bridge (in the network's own namespace)."""

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this host."""
        return ["ip", "netns", "exec", self.namespace, *argv]


@dataclass
class Network:
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    subnet: str = field(default_factory=lambda: f"10.{random.randint(100, 250)}.{random.randint(0, 255)}")
    hosts: dict[str, Host] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.switch = f"tbl{self.tag}-switch"
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")

    def host(self, name: str) -> Host:
        """A new host on the network, with the next address."""
        index = len(self.hosts) + 2
        host = Host(name, f"tbl{self.tag}-{name}", f"{self.subnet}.{index}", f"p{self.tag}-{index}")
        _ip("netns", "add", host.namespace)
        _ip("-n", host.namespace, "link", "set", "lo", "up")
        veth = ("type", "veth", "peer", "name", "eth0", "netns", host.namespace)
        _ip("link", "add", host.port, "netns", self.switch, *veth)
        _ip("-n", self.switch, "link", "set", host.port, "master", "br0", "up")
        _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _ip("-n", host.namespace, "link", "set", "eth0", "up")
        self.hosts[name] = host
        return host

    def cut(self, host: Host) -> None:
        """Unplug ``host`` from the network (its processes keep running, and see nothing)."""
        _ip("-n", self.switch, "link", "set", host.port, "down")

    def plug(self, host: Host) -> None:
        _ip("-n", self.switch, "link", "set", host.port, "up")

    def close(self) -> None:
        """Delete every namespace (stop the processes in them first)."""
        for namespace in [h.namespace for h in self.hosts.values()] + [self.switch]:
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
