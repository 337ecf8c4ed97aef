"""Play one match between connected bots through the engine service.

A match is played by one :class:`~engine_service.driver.MatchDriver` at a time,
and the runner is the authority on its result. When the session registry
(Redis) puts every bot of the match on one replica, that replica's driver plays
it (``Dispatch.PlayMatch``, see :mod:`engine_service.local_match`): one hop per
move instead of two. The runner's own driver follows the answers as they come
(given the seed, they are the match), each applied once, and the record the
replica sends at the end must be the one they make. From any turn the replica
hands back (a bot that left it, a replica that died), that driver plays on, its
transport
(:class:`RemoteTransport`) finds the replica holding the bot and asks it for a
play through ``Dispatch.RequestPlay``: a timeout follows ``timeout_action``
(trail the lowest card, or forfeit); a bot still gone after the grace period
forfeits, unless the arena was at fault (see :meth:`MatchRunner.ask`). The
result is the game record plus per-seat conduct counts (timeouts, illegal answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from redis.asyncio import Redis

from config.internal_calls import CHANNEL_OPTIONS, INTERNAL_METADATA
from engine_service.driver import Answered, MatchDriver, SeatConduct
from engine_service.grace import GracePeriod
from engine_service.rules import FinishedMatch, GameRecord, Match, RecordError, Rules
from engine_service.time_control import TimeControl
from engine_service.turn_builder import game_started
from engine_service.wire import convert
from store.client import connect_async
from store.sessions import SessionRegistry, internal_secret
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import dispatch_pb2_grpc

log = logging.getLogger("tablanette.worker")

__all__ = ["BotUnavailable", "MatchOutcome", "MatchRunner", "ReplicaUnreachable", "SeatConduct", "run_match"]


@dataclass
class MatchOutcome:
    """A match played to its end: the finished value (made once, from the match the runner's driver holds),
    each seat's conduct, and how long it took."""

    finished: FinishedMatch
    conduct: list[SeatConduct]
    seconds: float
    moves: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def record(self) -> GameRecord:
        return self.finished.record

    @property
    def times_ms(self) -> tuple[int, ...] | None:
        """Each play's move time in ms (the response's ``used_ms``), in play order; the ledger keeps them."""
        return self.finished.times_ms


class BotUnavailable(RuntimeError):
    """A bot is not connected anywhere (raised before the match starts)."""


class ReplicaUnreachable(RuntimeError):
    """The replica holding a bot cannot be reached (down, or a TLS/plaintext mismatch).

    The arena's fault, not the bot's: the match is abandoned and retried, never
    scored as a forfeit.
    """


class MatchRunner:
    """Runs matches; holds one channel per replica and the registry connection."""

    def __init__(
        self,
        redis: Redis,
        prefix: str,
        grace_ms: int = 10_000,
        tls_ca: bytes | None = None,
        replica_matches: bool = True,
    ) -> None:
        """``replica_matches``: let a replica holding every bot of a match play it (False: turn by turn)."""
        self.redis = redis
        self.replica_matches = replica_matches
        self.registry = SessionRegistry(redis, prefix, ttl_ms=15_000)
        self.prefix = prefix
        self.grace_ms = grace_ms
        self.tls_ca = tls_ca
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._secret: str | None = None
        self._replicas: dict[str, str] = {}
        """Where each bot was last reached; looked up again only when it is not there."""

    async def close(self) -> None:
        for ch in self._channels.values():
            await ch.close()
        self._channels.clear()

    def _stub(self, replica: str) -> dispatch_pb2_grpc.DispatchStub:
        ch = self._channels.get(replica)
        if ch is None:
            if self.tls_ca is not None:
                ch = grpc.aio.secure_channel(replica, grpc.ssl_channel_credentials(self.tls_ca), CHANNEL_OPTIONS)
            else:
                ch = grpc.aio.insecure_channel(replica, CHANNEL_OPTIONS)
            self._channels[replica] = ch
        return dispatch_pb2_grpc.DispatchStub(ch)

    async def _metadata(self) -> tuple[tuple[str, str], ...]:
        if self._secret is None:
            self._secret = await internal_secret(self.redis, self.prefix)
        return ((INTERNAL_METADATA, self._secret),)

    async def labels(self, bots: Sequence[str]) -> list[str]:
        """``name@version`` of each connected bot; raises :class:`BotUnavailable`."""
        out = []
        for bot in bots:
            entry = await self.registry.lookup(bot)
            if entry is None:
                raise BotUnavailable(f"bot {bot!r} is not connected to any engine service replica")
            out.append(entry.label)
            self._replicas[bot] = entry.replica
        return out

    async def play(
        self,
        rules: Rules,
        seed: str,
        bots: Sequence[str],
        game_id: str,
        control: TimeControl | None = None,
        answered: Answered | None = None,
        watch: Callable[[Match], None] | None = None,
    ) -> MatchOutcome:
        """Play one match; ``bots[s]`` is the bot name at seat ``s``; ``control``: the league's time
        control (:class:`engine_service.time_control.TimeControl`; None: the rules' move time on the wall clock);
        ``answered``: told of every answer of the match, in order, whoever asked it; ``watch``: given the
        match as it starts and after each answer (the spectators' feed reads it).

        The runner holds one copy of the match, its driver: it follows the answers of the replica playing
        the match, and plays on from them itself if the replica hands the match back or dies. Every answer
        is applied once here, and a record the replica sends must be the one these answers make."""
        if len(bots) != rules.players:
            raise ValueError(f"{len(bots)} bots for {rules.players} seats")
        control = control.check(rules) if control is not None else TimeControl.of_rules(rules)
        labels = await self.labels(bots)
        started = time.monotonic()
        game = game_started(rules, labels, game_id)
        driver = MatchDriver(rules, seed, game_id, control)

        def applied(turn_id: int, seat: int, resp: dpb.PlayResponse) -> None:
            if answered is not None:
                answered(turn_id, seat, resp)
            if watch is not None:
                watch(driver.match)

        if watch is not None:
            watch(driver.match)
        end, fault = None, None
        if self.replica_matches:
            end, fault = await self._play_on_replica(game, seed, bots, control, driver, applied)
        on_replica = driver.turn_id
        if end is None:
            await driver.play(RemoteTransport(self, bots, game, control, fault), applied)
            if driver.turn_id > on_replica:  # the replica announces a match it played to the end
                await self._announce_end(driver.match, bots, game_id)
        elif not driver.over:
            raise RecordError(f"record {game_id}: the replica ended a match its own answers do not end")
        finished = driver.finished(labels)
        if end is not None:
            self.check_replica_record(end, finished, seed, labels)
        moves = sum(len(d["plays"]) for d in finished.record["deals"])
        extra = {"turns_on_replica": on_replica}
        return MatchOutcome(finished, driver.conduct, time.monotonic() - started, moves, extra)

    @staticmethod
    def check_replica_record(end: dpb.MatchEnd, finished: FinishedMatch, seed: str, labels: Sequence[str]) -> None:
        """Check the record of a match a replica played to the end against the match the runner's driver made
        of the same answers (``finished``). The replica runs this arena's own engine, so a record that differs
        is the arena's bug (:class:`~engine_service.rules.RecordError`, never scored); what is kept of the
        match is ``finished``, made once, as are the conduct and move times counted from those answers."""
        if end.record == finished.text:  # the replica writes it as the runner does: one string to compare
            return
        game_id = finished.record["id"]
        record = json.loads(end.record)  # a replica of another version may write it otherwise
        if (record.get("id"), record.get("seed"), record.get("players")) != (game_id, seed, list(labels)):
            raise RecordError(f"record {game_id}: the replica sent the record of another match")
        if record != json.loads(finished.text):
            raise RecordError(f"record {game_id}: the replica's record is not the match its own answers make")

    async def _play_on_replica(
        self,
        game: apb.GameStarted,
        seed: str,
        bots: Sequence[str],
        control: TimeControl,
        driver: MatchDriver,
        applied: Answered,
    ) -> tuple[dpb.MatchEnd | None, str | None]:
        """Let the replica holding every bot play the match, ``driver`` following its answers.

        Returns the match's end if the replica played it to the end; else, if the
        replica failed mid-match, why (the arena's fault: the next turn asked must
        not cost its bot anything). Nothing is played there when the bots are on
        different replicas.
        """
        replicas = {self._replicas.get(bot) for bot in bots}
        replica = replicas.pop() if len(replicas) == 1 else None
        if replica is None:
            return None, None
        request = dpb.PlayMatchRequest(game=game, seed=seed, bots=list(bots), time_control=control.to_pb())
        call = self._stub(replica).PlayMatch(request, metadata=await self._metadata())
        gid, end = game.game_id, None
        try:
            async for batch in call:
                for event in batch.events:
                    if event.turn_id != driver.turn_id + 1:  # never: the same engine on both sides
                        log.warning("game %s: replica %s sent turn %d out of order", gid, replica, event.turn_id)
                        return None, None
                    if event.HasField("end"):
                        end = event.end
                    elif event.handoff:
                        log.info("game %s: turn %d handed back by %s: %s", gid, event.turn_id, replica, event.reason)
                        return None, None
                    else:
                        try:
                            driver.resume(event.seat, event.response)
                        except ValueError as exc:  # never: the same engine on both sides
                            log.warning("game %s: replica %s sent an answer out of turn: %s", gid, replica, exc)
                            return None, None
                        applied(event.turn_id, event.seat, event.response)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:  # a replica of an older version: turn by turn
                return None, None
            if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                raise
            why = f"replica {replica} playing the match: {exc.code().name}: {exc.details()}"
            log.warning("game %s: %s after %d turns; playing on turn by turn", gid, why, driver.turn_id)
            return None, why
        finally:
            call.cancel()
        return end, None

    async def ask(
        self, bot: str, game: apb.GameStarted, turn: apb.Turn, control: dpb.TimeControl, fault: str | None = None
    ) -> dpb.PlayResponse:
        """Ask whichever replica holds ``bot``; follow it if it moves; give up after the grace period.

        The grace period is the bot's: time the arena itself loses (a replica
        that does not answer, a lookup held up by a Redis outage, a replica that
        says its store was unreachable) never uses it up. After such a fault the
        bot gets a whole grace period from then to come back (at most
        :data:`engine_service.grace.ARENA_PATIENCE` grace periods in all: one rule,
        :class:`engine_service.grace.GracePeriod`); if it is still not back,
        the match is abandoned as the arena's fault (:class:`ReplicaUnreachable`),
        never scored as the bot's forfeit. ``fault``: the arena already failed
        this turn (a replica playing the match died), so it starts excused.
        """
        grace = GracePeriod(self.grace_ms / 1000)  # sticky fault: once the arena failed, never the bot's forfeit
        metadata = await self._metadata()
        if fault is not None:
            grace.excuse(fault)
        while True:
            replica = self._replicas.get(bot)
            if replica is None:
                asked = time.monotonic()
                entry = await self.registry.lookup(bot)  # waits out a Redis outage
                grace.looked_up(asked, f"bot {bot!r}")
                replica = entry.replica if entry is not None else None
            if replica is not None:
                remaining_ms = int(grace.remaining() * 1000)
                req = dpb.PlayRequest(
                    bot_name=bot, game=game, turn=turn, grace_ms=max(remaining_ms, 1), time_control=control
                )
                try:
                    resp: dpb.PlayResponse = await self._stub(replica).RequestPlay(req, metadata=metadata)
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                        raise
                    grace.excuse(f"replica {replica} holding bot {bot!r}: {exc.code().name}: {exc.details()}")
                    resp = dpb.PlayResponse(outcome=dpb.PlayResponse.DISCONNECTED)
                if resp.arena_fault:
                    grace.excuse(f"replica {replica} could not reach its store while waiting for bot {bot!r}")
                if resp.outcome != dpb.PlayResponse.DISCONNECTED:
                    self._replicas[bot] = replica
                    return resp
            self._replicas.pop(bot, None)  # the bot moved or left: look it up afresh
            if grace.remaining() <= 0:
                if grace.fault is not None:
                    raise ReplicaUnreachable(grace.fault)
                return dpb.PlayResponse(outcome=dpb.PlayResponse.DISCONNECTED)
            await asyncio.sleep(0.1)

    async def _announce_end(self, match: Match, bots: Sequence[str], game_id: str) -> None:
        assert match.result is not None
        result = convert.result_to_pb(match.result, match.totals)
        metadata = await self._metadata()
        for seat, bot in enumerate(bots):
            entry = await self.registry.lookup(bot)
            if entry is None:
                continue
            over = apb.GameOver(game_id=game_id, result=result, record_id=game_id, seat=seat)
            with contextlib.suppress(grpc.aio.AioRpcError):  # best effort: the record is what counts
                await self._stub(entry.replica).EndGame(
                    dpb.EndGameRequest(bot_name=bot, game_over=over), metadata=metadata, timeout=5
                )


class RemoteTransport:
    """The driver's transport from the runner: each turn asked of whichever replica holds the seat's bot."""

    def __init__(
        self, runner: MatchRunner, bots: Sequence[str], game: apb.GameStarted, control: TimeControl, fault: str | None
    ) -> None:
        self.runner, self.bots, self.game, self.control = runner, bots, game, control.to_pb()
        self.fault = fault
        """The arena already failed the first turn asked (a replica playing the match died): it starts excused."""

    async def ask(self, seat: int, turn: apb.Turn) -> dpb.PlayResponse:
        self.game.seat = seat
        fault, self.fault = self.fault, None
        return await self.runner.ask(self.bots[seat], self.game, turn, self.control, fault)


async def run_match(
    redis_url: str, prefix: str, rules: Rules, seed: str, bots: Sequence[str], game_id: str, grace_ms: int = 10_000
) -> MatchOutcome:
    """One-shot helper: connect, play one match, clean up."""
    redis = connect_async(redis_url)
    runner = MatchRunner(redis, prefix, grace_ms)
    try:
        return await runner.play(rules, seed, bots, game_id)
    finally:
        await runner.close()
        await redis.aclose()
