"""One turn of a match as the arena asks it and applies the answer.

Both places that drive a match use these, so they ask and apply alike: the match
runner (:mod:`worker.match_runner`, one ``RequestPlay`` call per turn) and a
replica playing a match whose bots are all connected to it
(:mod:`engine_service.local_match`, whose events the runner applies to its own
copy of the match).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine_service import convert
from engine_service.rules import IllegalPlayError, Match, Rules
from engine_service.time_control import MatchClock
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import dispatch_pb2 as dpb
from tablanette.v1 import game_pb2 as gpb

Outcome = dpb.PlayResponse


@dataclass
class SeatConduct:
    """What the arena saw of one seat's behaviour."""

    moves: int = 0
    timeouts: int = 0
    illegal: int = 0
    auto: int = 0
    forfeit: bool = False


def game_started(rules: Rules, labels: Sequence[str], game_id: str) -> apb.GameStarted:
    """The GameStarted a bot gets before its first turn (``seat`` is set per bot)."""
    return apb.GameStarted(
        game_id=game_id,
        players=list(labels),
        rules=convert.rules_to_pb(rules),
        teams=[apb.Team(seats=list(t)) for t in rules.teams],
    )


def turn_message(match: Match, game_id: str, turn_id: int) -> apb.Turn:
    """The Turn of the seat to play: its observation, every legal play, the move time.

    Always in the packed form; the gateway names it for a bot that did not ask for that form
    (:func:`engine_service.convert.named_turn`). A loop that asks every turn of a match uses a
    :class:`TurnBuilder` instead: the same message, built for less.
    """
    return TurnBuilder(match, game_id).turn(turn_id)


class TurnBuilder:
    """The turns of one match, each as :func:`turn_message` builds it.

    The deal's plays are public and only ever grow, so their packed columns are
    kept and appended to as plays happen, not packed again on every turn: the
    deal's last turn costs what its first does. The rest of each turn (the seat's
    hand, the table, the legal plays) is read from the match's observation for
    that seat, as ever.
    """

    def __init__(self, match: Match, game_id: str) -> None:
        self.match = match
        self.game_id = game_id
        self._plays = gpb.PackedObservation()
        self._deal = -1
        self._count = 0

    def turn(self, turn_id: int) -> apb.Turn:
        match = self.match
        obs = match.observation(match.turn)
        plays = obs.plays
        if obs.deal_index != self._deal or len(plays) < self._count:  # a new deal: its plays start afresh
            self._plays.Clear()
            self._deal, self._count = obs.deal_index, 0
        convert.extend_packed_plays(self._plays, plays[self._count :])
        self._count = len(plays)
        legal = obs.legal_plays
        turn = apb.Turn(
            game_id=self.game_id,
            turn_id=turn_id,
            legal_cards=[p.card for p in legal],
            legal_captured=[p.mask for p in legal],
            time_left_ms=match.rules.move_time_ms,
        )
        packed = turn.packed
        packed.CopyFrom(self._plays)
        convert.fill_packed(packed, obs)
        return turn


def apply_response(
    match: Match, seat: int, resp: dpb.PlayResponse, conduct: SeatConduct, clock: MatchClock | None = None
) -> None:
    """Apply what the seat's bot did (and charge its time to ``clock``, the match's time banks).

    A timeout follows ``timeout_action`` (trail the lowest card, or forfeit); a
    bot still gone after the grace period forfeits. A play the engine refuses
    (a replica must never pass one) counts as an illegal answer and is treated
    as a timeout.
    """
    conduct.illegal += resp.rejected
    if clock is not None:
        clock.charge(seat, resp)
    if resp.outcome == Outcome.PLAYED:
        try:
            match.play(convert.play_from_pb(resp.play))
            conduct.moves += 1
            return
        except (IllegalPlayError, ValueError):
            conduct.illegal += 1
    if resp.outcome == Outcome.DISCONNECTED:
        conduct.forfeit = True
        match.forfeit(seat)
        return
    conduct.timeouts += 1
    if match.rules.timeout_action == "forfeit":
        conduct.forfeit = True
        match.forfeit(seat)
    else:
        conduct.auto += 1
        match.play(match.timeout_play(), auto=True)
