"""In-process self-play: many matches between built-in bots, no services.

Seats rotate between games on mirrored deals (the games of a rotation share
one deal seed), so every bot gets every seat on the same cards and luck
cancels out; see :func:`seating`.

>>> from engine_service.rules import Rules
>>> stats = run_selfplay(Rules.preset("tablic"), ["greedy", "random"], games=4, seed="doc")
>>> [s.games for s in stats.bots], sum(s.wins for s in stats.bots) + stats.draws
([4, 4], 4)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from bots import make_bot, play_match
from engine_service.rules import GameRecord, Match, Rules, match_record


@dataclass
class BotStats:
    """One bot entry's results across the self-play run."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: int = 0
    tablas: int = 0

    @property
    def points_per_game(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def tablas_per_game(self) -> float:
        return self.tablas / self.games if self.games else 0.0


@dataclass
class SelfPlayStats:
    bots: list[BotStats]
    games: int = 0
    deals: int = 0
    draws: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def deals_per_second(self) -> float:
        return self.deals / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "deals": self.deals,
            "seconds": round(self.seconds, 3),
            "deals_per_second": round(self.deals_per_second, 1),
            "bots": [
                {
                    "name": b.name,
                    "games": b.games,
                    "wins": b.wins,
                    "draws": b.draws,
                    "losses": b.losses,
                    "points_per_game": round(b.points_per_game, 2),
                    "tablas_per_game": round(b.tablas_per_game, 2),
                }
                for b in self.bots
            ],
        }


def seating(entries: int, players: int, game: int) -> tuple[list[int], int]:
    """Which bot entry sits in each seat for game number ``game``, and its deal number.

    Two seats and more than two entries: the pairs take turns, each pair playing
    two games on the same deal with seats swapped. Otherwise the entries rotate
    through the seats, a whole rotation on one deal.

    >>> [seating(3, 2, g) for g in range(4)]
    [([0, 1], 0), ([1, 0], 0), ([0, 2], 1), ([2, 0], 1)]
    >>> [seating(2, 2, g) for g in range(3)]
    [([0, 1], 0), ([1, 0], 0), ([0, 1], 1)]
    """
    if players == 2 and entries > 2:
        pairs = list(combinations(range(entries), 2))
        a, b = pairs[(game // 2) % len(pairs)]
        return ([a, b] if game % 2 == 0 else [b, a]), game // 2
    return [(s + game) % entries for s in range(players)], game // entries


def iter_games(rules: Rules, bots: list[str], games: int, seed: str) -> Iterator[tuple[int, list[int], Match]]:
    """Play the games one by one: (game number, seating, finished match)."""
    if not bots:
        raise ValueError("name at least one bot")
    for g in range(games):
        seats, deal = seating(len(bots), rules.players, g)
        players = [make_bot(bots[e], f"{seed}/{g}/{s}") for s, e in enumerate(seats)]
        yield g, seats, play_match(rules, f"{seed}/{deal}", players)


def run_selfplay(
    rules: Rules,
    bots: list[str],
    games: int,
    seed: str = "selfplay",
    on_record: Callable[[GameRecord], None] | None = None,
    on_game: Callable[[int], None] | None = None,
) -> SelfPlayStats:
    """Play ``games`` matches and tally them per bot entry (an entry may repeat a name)."""
    labels = labels_of(bots)
    stats = SelfPlayStats([BotStats(label) for label in labels])
    start = time.perf_counter()
    for g, seats, match in iter_games(rules, bots, games, seed):
        tally(stats, rules, seats, match)
        if on_record is not None:
            names = [labels[e] for e in seats]
            on_record(match_record(match, names, f"selfplay/{seed}/game-{g}"))
        if on_game is not None:
            on_game(g)
    stats.seconds = time.perf_counter() - start
    return stats


def labels_of(bots: list[str]) -> list[str]:
    """Each entry's label: its name, numbered (``greedy#2``) when a name is entered more than once."""
    seen: dict[str, int] = {}
    out = []
    for name in bots:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if bots.count(name) == 1 else f"{name}#{seen[name]}")
    return out


def tally(stats: SelfPlayStats, rules: Rules, seats: list[int], match: Match) -> None:
    """Add a finished match to ``stats`` (``seats``: the entry at each seat)."""
    assert match.result is not None
    stats.games += 1
    stats.deals += len(match.deals)
    winner = match.result.winner
    if winner is None:
        stats.draws += 1
    for e, bot in enumerate(stats.bots):
        teams = sorted({rules.team_of(s) for s, entry in enumerate(seats) if entry == e})
        if not teams:
            continue
        bot.games += 1
        bot.points += sum(match.totals[t] for t in teams) // len(teams)
        bot.tablas += sum(d.tablas[t] for d in match.deals for t in teams) // len(teams)
        if winner is None:
            bot.draws += 1
        elif winner in teams:
            bot.wins += 1
        else:
            bot.losses += 1
