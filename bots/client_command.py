"""A bot client as a command (``python -m bots``, a JSON-lines program's bridge): it runs until SIGTERM or
Ctrl-C, and says why if the arena refuses it."""

from __future__ import annotations

import signal
import sys

from .reconnect import BotRejected
from .sdk import BotClient

NO_TOKEN = "error: give --token (or set TABLANETTE_TOKEN); `tablanette bot add NAME` prints one"


def run_until_stopped(client: BotClient, what: str) -> int:
    """Run ``client`` until SIGTERM or Ctrl-C (exit status 0), or until the arena refuses it (1)."""
    signal.signal(signal.SIGTERM, lambda *_: client.stop())
    signal.signal(signal.SIGINT, lambda *_: client.stop())
    print(f"bot {client.name} ({what}) connecting to {', '.join(client.addresses)}", file=sys.stderr, flush=True)
    try:
        client.run_forever()
    except BotRejected as exc:
        print(f"error: the arena refused bot {client.name}: {exc}", file=sys.stderr)
        return 1
    return 0
