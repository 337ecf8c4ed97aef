"""Settling a match: the one way a finished match, played or forfeited, becomes a result.

A worker that played a match and the scheduler that forfeits an absent bot's
match both hand over a :class:`Finished` and the match's :class:`MatchLease`;
:func:`settle` builds what the ledger stores of it (its mirrored unit, its luck
sampled with the league's keyed sampling seed) and commits it, fenced by the
lease: a holder that lost the lease gets :class:`~store.ledger.NotLeaseHolder`
and nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine_service.rules import GameRecord

from .leagues import League, LeagueStore
from .leases import MatchLease
from .ledger import match_luck
from .units import mirror_unit


@dataclass(frozen=True)
class Finished:
    """A match that is over: its record, who sat where, each seat's conduct, the seed it was dealt from, and
    each play's move time (None for a match nobody played, a forfeit)."""

    record: GameRecord
    seats: Sequence[str]
    conduct: Sequence[Mapping[str, Any]]
    seed: str
    times_ms: Sequence[int] | None = None


def settle(store: LeagueStore, league: League, match_id: str, finished: Finished, lease: MatchLease) -> bool:
    """Commit ``finished`` as ``match_id``'s result, holding ``lease``; False if it was settled already."""
    # ~80 ms of CPU once a match; a forfeit has no luck (None), which the skill fit counts
    luck = match_luck(finished.record, store.deal_seeds(league).sampling(finished.seed))
    return store.ledger.commit(
        store.keys(league.league_id),
        match_id,
        finished.record,
        finished.seats,
        finished.conduct,
        league.k,
        league.initial,
        lease_token=lease.token,
        unit=mirror_unit(finished.seed, finished.seats),
        times_ms=finished.times_ms,
        luck=luck,
    )
