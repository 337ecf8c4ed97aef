"""Whether a league's games may share deals: only where no bot can carry a deal from one game to the next.

Mirrored deals (one deal played in every seat rotation) take the cards' luck out
of a pairing, but a bot that remembers the first game of a deal knows, in the
second, every card its opponent holds: the deal is the same, only the seats
moved. The arena can see to it that a bot remembers nothing only for the
programs it runs itself, afresh each game:

- a hosted JSON-lines version (``bot@N``, ``protocol = "jsonlines"``): its
  program is started for each game in a sandbox of its own, its folder
  read-only, its writable folders in memory and gone with the game;
- the preflights' reference bots (:data:`REFERENCE_BOTS`): built-in bots the
  hosts run, a new bot object each game.

Every other bot may remember: a connected bot is a program of its author's,
anywhere; a hosted gRPC version is one long-running process that plays all its
games. A league's ``deals = auto`` is therefore mirrored only when none of its
bots may remember (:func:`decide`); an operator may force mirrored deals anyway,
and the league then says which bots could exploit it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .versions import Versions, split_version

REFERENCE_BOTS = {"preflight-greedy": "greedy", "preflight-random": "random"}
"""The preflights' reference bots: their names in the arena -> the built-in bot each is (the hosts run them)."""
CONNECTED = "a connected bot: the arena cannot see what it keeps from one game to the next"
GRPC_VERSION = "a hosted gRPC program: one process plays all its games"


def who_may_remember(versions: Versions, bots: Sequence[str]) -> dict[str, str]:
    """Each of ``bots`` that could carry a deal from one game to another, with why."""
    out: dict[str, str] = {}
    for bot in bots:
        if bot in REFERENCE_BOTS:
            continue
        if split_version(bot) is None:
            out[bot] = CONNECTED
            continue
        version = versions.get(bot)
        protocol = version.manifest.get("protocol", "jsonlines") if version is not None else "grpc"
        if protocol != "jsonlines":
            out[bot] = GRPC_VERSION
    return out


def decide(deals: str, remembering: dict[str, str]) -> str:
    """How a league with setting ``deals`` deals, given who may remember: ``mirrored`` or ``independent``.

    >>> decide("auto", {}), decide("auto", {"x": CONNECTED}), decide("mirrored", {"x": CONNECTED})
    ('mirrored', 'independent', 'mirrored')
    """
    if deals == "auto":
        return "independent" if remembering else "mirrored"
    return deals


def warning(dealt: str, remembering: dict[str, str]) -> str:
    """What an operator must know of a league that deals ``dealt`` (empty: nothing).

    >>> warning("mirrored", {"x": CONNECTED})[:59]
    'mirrored deals with bots that may remember a deal between g'
    """
    if dealt != "mirrored" or not remembering:
        return ""
    names = ", ".join(sorted(remembering))
    return (
        f"mirrored deals with bots that may remember a deal between games ({names}): such a bot can know its "
        "opponents' cards in the second game of a deal; watch the second-sight check in `league status`"
    )
