"""Built-in bots by name: the reference strength ladder random < greedy < strong."""

from __future__ import annotations

from collections.abc import Callable

from .base import Bot
from .greedy import GreedyBot
from .random_bot import RandomBot
from .strong import StrongBot

BUILTIN_BOTS: dict[str, Callable[[int | str | None], Bot]] = {
    "random": lambda seed: RandomBot(seed),
    "greedy": lambda seed: GreedyBot(),
    "strong": lambda seed: StrongBot(seed),
}


def make_bot(name: str, seed: int | str | None = None) -> Bot:
    """A fresh built-in bot; ``seed`` makes randomised bots reproducible."""
    try:
        factory = BUILTIN_BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; built-in bots: {', '.join(BUILTIN_BOTS)}") from None
    return factory(seed)
