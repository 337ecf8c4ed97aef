"""A finished match, made once from the live match that was played.

Everything the arena keeps of a match it played comes from the :class:`Match`
the engine advanced, at its end: the record, the compact blob the ledger stores
(its plays' indexes as the match kept them, not found again by replaying the
record), the move times, and the luck estimate (from the live match, not from a
re-verified record). A record that arrives from elsewhere (a file, a forfeit
nobody played) is another matter: :func:`encode` and :func:`luck_of_record`
replay it, as they must.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .compact import encode_match
from .errors import LuckError
from .luck import NORMAL_ENDS, luck_of_match
from .match import Match
from .record import dumps, match_record
from .record_schema import GameRecord


@dataclass(frozen=True)
class FinishedMatch:
    """One finished match: its ``record`` and that record's ``text`` (:func:`dumps`), its compact ``blob``
    (move times included) and ``times_ms``, each play's move time (None: not kept), with the live ``match``
    they were made from."""

    match: Match
    record: GameRecord
    text: str
    blob: bytes
    times_ms: tuple[int, ...] | None

    def luck(self, sampling_seed: str | None = None) -> tuple[float, ...] | None:
        """Each team's luck margin (:func:`~engine_service.rules.luck_of_match`, samples seeded by
        ``sampling_seed``); None for a match that ended by a forfeit or abort, which has none."""
        result = self.match.result
        if result is None or result.reason not in NORMAL_ENDS:
            return None
        try:
            return luck_of_match(self.match, str(self.record["id"]), sampling_seed=sampling_seed).luck
        except LuckError:
            return None


def finish(match: Match, players: Sequence[str], record_id: str, times_ms: Sequence[int] | None) -> FinishedMatch:
    """The finished value of ``match`` (over), ``players`` its seats' labels; ``times_ms``: one per play."""
    record = match_record(match, players, record_id)
    times = tuple(times_ms) if times_ms is not None else None
    if times is not None and len(times) != sum(len(d["plays"]) for d in record["deals"]):
        times = None  # never from a driver, which times every play it applies
    text = dumps(record)
    return FinishedMatch(match, record, text, encode_match(match, record, times, text), times)
