"""One scheduler a league: the claim a league's feeder holds while it feeds it.

Two ``tablanette league start`` of one league (a second machine started for safety, a supervisor that
restarts a scheduler it thinks dead, an operator who forgot one was running) must not both plan and send:
each would keep its own idea of the plan and of who is busy. The first to start takes the league's claim
(a Redis string with a time to live, naming its holder) and renews it as it feeds; another waits, saying
who holds it, and takes over by itself once the holder stops: at once when it stops cleanly (the claim
is given back), or when the claim lapses after a crash or a pause (``claim_ms``). A holder that finds its
claim taken by another (it was paused past the claim) stops feeding, before it writes anything more.

The claim is not what keeps results exactly once (match leases and the ledger do that, whoever sends):
it keeps the plan one scheduler's.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from .codec import text
from .keys import Keys

__all__ = ["FeederClaim"]

# KEYS: the claim. ARGV: the holder, the claim's time to live (ms). 1: kept; 2: taken again (it had lapsed
# and nobody took it: a restarted Redis, or a pause nobody used); 0: another holds it.
_KEEP = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0
"""
# KEYS: the claim. ARGV: the holder. Given back only by its holder.
_GIVE_BACK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


@dataclass
class FeederClaim:
    """The claim of one league's feeder (see the module's doc)."""

    client: redis.Redis
    prefix: str
    league_id: str
    claim_ms: int = 10_000
    holder: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}")
    _kept_at: float = float("-inf")

    def __post_init__(self) -> None:
        self.key = Keys(self.prefix).league(self.league_id).feeder
        self._keep = self.client.register_script(_KEEP)
        self._give_back = self.client.register_script(_GIVE_BACK)

    def holder_now(self) -> str | None:
        """Who holds the claim now (None: nobody)."""
        raw = self.client.get(self.key)
        return text(raw) if raw is not None else None

    def take(self, should_stop: Callable[[], bool], say: Callable[[str], None], poll: float = 0.5) -> bool:
        """Take the claim, waiting while another holds it (saying so once); False if told to stop first."""
        said = False
        while not self.client.set(self.key, self.holder, nx=True, px=self.claim_ms):
            if should_stop():
                return False
            if not said and (other := self.holder_now()) is not None:
                said = True
                say(
                    f"league {self.league_id} is fed by another scheduler ({other}); this one waits and takes over "
                    f"when it stops (at most {self.claim_ms / 1000:g} s after it dies)"
                )
            time.sleep(min(poll, self.claim_ms / 4000))
        self._kept_at = time.monotonic()
        return True

    def keep(self) -> bool:
        """Renew the claim (at most every third of its life); False once another scheduler holds it."""
        if time.monotonic() - self._kept_at < self.claim_ms / 3000:
            return True
        kept = int(self._keep(keys=[self.key], args=[self.holder, self.claim_ms]))
        if kept:
            self._kept_at = time.monotonic()
        return kept != 0

    def give_back(self) -> None:
        """Let another scheduler take over at once (a no-op if another holds it already)."""
        self._give_back(keys=[self.key], args=[self.holder])
