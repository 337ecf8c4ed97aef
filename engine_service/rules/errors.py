"""The error hierarchy of the rules engine.

Every error is a :class:`ValueError`, so callers that only care about "bad
input" can catch one type; the subclasses let a servicer map each kind to its
own status and message. Messages always name the offending input, and where it
applies the position it was checked against.
"""

from __future__ import annotations


class TablanetteError(ValueError):
    """Base class of every error the rules engine raises on bad input."""


class InvalidCardError(TablanetteError):
    """A card or play string that is not in canonical or accepted notation."""


class InvalidRulesError(TablanetteError):
    """A rules parameter, preset name or override that is unknown or out of range."""


class IllegalPlayError(TablanetteError):
    """A play that is not legal in the current position."""


class GameOverError(TablanetteError):
    """An action on a match (or deal) that has already ended."""


class RecordError(TablanetteError):
    """A game record that is malformed or does not re-verify."""


class CompactRecordError(RecordError):
    """A compact record that cannot be decoded (or a record that cannot be encoded), with what and where
    (:mod:`engine_service.rules.compact`)."""


class TooManyPlaysError(TablanetteError):
    """A position with more capture sets than a caller's limit allows (only with an explicit limit)."""


class IllegalPositionError(TablanetteError):
    """A deal position that no legal deal can reach (cards twice, missing, or hands of impossible sizes)."""


class LuckError(RecordError):
    """A record the luck estimator does not rate: a forfeit or abort, or one that does not re-verify."""
