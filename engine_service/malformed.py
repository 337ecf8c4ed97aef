"""Messages that are not what their RPC takes: one answer, one metric, and a log that cannot flood.

Every RPC of an engine replica answers bytes that do not decode as its request
with ``INVALID_ARGUMENT`` and a reason of the arena's own (:func:`reason`), never
the decoder's exception, its class or a traceback. Each such message is counted
in ``tablanette_malformed_messages_total{rpc}`` and noted in :class:`MalformedLog`,
which writes the first one from a peer address at once and then, while more come,
one counted line per interval ("N malformed messages from PEER in the last 60s"):
a client sending garbage in a loop costs the log a line a minute, not a line and a
traceback a message.

>>> reason("/tablanette.v1.RulesService/ListPresets")
'malformed message: not a request of tablanette.v1.RulesService/ListPresets'
"""

from __future__ import annotations

import asyncio
import logging

from engine_service import metrics

log = logging.getLogger("tablanette.malformed")
INTERVAL_S = 60.0
MAX_PEERS = 1024
"""Peer addresses counted one by one; more at once are counted together (the memory stays bounded)."""
OTHERS = "other peers"


def reason(method: str) -> str:
    """The details of the refusal of a message to ``method`` (``/package.Service/Method``) that did not decode."""
    return f"malformed message: not a request of {method.lstrip('/')}"


class MalformedLog:
    """Malformed messages per peer address: counted, and logged once per address per interval."""

    def __init__(self, interval_s: float = INTERVAL_S, max_peers: int = MAX_PEERS) -> None:
        self.interval_s = interval_s
        self.max_peers = max_peers
        self.counts: dict[str, int] = {}
        """Addresses heard from in their current interval -> messages since their last line."""

    def note(self, address: str, method: str) -> None:
        """A message from ``address`` (a peer's address, :func:`~engine_service.limits.peer_address`, or what the
        gateway counts a relayed bot under) to ``method`` did not decode (on the event loop)."""
        metrics.malformed(method.lstrip("/"))
        if address not in self.counts and len(self.counts) >= self.max_peers:
            address = OTHERS
        if address in self.counts:
            self.counts[address] += 1
            return
        self.counts[address] = 0
        log.warning(
            "malformed message from %s to %s (refused; more from it are counted, a line every %gs)",
            address,
            method.lstrip("/"),
            self.interval_s,
        )
        asyncio.get_running_loop().call_later(self.interval_s, self._tally, address)

    def _tally(self, address: str) -> None:
        """An interval of ``address`` is over: one line if it sent more, and another interval; else forget it."""
        n = self.counts.pop(address, 0)
        if n:
            log.warning("%d malformed messages from %s in the last %gs", n, address, self.interval_s)
            self.counts[address] = 0
            asyncio.get_running_loop().call_later(self.interval_s, self._tally, address)
