"""A league's quarantines: bots taken out of its scheduling, with why, and their owners' requests for a lift.

A bot that keeps timing out or answering illegally (the league's thresholds) is
quarantined by the worker that saw it; it plays no more of that league's matches
until an operator lifts it (``tablanette league lift``). Its owner may ask for a
lift from the web page; the newest request replaces an older one, and a lift or a
new quarantine clears it. Two hashes per league: ``quarantine`` and ``lift_requests``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import redis

from .codec import text_map
from .keys import LeagueKeys


class Quarantines:
    """The quarantine half of :class:`store.leagues.LeagueStore` (its client ``r`` and its :meth:`keys`)."""

    r: redis.Redis

    def keys(self, league_id: str) -> LeagueKeys:
        raise NotImplementedError

    def quarantine(self, league_id: str, bot: str, reason: str, match_id: str = "") -> bool:
        """Take a bot out of scheduling with its reason; False if it was in quarantine already."""
        keys = self.keys(league_id)
        entry = json.dumps({"reason": reason, "match": match_id, "at": round(time.time(), 3)})
        if not self.r.hsetnx(keys.quarantine, bot, entry):
            return False
        self.r.hdel(keys.lift_requests, bot)  # a request made before an earlier lift is not about this one
        return True

    def lift(self, league_id: str, bot: str) -> bool:
        """Let a quarantined bot play again; False if it was not in quarantine."""
        keys = self.keys(league_id)
        pipe = self.r.pipeline()
        pipe.hdel(keys.quarantine, bot)
        pipe.hdel(keys.lift_requests, bot)
        return bool(pipe.execute()[0])

    def request_lift(self, league_id: str, bot: str, message: str) -> dict[str, Any] | None:
        """The bot's owner asks the operator to lift its quarantine (the newest request replaces an older
        one); None if it is not in quarantine there."""
        keys = self.keys(league_id)
        request = {"message": message, "at": round(time.time(), 3)}
        pipe = self.r.pipeline()
        pipe.hexists(keys.quarantine, bot)
        pipe.hset(keys.lift_requests, bot, json.dumps(request))
        if not pipe.execute()[0]:
            self.r.hdel(keys.lift_requests, bot)
            return None
        return request

    def quarantined(self, league_id: str) -> dict[str, dict[str, Any]]:
        """Bots in quarantine -> {reason, match, at, and lift_request: {message, at} if its owner asked}."""
        keys = self.keys(league_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(keys.quarantine)
        pipe.hgetall(keys.lift_requests)
        return held(*pipe.execute())


def held(quarantine: Mapping[Any, Any], requests: Mapping[Any, Any]) -> dict[str, dict[str, Any]]:
    """Bots in quarantine -> {reason, match, at, and lift_request if their owner asked}, from the two hashes."""
    held = {bot: json.loads(entry) for bot, entry in text_map(quarantine).items()}
    for bot, request in text_map(requests).items():
        if bot in held:  # a request outlives its quarantine only for the moment a lift takes
            held[bot]["lift_request"] = json.loads(request)
    return held


def with_request(entry: dict[str, Any]) -> str:
    """A quarantine's reason, with its owner's request for a lift if there is one."""
    request = entry.get("lift_request")
    reason = str(entry["reason"])
    return reason + (f" (its owner asks for a lift: {request['message']!r})" if request else "")
