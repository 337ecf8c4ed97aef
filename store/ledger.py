"""The one atomic step that records a finished match, and a match's state moves.

:meth:`Ledger.commit` runs one Lua script keyed by the match: it stores the
record and result, applies every Elo change, updates W/D/L, points, conduct and
rating history, and marks the match done. Run it twice (a redelivered task, a
duplicate worker) and the second run changes nothing: a result is never lost
and never counted twice. Given the runner's lease token it is also *fenced*: a
runner that no longer holds the match's lease cannot commit (:class:`NotLeaseHolder`), and a commit
without a token cannot land while anybody holds it.

Elo for more than two sides is pairwise: every two seats on different teams
play a virtual game (1, 0.5 or 0 by placing) and each seat moves by
``K / opponents * (S - E)``. Each pair's changes cancel, so the ratings of a
league always sum to ``bots * initial``.

Both scripts are registered once per client and name every key they touch in
``KEYS`` (:mod:`store.keys`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import redis

from config import load_settings
from engine_service.rules import FinishedMatch, GameRecord, LuckError, Rules, luck_of_record
from engine_service.rules.compact import CompactRecordError, encode

from .keys import LeagueKeys
from .units import placing
from .upgrade import FORM_LUA

log = logging.getLogger("tablanette.store")
R = TypeVar("R")

MATCH_STATES = ("queued", "running", "failed")
"""The states a match moves through before it is done (each has a set of match ids)."""

# KEYS: match, form, h2h, h2h-games, records, finished, queued, running, failed, lease, outcomes, legacy form,
#       open deals, then per seat: stats, bot-matches.
# ARGV: match id, record, result, bots, teams, placing, totals, conduct, k, initial, now, winner, lease token,
#       outcome, luck (per team, JSON; empty when the match has none).
_COMMIT = (
    FORM_LUA
    + """
local mkey, form, h2h, h2h_games, records, finished = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local lease = KEYS[10]
local mid, lease_token = ARGV[1], ARGV[13]
-- done already: written again (it stays done) so a WAIT after this call covers the commit that made it done
if redis.call('HGET', mkey, 'status') == 'done' then redis.call('HSET', mkey, 'status', 'done') return 0 end
-- fenced: only the lease's holder commits; a commit without a token only while nobody holds the lease
local holder = redis.call('GET', lease)
if (lease_token == '' and holder) or (lease_token ~= '' and holder ~= lease_token) then return -1 end
local bots = cjson.decode(ARGV[4])
local teams = cjson.decode(ARGV[5])
local placing = cjson.decode(ARGV[6])
local totals = cjson.decode(ARGV[7])
local conduct = cjson.decode(ARGV[8])
local k, initial, now, winner = tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11], tonumber(ARGV[12])
local n = #bots
local luck = nil
if ARGV[15] ~= '' then luck = cjson.decode(ARGV[15]) end
local sum_totals = 0
for t = 1, #totals do sum_totals = sum_totals + totals[t] end
local function seat_key(i, j) return KEYS[13 + (i - 1) * 2 + j] end
local rating, delta, opponents = {}, {}, 0
upgrade_form(KEYS[12], form)  -- a league an older arena wrote (store/upgrade.py)
for i = 1, n do
  rating[i] = tonumber(redis.call('ZSCORE', form, bots[i]) or initial)
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
      redis.call('HINCRBYFLOAT', h2h, bots[i] .. '\\t' .. bots[j], s)
      redis.call('HINCRBYFLOAT', h2h, bots[j] .. '\\t' .. bots[i], 1 - s)
      redis.call('HINCRBY', h2h_games, bots[i] .. '\\t' .. bots[j], 1)
      redis.call('HINCRBY', h2h_games, bots[j] .. '\\t' .. bots[i], 1)
    end
  end
