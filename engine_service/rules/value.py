"""The value of a deal position: the deal points each team can expect from it.

The luck estimator (:mod:`engine_service.rules.luck`) asks this after every
chance event. The value is a heuristic, and any heuristic keeps the estimator
unbiased; a better one only removes more of the luck. This one is:

1. the points each team has banked this deal (card points and sweep bonuses);
2. plus what the *reference policy* banks by playing out the cards now in the
   hands (the current round, every hand known: no sampling, so no noise);
3. plus, for the rounds not dealt yet, an even share of the point cards still
   out (the table and the stock) and each team's chance of the most-cards and
   most-of-a-suit awards from the cards it holds and what is left.

The reference policy is the greedy player: the capture that banks most now
(card points, a credit per card towards most cards, the sweep bonus), or when
nothing is worth taking the trail that gives away least. It lives here, in the
rules engine, and reads only the rules and the position.

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.shuffle import deal_layout
>>> from engine_service.rules.deal import DealState
>>> rules = Rules.preset("tablic")
>>> [round(v, 2) for v in position_value(DealState(rules, deal_layout(rules, "demo", 0)))]
[4.58, 9.42]
"""

from __future__ import annotations

import math

from .cards import FULL_DECK, JACK, format_cards, iter_mask
from .deal import DealState, sweep_bonus
from .errors import IllegalPositionError
from .rules import Rules
from .shuffle import round_sizes


class ValueTables:
    """Per-rules lookup tables: card values by byte of a mask, trail costs, suit masks."""

    __slots__ = ("card_weight", "chunks", "options", "points", "trail_cost")

    def __init__(self, rules: Rules) -> None:
        self.options: dict[tuple[int, int], list[int]] = {}
        """A card's capture options (:func:`capture_options`) by (table, card), remembered across play-outs
        (cleared when large)."""
        self.card_weight = rules.most_cards / (52 / rules.team_count / 2 + 1)
        points = rules._card_points_table
        weights = [points[c] + self.card_weight for c in range(52)]
        self.points = _chunk_tables([float(p) for p in points])
        self.chunks = _chunk_tables(weights)
        sweeping = rules.jack_sweeps
        self.trail_cost = tuple(
            points[c] + 0.1 * ((c >> 2) + 1) / 13 + (2.0 if sweeping and c >> 2 == JACK else 0.0) for c in range(52)
        )


def _chunk_tables(weights: list[float]) -> tuple[tuple[float, ...], ...]:
    """For each byte k of a mask, the summed weights of every 8-bit pattern of cards 8k..8k+7."""
    out = []
    for k in range(7):
        cards = [weights[8 * k + i] if 8 * k + i < 52 else 0.0 for i in range(8)]
        out.append(tuple(sum(cards[i] for i in range(8) if b >> i & 1) for b in range(256)))
    return tuple(out)


def mask_sum(chunks: tuple[tuple[float, ...], ...], mask: int) -> float:
    """The summed weights of the cards of ``mask`` (a table from :func:`_chunk_tables`)."""
    total = 0.0
    k = 0
    while mask:
        total += chunks[k][mask & 0xFF]
        mask >>= 8
        k += 1
    return total


_TABLES: dict[Rules, ValueTables] = {}


def tables_for(rules: Rules) -> ValueTables:
    """The shared (cached) tables of a rule set."""
    tables = _TABLES.get(rules)
    if tables is None:
        if len(_TABLES) > 64:
            _TABLES.clear()
        tables = _TABLES[rules] = ValueTables(rules)
    return tables


def capture_options(state: DealState, card: int, tables: ValueTables) -> list[int]:
    """The masks ``card`` may take from ``state``'s table, 0 meaning a trail: a sweeping Jack takes the whole
    table; a card that captures must (but for optional captures); one that cannot trails. Remembered in
    ``tables`` across play-outs (a rollout's hot path: the list is shared, never change it)."""
    table = state.table
    rules = state.rules
    if rules.jack_sweeps and card >> 2 == JACK:
        return [table]
    key = (table, card)
    found = tables.options.get(key)
    if found is None:
        memo = tables.options
        if len(memo) > 100_000:
            memo.clear()
        masks = state.finder.capture_masks(table, card)
        found = memo[key] = [0, *masks] if masks and rules.capture_optional else masks or [0]
    return found


