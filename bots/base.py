"""The bot interface: one class, one method.

``choose`` receives the seat's :class:`~engine_service.rules.Observation` (with
its ``legal_plays`` filled in) and returns one of those plays. The same class runs
in-process (self-play, tests) and over gRPC through the SDK. Two optional hooks
bracket a match: ``new_match`` before its first turn, ``end_match`` with its result.
A bot that stands for another program raises :class:`BotFault` when that program's
answer cannot be played.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.rules import Match, Observation, Play, Rules


class BotFault(RuntimeError):
    """A bot's answer cannot be played, for a reason the arena can name (a program that crashed, said nothing
    or wrote nonsense: :class:`programs.bridge.BridgeError`). The turn costs the bot a move (the
    timeout play), not the game. ``reason`` says what went wrong in the arena's own words only (what anyone
    may be shown); the text (``str``) is for a log and may quote the program, and so may ``quoted``: the
    program's own words the error is about (the answer it wrote, its last error lines), raw, for its owner to
    see once made printable (:mod:`store.printable`)."""

    def __init__(self, message: str, reason: str | None = None, quoted: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason
        self.quoted = list(quoted)


class Bot:
    """Subclass and implement :meth:`choose`. ``name`` and ``version`` identify it."""

    name: str = "bot"
    version: str = ""

    def choose(self, observation: Observation) -> Play:
        """Return one of ``observation.legal_plays``."""
        raise NotImplementedError

    def new_match(self, rules: Rules, seat: int) -> None:
        """Called before a match starts; override to reset per-match state."""

    def end_match(self, result: Mapping[str, Any]) -> None:
        """Called when a match is over, with ``winner`` (a team; None for a draw, as records have it), ``reason``
        and ``score``
        (match totals per team). Over gRPC only when the arena says so: a match the bot forfeited while
        it was away may end without it."""

    @property
    def label(self) -> str:
        """``name@version`` (or just the name), as records list players."""
        return f"{self.name}@{self.version}" if self.version else self.name


def play_match(rules: Rules, seed: str, bots: Sequence[Bot]) -> Match:
    """Play one match in-process between ``bots`` (one per seat); checked plays."""
    if len(bots) != rules.players:
        raise ValueError(f"{len(bots)} bots for {rules.players} seats")
    for seat, bot in enumerate(bots):
        bot.new_match(rules, seat)
    match = Match(rules, seed)
    while not match.is_over:
        seat = match.turn
        match.play(bots[seat].choose(match.observation(seat)))
    for bot in bots:
        bot.end_match(result_of(match))
    return match


def result_of(match: Match) -> dict[str, Any]:
    """A finished match's result as ``end_match`` gets it: ``winner`` (None for a draw), ``reason``, ``score``."""
    assert match.result is not None, "the match is not over"
    return {"winner": match.result.winner, "reason": match.result.reason, "score": list(match.totals)}
