"""Immediate value of a play: the heuristic the greedy and strong bots share.

The value is the points the play banks at once (card points of everything it
captures, the played card included, and any tabla or pişti bonus) plus a small
credit per captured card towards the "most cards" award.
"""

from __future__ import annotations

from engine_service.rules import Play, Rules, sweep_bonus


def card_weight(rules: Rules) -> float:
    """What one captured card is worth towards ``most_cards`` (about 1/27 of it)."""
    per_side = 52 / max(rules.team_count, 1)
    return rules.most_cards / (per_side / 2 + 1)


def immediate_value(rules: Rules, table: int, play: Play, last_play: bool = False) -> float:
    """Points ``play`` banks on ``table`` (0 for a trail), plus card-count credit."""
    mask = play.mask
    if not mask:
        return 0.0
    taken = mask | 1 << play.card
    points_table = rules._card_points_table
    value = 0.0
    m = taken
    while m:
        low = m & -m
        value += points_table[low.bit_length() - 1]
        m ^= low
    value += card_weight(rules) * taken.bit_count()
    if mask == table and (not last_play or rules.last_play_tabla):
        value += sweep_bonus(rules, play.card, table)
    return value


def trail_cost(rules: Rules, play: Play) -> float:
    """How much a trailed card gives away: its own points, and more for a Jack."""
    cost = rules.points_of(play.card) + 0.1 * ((play.card >> 2) + 1) / 13
    if play.card >> 2 == 10 and rules.jack_sweeps:
        cost += 2.0
    return cost
