"""League data in Redis, and the one atomic step that records a finished match.

Every key of a league lives under ``<prefix>:league:<id>`` (:class:`LeagueKeys`).
:func:`commit_result` runs one Lua script keyed by the match id: it stores the
record and result, applies every Elo change, updates W/D/L, points, conduct and
rating history, and marks the match done. Run it twice (a redelivered task, a
duplicate worker) and the second run changes nothing: a result is never lost
and never counted twice.

Elo for more than two sides is pairwise: every two seats on different teams
play a virtual game (1, 0.5 or 0 by placing) and each seat moves by
``K / opponents * (S - E)``. Each pair's changes cancel, so the ratings of a
league always sum to ``bots * initial``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import redis

from engine_service.rules import Rules


def text(value: object) -> str:
    """A Redis reply as ``str`` (replies are bytes unless the client decodes them)."""
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class LeagueKeys:
    """The Redis key schema of one league."""

    prefix: str
    league: str

    @property
    def base(self) -> str:
        return f"{self.prefix}:league:{self.league}"

    @property
    def meta(self) -> str:
        return self.base

    @property
    def plan(self) -> str:
        """List of match ids in plan order."""
        return f"{self.base}:plan"

    def match(self, match_id: str) -> str:
        return f"{self.base}:match:{match_id}"

    def lease(self, match_id: str) -> str:
        return f"{self.base}:lease:{match_id}"

    def state_set(self, state: str) -> str:
        """Set of the match ids in ``state`` (queued, running, done or failed)."""
        return f"{self.base}:{state}"

    @property
    def done(self) -> str:
        return self.state_set("done")

    @property
    def failed(self) -> str:
        return self.state_set("failed")

    @property
    def head_to_head(self) -> str:
        """Hash ``"a\tb"`` -> points ``a`` scored against ``b`` (1 a win, 0.5 a draw)."""
        return f"{self.base}:h2h"

    @property
    def head_to_head_games(self) -> str:
        """Hash ``"a\tb"`` -> games ``a`` and ``b`` played against each other."""
        return f"{self.base}:h2h-games"

    def trend(self, bot: str) -> str:
        """The bot's last 30 ratings (capped list, for the ladder's sparklines)."""
        return f"{self.base}:trend:{bot}"

    def bot_matches(self, bot: str) -> str:
        """List of the match ids ``bot`` played, in the order they finished."""
        return f"{self.base}:bot-matches:{bot}"

    @property
    def records(self) -> str:
        return f"{self.base}:records"

    @property
    def ladder(self) -> str:
        """Sorted set bot -> rating."""
        return f"{self.base}:ladder"

    def stats(self, bot: str) -> str:
        return f"{self.base}:stats:{bot}"

    def history(self, bot: str) -> str:
        return f"{self.base}:history:{bot}"

    @property
    def finished_order(self) -> str:
        """List of match ids in the order they finished."""
        return f"{self.base}:finished"


_COMMIT = """
local base, mid = ARGV[1], ARGV[2]
local mkey = base .. ':match:' .. mid
local status = redis.call('HGET', mkey, 'status')
if status == 'done' then return 0 end
local bots = cjson.decode(ARGV[5])
local teams = cjson.decode(ARGV[6])
local placing = cjson.decode(ARGV[7])
local totals = cjson.decode(ARGV[8])
local conduct = cjson.decode(ARGV[9])
local k, initial, now, winner = tonumber(ARGV[10]), tonumber(ARGV[11]), ARGV[12], tonumber(ARGV[13])
local ladder = base .. ':ladder'
local n = #bots
local rating, delta, opponents = {}, {}, 0
for i = 1, n do
  rating[i] = tonumber(redis.call('ZSCORE', ladder, bots[i]) or initial)
  delta[i] = 0
end
for j = 2, n do if teams[j] ~= teams[1] then opponents = opponents + 1 end end
local scale = k / math.max(opponents, 1)
for i = 1, n do
  for j = i + 1, n do
    if teams[i] ~= teams[j] then
      local pi, pj = placing[teams[i] + 1], placing[teams[j] + 1]
      local s = 0.5
      if pi > pj then s = 1 elseif pi < pj then s = 0 end
      local e = 1 / (1 + 10 ^ ((rating[j] - rating[i]) / 400))
      local d = scale * (s - e)
      delta[i] = delta[i] + d
      delta[j] = delta[j] - d
      redis.call('HINCRBYFLOAT', base .. ':h2h', bots[i] .. '\t' .. bots[j], s)
      redis.call('HINCRBYFLOAT', base .. ':h2h', bots[j] .. '\t' .. bots[i], 1 - s)
      redis.call('HINCRBY', base .. ':h2h-games', bots[i] .. '\t' .. bots[j], 1)
      redis.call('HINCRBY', base .. ':h2h-games', bots[j] .. '\t' .. bots[i], 1)
    end
  end
