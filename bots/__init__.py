"""Tablanette bots: the one-method base class, the built-in bots, and (over gRPC) the SDK.

A bot author subclasses :class:`Bot` and implements :meth:`Bot.choose`::

    >>> from bots import Bot, play_match
    >>> from engine_service.rules import Rules
    >>> class FirstPlay(Bot):
    ...     name = "first"
    ...     def choose(self, observation):
    ...         return observation.legal_plays[0]
    >>> play_match(Rules.preset("tablic"), "doc", [FirstPlay(), FirstPlay()]).result.reason
    'target'
"""

from .base import Bot, play_match
from .registry import BUILTIN_BOTS, make_bot

__all__ = ["BUILTIN_BOTS", "Bot", "make_bot", "play_match"]
