"""A bot's grace period: how long a turn waits for a bot that is gone, which the arena's own faults never use up.

A bot whose stream drops keeps its seat for the grace period: if it comes back in
time its turn is sent again, else the turn is DISCONNECTED (its forfeit). Time
the arena itself loses meanwhile is not the bot's: a registry lookup held up by
a Redis outage (longer than :data:`SLOW_STORE_S`), a replica that does not
answer, a replica that says its store was unreachable. After such a fault the
bot gets a whole grace period from then to come back, at most
:data:`ARENA_PATIENCE` grace periods after the wait began; and the wait is
marked as the arena's fault, so that a bot still gone at its end is never
scored a forfeit for it.

One rule, kept here and read by both places that wait for a bot: the gateway
(:meth:`engine_service.gateway.Gateway.ask`, a bot gone from this replica) and
the match runner (:meth:`worker.match_runner.MatchRunner.ask`, a bot looked up
across replicas). Pure but for its clock, which a test may replace.
"""

from __future__ import annotations

import time
from collections.abc import Callable

SLOW_STORE_S = 1.0
"""A registry lookup slower than this was held up by the store (Redis): the arena's time, not a bot's."""
ARENA_PATIENCE = 3
"""After the arena's faults, a bot is waited for at most this many grace periods in all."""


class GracePeriod:
    """One wait for a bot that is gone; see the module doc.

    ``since``: when the bot went (monotonic; default now): the grace period runs from then.
    """

    __slots__ = ("clock", "deadline", "fault", "grace_s", "limit")

    def __init__(self, grace_s: float, since: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        now = clock()
        self.clock = clock
        self.grace_s = grace_s
        self.deadline = (now if since is None else min(since, now)) + grace_s
        self.limit = now + ARENA_PATIENCE * grace_s
        self.fault: str | None = None
        """Why the arena failed during this wait (the last reason); None: it did not."""

    def excuse(self, reason: str) -> None:
        """The arena lost time (``reason``): a whole grace period from now, at most :data:`ARENA_PATIENCE` in all."""
        self.fault = reason
        self.deadline = max(self.deadline, min(self.clock() + self.grace_s, self.limit))

    def looked_up(self, asked: float, what: str) -> None:
        """A registry lookup begun at ``asked`` (monotonic) is over: excused if the store held it up."""
        if self.clock() - asked > SLOW_STORE_S:
            self.excuse(f"the session registry (Redis) held up the lookup of {what}")

    def remaining(self) -> float:
        """Seconds left to wait (0 or less: the wait is over)."""
        return self.deadline - self.clock()
