"""A finished match as the rating model keys it: its mirrored group, and how its teams placed.

Pure functions of a match's seed, seats and totals, shared by the ledger (which
stores them with every outcome) and by whatever plays matches without a store
(:mod:`scheduler.local_games`, :mod:`scheduler.offline`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence


def mirror_unit(seed: str, bots: Sequence[str]) -> str:
    """The mirrored group a match belongs to: its deal seed and its bots (mirrored games share both),
    as 12 characters (72 bits of a BLAKE2b digest: only equality matters, and every outcome keeps one).

    >>> mirror_unit("spring/r1/p2", ["b", "a"]) == mirror_unit("spring/r1/p2", ["a", "b"])
    True
    >>> mirror_unit("spring/r1/p2", ["a", "b"]) != mirror_unit("spring/r1/p3", ["a", "b"])
    True
    """
    digest = hashlib.blake2b(f"{seed}|{'+'.join(sorted(set(bots)))}".encode(), digest_size=9).digest()
    return base64.urlsafe_b64encode(digest).decode()


def placing(totals: Sequence[int], winner: int | None, forfeit_team: int | None) -> list[float]:
    """A per-team value where higher means placed better (for pairwise Elo).

    The winner beats everyone, a forfeiting team loses to everyone, the rest are
    ordered by points; equal values are draws.

    >>> placing([40, 101, 70], winner=1, forfeit_team=None)
    [40.0, 1000000000.0, 70.0]
    """
    out = [float(t) for t in totals]
    if winner is not None:
        out[winner] = 1e9
    if forfeit_team is not None:
        out[forfeit_team] = -1e9
    return out
