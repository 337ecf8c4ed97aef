"""Games that share a deal are shown only once every game of the deal is over.

Two games dealt from one seed (a mirrored pair, the seat rotations of a table)
hold the same cards: the record, replay, score or live view of one tells what
is still hidden in the other. So while any game of a shared deal is unplayed
or running, none of its finished games is served whole: no record, replay,
export row, score, luck or live event. Each is *held* (:class:`Hold` says why
and until when) and released, all of them at once, when the deal's last game
is done. A running game may be watched live only once every other game of its
deal is done (it is then the deal's last).

The plan counts each shared deal's games not yet done (:attr:`LeagueKeys.open_deals`,
written with the plan by :meth:`store.leagues.LeagueStore.extend_plan`, counted
down by the commit in the same step that marks a game done), so a hold is one
read. A deal whose missing games can never be played any more, in a cancelled
league with nothing running, is released. A failed game may still be played
again (``league retry``): its deal stays held until it is, or the league is
cancelled.

Games on deals of their own (the default wherever a bot could remember a deal,
:mod:`store.deal_policy`) are never held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis

from .codec import text
from .keys import Keys, LeagueKeys
from .league_settings import LeagueError


@dataclass(frozen=True)
class Hold:
    """Why a game is not shown yet: the deal it shares, and how many of that deal's games are not done."""

    match_id: str
    deal: str
    left: int

    @property
    def why(self) -> str:
        others = "another game" if self.left == 1 else f"{self.left} other games"
        return f"match {self.match_id} shares its deal ({self.deal}) with {others} not yet played to its end"

    @property
    def until(self) -> str:
        return "every game of the deal is over: then its games are shown, all at once"

    def to_json(self) -> dict[str, Any]:
        return {"deal": self.deal, "games_left": self.left, "why": self.why, "until": self.until}


class HeldBack(LeagueError):
    """A request for a game that is held (:class:`Hold`); the message says why and until when."""

    def __init__(self, hold: Hold) -> None:
        super().__init__(f"{hold.why}; held back until {hold.until}")
        self.hold = hold


class Embargo:
    """Which finished games of a league are held back, read in one or two round trips."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix

    def holds(self, league_id: str, match_ids: Sequence[str], live: bool = False) -> dict[str, Hold]:
        """The held games among ``match_ids`` (the rest may be shown whole). ``live``: for watching them as they
        are played, which a game may once it is the last of its deal not done."""
        if not match_ids:
            return {}
        keys = Keys(self.prefix).league(league_id)
        pipe = self.r.pipeline(transaction=False)
        for mid in match_ids:
            pipe.hmget(keys.match(mid), ["deal", "status"])
        fields = pipe.execute()
        shared = {
            mid: (text(deal), text(status or b"planned"))
            for mid, (deal, status) in zip(match_ids, fields, strict=True)
            if deal
        }
        if not shared:
            return {}
        deals = sorted({deal for deal, _ in shared.values()})
        left = dict(zip(deals, (int(n or 0) for n in self.r.hmget(keys.open_deals, deals)), strict=True))
        if any(left.values()) and self._nothing_more_to_play(keys):
            return {}
        out = {}
        for mid, (deal, status) in shared.items():
            others = left[deal] - (1 if live and status != "done" else 0)
            if others > 0:
                out[mid] = Hold(mid, deal, others)
        return out

    def hold(self, league_id: str, match_id: str, live: bool = False) -> Hold | None:
        return self.holds(league_id, [match_id], live).get(match_id)

    def check(self, league_id: str, match_id: str, live: bool = False) -> None:
        """Raise :class:`HeldBack` if the game is held."""
        if (found := self.hold(league_id, match_id, live)) is not None:
            raise HeldBack(found)

    def _nothing_more_to_play(self, keys: LeagueKeys) -> bool:
        """A cancelled league with no game running: its deals' missing games will never be played."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hget(keys.meta, "status")
        pipe.scard(keys.running)
        status, running = pipe.execute()
        return status == b"cancelled" and not running


def redacted(row: dict[str, Any], hold: Hold | None) -> dict[str, Any]:
    """A match row as a held game may be shown: its place, seats and state, and why the rest waits."""
    if hold is None:
        return row
    hidden = ("result", "score", "elo", "luck")
    return {**{k: v for k, v in row.items() if k not in hidden}, **dict.fromkeys(hidden), "held": hold.to_json()}
