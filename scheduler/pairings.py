"""Tournament planning: a pure iterator of match specifications with stable ids.

Nothing here runs a match or touches Redis. A plan is a list of
:class:`PlannedMatch` whose ids depend only on the tournament's parameters, so a
restarted scheduler recomputes the same plan and resumes from the matches it
already finished.

- **round-robin** (single or double): Berger tables; every pairing plays
  ``games`` games with seats alternating, and a double round-robin repeats the
  cycle with seats swapped.
- **gauntlet**: one bot against each of the others.
- **tables of 3 or 4**: every combination of bots plays once per seat rotation;
  with partnerships, each split of four bots into two teams plays.
- **mirrored deals**: the games of a pairing come in pairs (or rotations) that
  share one deal seed with seats swapped, so luck cancels out; such games name
  their shared deal (:attr:`PlannedMatch.deal`), so that none of them is shown
  before all of them are played (:mod:`store.embargo`).

Deal seeds come from a :class:`~store.deal_seeds.DealSeeds`: a league's secret,
or a public text (a plain string given as ``seed`` is one).

>>> plan = plan_round_robin(["a", "b", "c", "d"], games=2, seed="s")
>>> len(plan), [m.match_id for m in plan[:4]]  # which game of a deal comes first varies (see _first_sight_varied)
(12, ['r1/p1/g2', 'r1/p1/g1', 'r1/p2/g1', 'r1/p2/g2'])
>>> plan[1].match_id, plan[1].seats, plan[0].seats, plan[0].seed == plan[1].seed, plan[0].deal
('r1/p1/g1', ('a', 'd'), ('d', 'a'), True, 'r1/p1/d1')
>>> plan_round_robin(["a", "b"], games=2, seed="s", mirrored=False)[1].deal
''
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from store.deal_seeds import DealSeeds

BYE = None


@dataclass(frozen=True)
class PlannedMatch:
    """One match to play: a stable id, the bot in each seat, the deal seed, and the deal it shares with other
    games of the plan (its place, e.g. ``r1/p1/d1``; empty: a deal of its own)."""

    match_id: str
    round: int
    seats: tuple[str, ...]
    seed: str
    deal: str = ""


def berger_rounds(bots: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Round-robin rounds by the circle method of Berger tables (a bye for an odd count).

    The last player stays put and alternates colours; the others turn round it.

    >>> [[f"{a}-{b}" for a, b in r] for r in berger_rounds(["a", "b", "c", "d"])]
    [['a-d', 'b-c'], ['d-b', 'c-a'], ['c-d', 'a-b']]
    """
    if len(set(bots)) != len(bots):
        raise ValueError("each bot may appear only once in a tournament")
    players: list[str | None] = [*bots, BYE] if len(bots) % 2 else list(bots)
    n = len(players)
    fixed, ring = players[-1], players[:-1]
    rounds: list[list[tuple[str, str]]] = []
    for r in range(n - 1):
        turned = ring[r:] + ring[:r]
        pairs = [(turned[0], fixed) if r % 2 == 0 else (fixed, turned[0])]
        pairs += [(turned[i], turned[n - 1 - i]) for i in range(1, n // 2)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
    return rounds


Seed = str | DealSeeds
"""Where deal seeds come from: a league's :class:`DealSeeds`, or a public text."""


def _pairing_games(
    pair: tuple[str, str], games: int, mirrored: bool, seed: Seed, ident: str, rnd: int
) -> list[PlannedMatch]:
    a, b = pair
    seeds = DealSeeds.of(seed)
    out = []
    for g in range(games):
        seats = (a, b) if g % 2 == 0 else (b, a)
        deal_seed = seeds.deal(ident, g // 2 if mirrored else g)
        shared = f"{ident}/d{g // 2 + 1}" if mirrored and games > 1 else ""
        out.append(PlannedMatch(f"{ident}/g{g + 1}", rnd, seats, deal_seed, shared))
    if mirrored:
        out = _first_sight_varied(out)
    return out


def _first_sight_varied(games: list[PlannedMatch]) -> list[PlannedMatch]:
    """The two games of each mirrored deal in an order that follows from its seed: which seat sees a deal first
    then varies from deal to deal, so the second-sight check (:mod:`scheduler.second_sight`) can tell a bot that
    remembers a deal from the edge of a seat (with ``a`` always first, a two-bot league could not)."""
    out = []
    for k in range(0, len(games), 2):
        pair = games[k : k + 2]
        if len(pair) == 2 and int(pair[0].seed[-1], 16) % 2:
            pair.reverse()
        out += pair
    return out


def pair_of_games(a: str, b: str, seed: Seed, ident: str, rnd: int, mirrored: bool = True) -> list[PlannedMatch]:
    """Two games between ``a`` and ``b``, seats swapped, ``<ident>/g1`` and ``<ident>/g2``: on one deal
    (``mirrored``) or on a deal each.

    >>> sorted((m.match_id, m.seats, m.deal) for m in pair_of_games("a", "b", "s", "x1", 9))
    [('x1/g1', ('a', 'b'), 'x1/d1'), ('x1/g2', ('b', 'a'), 'x1/d1')]
    """
    return _pairing_games((a, b), 2, mirrored, seed, ident, rnd)


def plan_round_robin(
    bots: Sequence[str], games: int = 2, seed: Seed = "league", double: bool = False, mirrored: bool = True
) -> list[PlannedMatch]:
    """Every pair plays ``games`` games (seats alternate); ``double`` repeats with seats swapped."""
    if len(bots) < 2:
        raise ValueError("a round-robin needs at least two bots")
    if games < 1:
        raise ValueError("each pairing plays at least one game")
    plan: list[PlannedMatch] = []
    rounds = berger_rounds(bots)
    cycles = 2 if double else 1
    for cycle in range(cycles):
        for r, pairs in enumerate(rounds):
            rnd = cycle * len(rounds) + r + 1
            for p, (a, b) in enumerate(pairs):
                pair = (a, b) if cycle == 0 else (b, a)
                plan.extend(_pairing_games(pair, games, mirrored, seed, f"r{rnd}/p{p + 1}", rnd))
    return plan


def plan_gauntlet(
    champion: str, field: Sequence[str], games: int = 2, seed: Seed = "gauntlet", mirrored: bool = True
) -> list[PlannedMatch]:
    """``champion`` plays ``games`` games against each bot of ``field``."""
    opponents = [b for b in field if b != champion]
    if not opponents:
        raise ValueError("a gauntlet needs at least one opponent")
    plan: list[PlannedMatch] = []
    for i, other in enumerate(opponents):
        plan.extend(_pairing_games((champion, other), games, mirrored, seed, f"r{i + 1}/p1", i + 1))
    return plan


def plan_tables(
    bots: Sequence[str], table_size: int, partnerships: bool = False, seed: Seed = "league", mirrored: bool = True
) -> list[PlannedMatch]:
    """Multi-player round-robin: every ``table_size`` combination plays every seat rotation.

    With ``partnerships`` (4 seats), every split of the four into two teams plays,
    each team once on seats 0+2 and once on 1+3.
    """
    if table_size not in (3, 4):
        raise ValueError("tables have 3 or 4 seats")
    if partnerships and table_size != 4:
        raise ValueError("partnerships need tables of 4")
    if len(bots) < table_size:
        raise ValueError(f"{table_size}-seat tables need at least {table_size} bots")
    if len(set(bots)) != len(bots):
        raise ValueError("each bot may appear only once in a tournament")
    seeds = DealSeeds.of(seed)
    plan: list[PlannedMatch] = []
    for t, group in enumerate(combinations(bots, table_size), 1):
        ident = f"r{t}/t1"
        if partnerships:
            a, b, c, d = group
            layouts = [(a, c, b, d), (c, a, d, b), (a, b, c, d), (b, a, d, c), (a, b, d, c), (b, a, c, d)]
            # Seat order (s0, s1, s2, s3) puts s0+s2 against s1+s3.
            for g, seats in enumerate(layouts):
                s = seeds.deal(ident, g // 2 if mirrored else g)
                shared = f"{ident}/d{g // 2 + 1}" if mirrored else ""
                plan.append(PlannedMatch(f"{ident}/g{g + 1}", t, seats, s, shared))
        else:
            for g in range(table_size):
                rotated = tuple(group[(i + g) % table_size] for i in range(table_size))
                s = seeds.deal(ident) if mirrored else seeds.deal(ident, g)
                plan.append(PlannedMatch(f"{ident}/g{g + 1}", t, rotated, s, f"{ident}/d1" if mirrored else ""))
    return plan
