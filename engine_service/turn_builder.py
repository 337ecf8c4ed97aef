"""The messages of a match as a bot sees them: its GameStarted, and each Turn (built incrementally).

:class:`engine_service.driver.MatchDriver` builds every turn it asks with a
:class:`TurnBuilder`; :func:`turn_message` is the same message built afresh.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine_service.rules import Match, Observation, Rules
from engine_service.wire import convert
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import game_pb2 as gpb


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
    (:func:`engine_service.wire.convert.named_turn`). A loop that asks every turn of a match uses a
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
        self.observation: Observation | None = None
        """The seat's observation the last turn was built from (its legal plays filled in)."""
        self._deal = -1
        self._count = 0

    def turn(self, turn_id: int, wire: bool = True) -> apb.Turn:
        """The turn ``turn_id`` of the seat to play. ``wire=False``: the turn without the seat's view
        (no observation, no legal plays), for a bot in this process that reads :attr:`observation`."""
        match = self.match
        self.observation = obs = match.observation(match.turn)
        if not wire:
            return apb.Turn(game_id=self.game_id, turn_id=turn_id, time_left_ms=match.rules.move_time_ms)
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