end
local changes = {}
for i = 1, n do
  local new = rating[i] + delta[i]
  redis.call('ZADD', ladder, string.format('%.6f', new), bots[i])
  local skey = base .. ':stats:' .. bots[i]
  local team = teams[i]
  redis.call('HINCRBY', skey, 'games', 1)
  if winner < 0 then redis.call('HINCRBY', skey, 'draws', 1)
  elseif winner == team then redis.call('HINCRBY', skey, 'wins', 1)
  else redis.call('HINCRBY', skey, 'losses', 1) end
  redis.call('HINCRBY', skey, 'points', totals[team + 1])
  redis.call('HINCRBY', skey, 'timeouts', conduct[i]['timeouts'])
  redis.call('HINCRBY', skey, 'illegal', conduct[i]['illegal'])
  if conduct[i]['forfeit'] then redis.call('HINCRBY', skey, 'forfeits', 1) end
  redis.call('HSET', skey, 'last_played', now)
  redis.call('RPUSH', base .. ':bot-matches:' .. bots[i], mid)
  redis.call('RPUSH', base .. ':trend:' .. bots[i], string.format('%.1f', new))
  redis.call('LTRIM', base .. ':trend:' .. bots[i], -30, -1)
  redis.call('RPUSH', base .. ':history:' .. bots[i],
    cjson.encode({match = mid, rating = new, delta = delta[i], at = tonumber(now)}))
  changes[i] = string.format('%.6f', delta[i])
end
redis.call('HSET', base .. ':records', mid, ARGV[3])
redis.call('HSET', mkey, 'status', 'done', 'result', ARGV[4], 'finished_at', now,
           'elo', cjson.encode(changes), 'score', ARGV[8])
for _, state in ipairs({'queued', 'running', 'failed'}) do redis.call('SREM', base .. ':' .. state, mid) end
redis.call('SADD', base .. ':done', mid)
redis.call('RPUSH', base .. ':finished', mid)
return 1
"""


_SET_STATE = """
local base, mid, state = ARGV[1], ARGV[2], ARGV[3]
local mkey = base .. ':match:' .. mid
if redis.call('HGET', mkey, 'status') == 'done' then return 0 end
for _, s in ipairs({'queued', 'running', 'failed'}) do redis.call('SREM', base .. ':' .. s, mid) end
if state ~= 'planned' then redis.call('SADD', base .. ':' .. state, mid) end
redis.call('HSET', mkey, 'status', state)
for i = 4, #ARGV, 2 do redis.call('HSET', mkey, ARGV[i], ARGV[i + 1]) end
return 1
"""


def set_state(client: redis.Redis, keys: LeagueKeys, match_id: str, state: str, **fields: object) -> bool:
    """Move a match to ``state`` (planned, queued, running, failed), fields included.

    Atomic, and never moves a done match (only :func:`commit_result` makes one).
    """
    extra = [str(x) for kv in fields.items() for x in kv]
    return bool(client.eval(_SET_STATE, 0, keys.base, match_id, state, *extra))


def placing(rules: Rules, totals: list[int], winner: int | None, forfeit_team: int | None) -> list[float]:
    """A per-team value where higher means placed better (for pairwise Elo).

    The winner beats everyone, a forfeiting team loses to everyone, the rest are
    ordered by points; equal values are draws.
    """
    out = [float(t) for t in totals]
    if winner is not None:
        out[winner] = 1e9
    if forfeit_team is not None:
        out[forfeit_team] = -1e9
    return out


def commit_result(
    client: redis.Redis,
    keys: LeagueKeys,
    match_id: str,
    record: dict[str, Any],
    bots: list[str],
    conduct: list[dict[str, Any]],
    k: float,
    initial: float,
) -> bool:
    """Store a finished match once; returns False if it was already stored."""
    rules = Rules.from_record(record["rules"], players=len(record["players"]))
    result = record["result"]
    forfeit_seat = result.get("forfeit_seat")
    forfeit_team = rules.team_of(forfeit_seat) if forfeit_seat is not None else None
    winner = result["winner"]
    teams = [rules.team_of(s) for s in range(rules.players)]
    args = [
        keys.base,
        match_id,
        json.dumps(record, separators=(",", ":")),
        json.dumps(result),
        json.dumps(bots),
        json.dumps(teams),
        json.dumps(placing(rules, record["score"], winner, forfeit_team)),
        json.dumps(record["score"]),
        json.dumps(conduct),
        k,
        initial,
        f"{time.time():.3f}",
        -1 if winner is None else winner,
    ]
    return bool(client.eval(_COMMIT, 0, *args))
