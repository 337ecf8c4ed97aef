"""Built-in bots by name, with parameters: the reference strength ladder random < greedy < strong < expert.

A bot is named by a *spec*: its kind, optionally followed by parameters, each
after a colon: ``greedy:eps=0.05`` (greedy, but a random legal play 5% of the
time) or ``strong:samples=1:eps=0.1`` (one determinization instead of eight). Parameters give
bots of known, close strength, so the arena can test its ladder on close pairs
and not only on bots 500 Elo apart. ``selfplay``, ``bot run`` and
``python -m bots`` all take specs.

>>> make_bot("greedy:eps=0.25", seed=1).version
'1:eps=0.25'
>>> make_bot("strong:samples=x")
Traceback (most recent call last):
...
ValueError: bot spec 'strong:samples=x': samples must be an integer, got 'x'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Bot
from .expert import ExpertBot
from .greedy import GreedyBot
from .random_bot import RandomBot
from .strong import StrongBot

BUILTIN_BOTS: dict[str, Callable[..., Bot]] = {
    "random": lambda seed: RandomBot(seed),
    "greedy": lambda seed, **kw: GreedyBot(seed, **kw),
    "strong": lambda seed, **kw: StrongBot(seed, **kw),
    "expert": lambda seed, **kw: ExpertBot(seed, **kw),
}
PARAMETERS: dict[str, dict[str, type]] = {
    "random": {},
    "greedy": {"eps": float},
    "strong": {"samples": int, "follow_up": float, "eps": float},
    "expert": {"ms": int, "worlds": int, "share": float, "risk": float, "eps": float},
}
"""Each kind's parameters and their types."""


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"greedy:eps=0.05"`` -> ``("greedy", {"eps": 0.05})``, or a ValueError that says what is wrong."""
    kind, _, rest = spec.partition(":")
    if kind not in BUILTIN_BOTS:
        raise ValueError(f"unknown bot {kind!r}; built-in bots: {', '.join(BUILTIN_BOTS)}")
    params: dict[str, Any] = {}
    for item in filter(None, rest.split(":")):
        name, eq, value = item.partition("=")
        kinds = PARAMETERS[kind]
        if not eq or name not in kinds:
            known = ", ".join(kinds) or "none"
            raise ValueError(f"bot spec {spec!r}: {kind} takes name=value parameters ({known}), not {item!r}")
        try:
            params[name] = kinds[name](value)
        except ValueError:
            article = "an integer" if kinds[name] is int else "a number"
            raise ValueError(f"bot spec {spec!r}: {name} must be {article}, got {value!r}") from None
    return kind, params


def make_bot(spec: str, seed: int | str | None = None) -> Bot:
    """A fresh built-in bot from its spec; ``seed`` makes randomised bots reproducible."""
    kind, params = parse_spec(spec)
    bot = BUILTIN_BOTS[kind](seed, **params)
    if params:
        bot.version = f"{bot.version}:" + ":".join(f"{k}={v}" for k, v in sorted(params.items()))
    return bot
