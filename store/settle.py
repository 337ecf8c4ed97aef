"""Settling a match: the one way a finished match, played or forfeited, becomes a result.

A worker that played a match and the scheduler that forfeits an absent bot's
match both hand over a :class:`Finished` and the match's :class:`MatchLease`;
:func:`settle` builds what the ledger stores of it (its mirrored unit, its luck
sampled with the league's keyed sampling seed, from the live match) and commits it, fenced by the
lease: a holder that lost the lease gets :class:`~store.ledger.NotLeaseHolder`
and nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine_service.rules import FinishedMatch, GameRecord

from .leagues import League, LeagueStore
from .leases import MatchLease
from .ledger import match_luck
from .units import mirror_unit


@dataclass(frozen=True)
class Finished:
    """A match that is over: the finished value made once from its live match (record, compact blob, move
    times, luck; :class:`~engine_service.rules.FinishedMatch`), who sat where, each seat's conduct, and the
    seed it was dealt from. A forfeit nobody played is a finished match too, of no plays."""

    game: FinishedMatch
    seats: Sequence[str]
    conduct: Sequence[Mapping[str, Any]]
    seed: str

    @property
    def record(self) -> GameRecord:
        return self.game.record


def settle(store: LeagueStore, league: League, match_id: str, finished: Finished, lease: MatchLease) -> bool:
    """Commit ``finished`` as ``match_id``'s result, holding ``lease``; False if it was settled already."""
    game = finished.game
    # ~80 ms of CPU once a match, from the live match; a forfeit has no luck (None), which the skill fit counts
    luck = match_luck(game, store.deal_seeds(league).sampling(finished.seed))
    return store.ledger.commit(
        store.keys(league.league_id),
        match_id,
        game.record,
        finished.seats,
        finished.conduct,
        league.k,
        league.initial,
        lease_token=lease.token,
        unit=mirror_unit(finished.seed, finished.seats),
        times_ms=game.times_ms,
        luck=luck,
        blob=game.blob,
    )
