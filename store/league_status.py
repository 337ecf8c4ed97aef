"""A league's progress at a glance, as ``tablanette league status``, the scheduler and the web show it: how
many matches are done, failed, running and queued, how fast they go, who is absent and who is in quarantine.
Read by :meth:`store.leagues.LeagueStore.status`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class LeagueStatus:
    league: str
    status: str
    total: int
    done: int
    failed: int
    running: int
    queued: int
    started_at: float | None
    finished_at: float | None
    rate: float = 0.0
    """Matches per second over the finished ones."""
    absent: dict[str, float] = field(default_factory=dict)
    """Bots of the league not connected now -> since when (unix time)."""
    quarantined: dict[str, str] = field(default_factory=dict)
    """Bots taken out of scheduling -> why."""

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    @property
    def eta_seconds(self) -> float | None:
        return self.remaining / self.rate if self.rate > 0 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "league": self.league,
            "status": self.status,
            "total": self.total,
            "done": self.done,
            "failed": self.failed,
            "running": self.running,
            "queued": self.queued,
            "remaining": self.remaining,
            "eta_seconds": self.eta_seconds,
            "absent": {bot: round(since, 3) for bot, since in sorted(self.absent.items())},
            "quarantined": dict(sorted(self.quarantined.items())),
        }

    def waiting_note(self, now: float | None = None) -> str:
        """``waiting for a, b: not connected (for 40 s)``; quarantined bots and why; '' when all is well."""
        notes = []
        if self.absent:
            now = time.time() if now is None else now
            longest = now - min(self.absent.values())
            notes.append(f"waiting for {', '.join(sorted(self.absent))}: not connected (for {longest:.0f} s)")
        notes += [f"{bot} in quarantine: {why}" for bot, why in sorted(self.quarantined.items())]
        return "; ".join(notes)