def greedy_play(state: DealState, tables: ValueTables | None = None) -> tuple[int, int]:
    """The reference policy's play in ``state``: (card, captured mask), the first best in canonical order."""
    rules, table = state.rules, state.table
    if tables is None:
        tables = tables_for(rules)
    chunks, trail_cost = tables.chunks, tables.trail_cost
    sweep_ok = rules.last_play_tabla or not state.is_last_play
    best_card, best_mask, best = -1, 0, -math.inf
    for card in iter_mask(state.hands[state.turn]):
        for mask in capture_options(state, card, tables):
            if mask:
                v = mask_sum(chunks, mask | 1 << card)
                if mask == table and sweep_ok:
                    v += sweep_bonus(rules, card, table)
            else:
                v = -trail_cost[card]
            if v > best:
                best_card, best_mask, best = card, mask, v
    return best_card, best_mask


def position_value(state: DealState) -> tuple[float, ...]:
    """Expected deal points per team from ``state`` (see the module doc); checks the position first.

    Raises :class:`IllegalPositionError` for a position no legal deal reaches.
    """
    check_position(state)
    return tuple(value_unchecked(state))


def value_unchecked(state: DealState) -> list[float]:
    """:func:`position_value` without the check (the estimator's hot path; it builds legal positions)."""
    played = state.copy()
    start = played.round
    tables = tables_for(state.rules)
    while not played.over and played.round == start:
        card, mask = greedy_play(played, tables)
        played.push(card, mask)
    if played.over:
        return [float(x) for x in played.score()]
    return rest_of_deal(played)


def rest_of_deal(state: DealState) -> list[float]:
    """Expected deal points per team at a round's end (no hand holds a card): banked points, plus an even
    share of the points the undealt rounds and the table hold, plus each team's chance of each award."""
    rules = state.rules
    tables = tables_for(rules)
    teams = rules.team_count
    taken = 0
    for pile in state.piles:
        taken |= pile
    rest = FULL_DECK & ~taken  # the table and every card not dealt yet
    share = mask_sum(tables.points, rest) / teams
    piles = zip(state.piles, state.bonus, strict=True)
    value = [mask_sum(tables.points, pile) + bonus + share for pile, bonus in piles]
    left = rest.bit_count()
    if rules.most_cards:
        _add_award(value, [p.bit_count() for p in state.piles], left, rules.most_cards)
    for suit, pts in rules.most_suit:
        suit_mask = _SUIT_MASKS[suit]
        counts = [(p & suit_mask).bit_count() for p in state.piles]
        _add_award(value, counts, (rest & suit_mask).bit_count(), pts)
    return value


def _add_award(value: list[float], counts: list[int], left: int, points: int) -> None:
    """Add each team's chance of holding the most cards at the end (``left`` still to share) times ``points``.

    Each team is expected to take an even share of what is left; the spread of the
    final difference between two teams is that of a multinomial split (normal approximation).
    """
    teams = len(counts)
    spread = math.sqrt(2 * left * (1 / teams) * (1 - 1 / teams) + 0.25)
    for t, mine in enumerate(counts):
        chance = 1.0
        for u, theirs in enumerate(counts):
            if u != t:
                chance *= 0.5 * (1 + math.erf((mine - theirs) / (spread * math.sqrt(2))))
        value[t] += points * chance


_SUIT_MASKS = tuple(sum(1 << (r * 4 + s) for r in range(13)) for s in range(4))


def check_position(state: DealState) -> None:
    """Raise :class:`IllegalPositionError` unless ``state`` is a position a legal deal can reach."""
    rules = state.rules
    n, teams = rules.players, rules.team_count
    if len(state.hands) != n or len(state.piles) != teams or len(state.bonus) != teams:
        raise IllegalPositionError(f"{len(state.hands)} hands and {len(state.piles)} piles for {n} seats")
    if not 0 <= state.turn < n:
        raise IllegalPositionError(f"seat {state.turn} is to play, but the seats are 0..{n - 1}")
    sizes = round_sizes(rules)
    if not 0 <= state.round < len(sizes):
        raise IllegalPositionError(f"round {state.round}, but a deal has {len(sizes)} rounds")
    seen = 0
    for part in [*state.hands, state.table, *state.piles]:
        if part & ~FULL_DECK or part & seen:
            raise IllegalPositionError(f"cards {format_cards(part & (seen | ~FULL_DECK) & FULL_DECK)} appear twice")
        seen |= part
    counts = [h.bit_count() for h in state.hands]
    if max(counts) - min(counts) > 1 or max(counts) > sizes[state.round]:
        raise IllegalPositionError(f"hands of {counts} cards cannot happen in a round of {sizes[state.round]}")
    if not state.over and not counts[state.turn]:
        raise IllegalPositionError(f"seat {state.turn} is to play with an empty hand")
    undealt = sum(sizes[state.round + 1 :]) * n
    if (FULL_DECK & ~seen).bit_count() != undealt:
        missing = (FULL_DECK & ~seen).bit_count()
        raise IllegalPositionError(f"{missing} cards are unaccounted for, but {undealt} are still to be dealt")