end
local changes = {}
for i = 1, n do
  local new = rating[i] + delta[i]
  redis.call('ZADD', form, string.format('%.6f', new), bots[i])
  local skey = seat_key(i, 1)
  local team = teams[i]
  redis.call('HINCRBY', skey, 'games', 1)
  if winner < 0 then redis.call('HINCRBY', skey, 'draws', 1)
  elseif winner == team then redis.call('HINCRBY', skey, 'wins', 1)
  else redis.call('HINCRBY', skey, 'losses', 1) end
  redis.call('HINCRBY', skey, 'points', totals[team + 1])
  redis.call('HINCRBY', skey, 'timeouts', conduct[i]['timeouts'])
  redis.call('HINCRBY', skey, 'illegal', conduct[i]['illegal'])
  if conduct[i]['forfeit'] then redis.call('HINCRBY', skey, 'forfeits', 1) end
  if luck then  -- the bot's margins over the matches that have luck: raw and the cards' share of it
    local raw = totals[team + 1] - (sum_totals - totals[team + 1]) / (#totals - 1)
    redis.call('HINCRBY', skey, 'luck_games', 1)
    redis.call('HINCRBYFLOAT', skey, 'luck_raw', string.format('%.2f', raw))
    redis.call('HINCRBYFLOAT', skey, 'luck', string.format('%.2f', luck[team + 1]))
  end
  redis.call('HSET', skey, 'last_played', now)
  redis.call('RPUSH', seat_key(i, 2), string.format('%s\\t%.2f', mid, new))
  changes[i] = string.format('%.2f', delta[i])
end
redis.call('HSET', records, mid, ARGV[2])
redis.call('HDEL', mkey, 'worker', 'waiting', 'queued_at', 'seed')
redis.call('HSET', mkey, 'status', 'done', 'result', ARGV[3], 'finished_at', now,
           'elo', '[' .. table.concat(changes, ',') .. ']', 'score', ARGV[7])
if luck then redis.call('HSET', mkey, 'luck', ARGV[15]) end
for s = 7, 9 do redis.call('SREM', KEYS[s], mid) end
redis.call('RPUSH', finished, mid)
redis.call('RPUSH', KEYS[11], ARGV[14])
local deal = redis.call('HGET', mkey, 'deal')  -- a game of a shared deal: one fewer left to play (store/embargo.py)
if deal then redis.call('HINCRBY', KEYS[13], deal, -1) end
return 1
"""
)

# KEYS: match, queued, running, failed. ARGV: match id, state, then field/value pairs.
_SET_STATE = """
local mkey, mid, state = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', mkey, 'status') == 'done' then return 0 end
local sets = {queued = KEYS[2], running = KEYS[3], failed = KEYS[4]}
for _, key in pairs(sets) do redis.call('SREM', key, mid) end
if sets[state] then redis.call('SADD', sets[state], mid) end
redis.call('HSET', mkey, 'status', state)
for i = 3, #ARGV, 2 do redis.call('HSET', mkey, ARGV[i], ARGV[i + 1]) end
return 1
"""


class NotLeaseHolder(RuntimeError):
    """A runner tried to commit a match whose lease it no longer holds (another runner may play it)."""


def scripted_again(send: Callable[[], R]) -> R:
    """``send()`` (a pipeline of script calls), once more if a server answered that it never loaded a script.

    A pipeline loads its scripts on the server it is connected to, then sends; when the primary fails over
    between the two, the client's retry sends to the new primary, which has never seen them (NoScriptError),
    and the next pipeline loads them there. Only for pipelines whose every command may run twice: the ledger's
    state moves and its commit are idempotent.
    """
    try:
        return send()
    except redis.exceptions.NoScriptError:
        log.warning("a script was missing on the Redis server (a failover): sending again")
        return send()


class Ledger:
    """The ledger's writes on one Redis client (scripts registered once)."""

    def __init__(self, client: redis.Redis, replicas: int | None = None, wait_ms: int | None = None) -> None:
        """``replicas``: how many replicas must hold a commit before :meth:`commit` returns (``WAIT``);
        by default ``TABLANETTE_REDIS_WAIT_REPLICAS`` and ``TABLANETTE_REDIS_WAIT_MS``."""
        self.r = client
        if replicas is None or wait_ms is None:
            settings = load_settings()
            replicas = settings.redis_wait_replicas if replicas is None else replicas
            wait_ms = settings.redis_wait_ms if wait_ms is None else wait_ms
        self.replicas, self.wait_ms = replicas, wait_ms
        self._commit = client.register_script(_COMMIT)
        self._set_state = client.register_script(_SET_STATE)

    def set_state(self, keys: LeagueKeys, match_id: str, state: str, **fields: object) -> bool:
        """Move a match to ``state`` (planned, queued, running, failed), fields included.

        Atomic, and never moves a done match (only :meth:`commit` makes one).
        """
        extra = _state_args(state, fields)
        return bool(self._set_state(keys=state_keys(keys, match_id), args=[match_id, *extra]))

    def set_states(self, keys: LeagueKeys, match_ids: Sequence[str], state: str, **fields: object) -> None:
        """:meth:`set_state` for many matches, in one round trip (each still atomic on its own)."""
        extra = _state_args(state, fields)

        def send() -> None:
            pipe = self.r.pipeline(transaction=False)
            for match_id in match_ids:
                self._set_state(keys=state_keys(keys, match_id), args=[match_id, *extra], client=pipe)
            pipe.execute()

        scripted_again(send)

    def commit(
        self,
        keys: LeagueKeys,
        match_id: str,
        record: GameRecord,
        bots: Sequence[str],
        conduct: Sequence[Mapping[str, Any]],
        k: float,
        initial: float,
        lease_token: str = "",
        unit: str = "",
        times_ms: Sequence[int] | None = None,
        luck: Sequence[float] | None = None,
        blob: bytes | None = None,
    ) -> bool:
        """Store a finished match once; False if it was already stored.

        The record is stored compact, with ``times_ms``, each play's move time: ``blob``, made with the match
        (:attr:`engine_service.rules.FinishedMatch.blob`), or else :func:`record_value` of the record.

        Fenced by the match's lease: with ``lease_token``, raises :class:`NotLeaseHolder` unless that token
        still holds it; without, unless nobody holds it (a tool or test that is the only writer; the scheduler's
        forfeit takes the lease as a worker does). ``unit`` names the mirrored group the match
        belongs to (its deal seed: games sharing one deal are one unit for the
        ratings' uncertainty); by default the match is a unit of its own.
        ``luck``: each team's luck margin (:func:`match_luck`), stored with the outcome; None: not known.
        """
        rules = Rules.from_record(record["rules"], players=len(record["players"]))
        result = record["result"]
        forfeit_seat = result.get("forfeit_seat")
        forfeit_team = rules.team_of(forfeit_seat) if forfeit_seat is not None else None
        winner = result["winner"]
        teams = [rules.team_of(s) for s in range(rules.players)]
        placed = placing(record["score"], winner, forfeit_team)
        outcome = _outcome(match_id, unit, rules, bots, placed, record["score"], luck)
        args: list[str | bytes | int | float] = [
            match_id,
            blob if blob is not None else record_value(record, times_ms),
            _compact_json(result),
            _compact_json(list(bots)),
            _compact_json(teams),
            _compact_json(placed),
            _compact_json(record["score"]),
            json.dumps(list(conduct)),
            k,
            initial,
            f"{time.time():.3f}",
            -1 if winner is None else winner,
            lease_token,
            _compact_json(outcome),
            _compact_json(outcome[5]) if luck is not None else "",
        ]
        stored = self._replicated_commit(commit_keys(keys, match_id, bots), args, match_id)
        if stored < 0:
            why = "this runner no longer holds its lease" if lease_token else "another runner holds its lease"
            raise NotLeaseHolder(f"match {match_id} of league {keys.league}: {why}")
        return stored == 1

    def _replicated_commit(self, keys: list[str], args: list[str | bytes | int | float], match_id: str) -> int:
        """The commit script's answer, once ``self.replicas`` replicas hold what it wrote (WAIT on its connection).

        A commit the replicas have not acknowledged is not done yet: the script runs again
        (a no-op that rewrites the done mark, which the next WAIT then covers) until they
        have, so a result this returns survives the loss of the primary. A first try that
        stored it counts as stored.
        """
        if not self.replicas:
            return int(self._commit(keys=keys, args=args))
        stored, since, logged = 0, time.monotonic(), 0.0
        while True:

            def send() -> list[Any]:
                pipe = self.r.pipeline(transaction=False)  # one connection: WAIT counts that connection's writes
                self._commit(keys=keys, args=args, client=pipe)
                pipe.wait(self.replicas, self.wait_ms)
                return list(pipe.execute())

            answer, acknowledged = (int(x) for x in scripted_again(send))
            stored = stored or answer
            if answer < 0 or acknowledged >= self.replicas:
                return answer if answer < 0 else stored
            if time.monotonic() - logged >= 10:
                logged = time.monotonic()
                log.warning(
                    "match %s: %d of %d replicas hold its commit after %.0f s; waiting for them",
                    match_id,
                    acknowledged,
                    self.replicas,
                    logged - since,
                )


def record_value(record: GameRecord, times_ms: Sequence[int] | None = None) -> bytes:
    """What the ledger stores for a record: its compact blob (:mod:`engine_service.rules.compact`).

    A record the compact form cannot rebuild exactly (never one the engine wrote) is stored as its
    JSON instead, which every reader still reads (:meth:`store.results.LeagueResults.record`).
    """
    plays = sum(len(d["plays"]) for d in record["deals"])
    if times_ms is not None and len(times_ms) != plays:
        log.warning("record %s: %d move times for %d plays; stored without them", record["id"], len(times_ms), plays)
        times_ms = None
    try:
        return encode(record, times_ms)
    except CompactRecordError as exc:
        log.warning("record stored as JSON: %s", exc)
        return json.dumps(record, separators=(",", ":")).encode()


def match_luck(game: GameRecord | FinishedMatch, sampling_seed: str | None = None) -> list[float] | None:
    """Each team's luck margin in a finished match (points, to 0.01), or None when it has none; the samples
    seeded by ``sampling_seed`` (:meth:`store.deal_seeds.DealSeeds.sampling`; default: the record's seed).
    ``game``: the finished match made from the live match (nothing replayed), or a record from elsewhere
    (re-verified first).

    A match that ended by a forfeit or abort, or whose record does not verify, has no luck
    (:class:`~engine_service.rules.LuckError`): it is skipped, never guessed. Nothing here may
    fail a commit: any other error is logged and the match counts as skipped too.
    """
    try:
        if isinstance(game, FinishedMatch):
            luck = game.luck(sampling_seed)
            return None if luck is None else [round(x, 2) for x in luck]
        return [round(x, 2) for x in luck_of_record(game, sampling_seed=sampling_seed).luck]
    except LuckError:
        return None
    except Exception:  # a bug in the estimator must not lose a finished match
        rid = game.record["id"] if isinstance(game, FinishedMatch) else game.get("id", "?")
        log.exception("luck of match %s: not computed", rid)
        return None


def _compact_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def state_keys(keys: LeagueKeys, match_id: str) -> list[str]:
    """The keys a match's state move touches (the set-state script's ``KEYS``)."""
    return [keys.match(match_id), *(keys.state_set(s) for s in MATCH_STATES)]


def commit_keys(keys: LeagueKeys, match_id: str, bots: Sequence[str]) -> list[str]:
    """The keys a match's commit touches (the commit script's ``KEYS``, in its order)."""
    out = [
        keys.match(match_id),
        keys.form,
        keys.head_to_head,
        keys.head_to_head_games,
        keys.records,
        keys.finished_order,
        *(keys.state_set(s) for s in MATCH_STATES),
        keys.lease(match_id),
        keys.outcomes,
        keys.legacy_form,
        keys.open_deals,
    ]
    for bot in bots:
        out += [keys.stats(bot), keys.bot_matches(bot)]
    return out


def _outcome(
    match_id: str,
    unit: str,
    rules: Rules,
    bots: Sequence[str],
    placed: Sequence[float],
    score: list[int],
    luck: Sequence[float] | None,
) -> list[object]:
    """The match's outcome as the ratings read it (``unit`` empty: the match is a unit of its own)."""
    outcome: list[object] = [  # scheduler.ratings.Outcome, positional: match, unit, teams, placing, points[, luck]
        match_id,
        unit or match_id,
        [[bots[s] for s in team] for team in rules.teams],
        [int(p) for p in placed],  # whole numbers (points, or the winner's and forfeit's 1e9)
        score,
    ]
    if luck is not None:
        if len(luck) != len(rules.teams):
            raise ValueError(f"match {match_id}: luck for {len(luck)} teams, the match has {len(rules.teams)}")
        outcome.append([round(float(x), 2) for x in luck])
    return outcome


def _state_args(state: str, fields: Mapping[str, object]) -> list[str]:
    """The set-state script's arguments after the match id: the state, then field, value, ..."""
    if state not in (*MATCH_STATES, "planned"):
        raise ValueError(f"unknown match state {state!r}")
    return [state, *(str(x) for kv in fields.items() for x in kv)]
