"""Shared helpers for the rules-engine tests: hand-built positions, scripted deals, policies.

Everything here is plain Python built on the public engine API, so a reader can
check each helper against docs/rules.md without knowing the engine's internals.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from engine_service.rules import (
    FULL_DECK,
    PRESETS,
    Card,
    DealLayout,
    DealState,
    Match,
    Play,
    Rules,
    card_names,
    format_cards,
    iter_mask,
    mask_of,
    parse_cards,
    round_sizes,
)

# Every (preset, player count) the presets allow, as docs/rules.md lists them.
PRESET_PLAYERS: list[tuple[str, int]] = [(name, n) for name, spec in PRESETS.items() for n in spec.players]
ALLOWED_PLAYERS: dict[str, tuple[int, ...]] = {
    "tablic": (2, 3, 4),
    "tablanette-1939": (2, 3),
    "tablic-pagat": (2, 4),
    "tablanette-ro": (2, 3, 4),
    "pisti": (2, 3, 4),
}


def m(text: str) -> int:
    """The mask of some cards written as text, e.g. ``m("AH 3S")``."""
    return mask_of(parse_cards(text))


def names(mask: int) -> str:
    """Canonical text of a mask, e.g. ``"AH 3S"``."""
    return format_cards(mask)


def build_layout(
    rules: Rules,
    table: str,
    hands: Mapping[Any, str] | None = None,
    dealer: int | None = None,
) -> DealLayout:
    """A whole, correctly sized deal built from the cards a test cares about.

    ``hands`` maps ``seat`` (round 0) or ``(round, seat)`` to the cards that
    seat must receive; every other slot is filled with the remaining cards in
    ascending order. The dealer defaults to the last seat, so seat 0 plays first.
    The table must hold exactly ``rules.table_size`` cards. The layout is checked
    with :meth:`DealLayout.check` so a test can never run on an impossible deal.
    """
    n = rules.players
    dealer = n - 1 if dealer is None else dealer
    wanted: dict[tuple[int, int], int] = {}
    used = m(table)
    for key, text in (hands or {}).items():
        slot = (0, key) if isinstance(key, int) else tuple(key)
        cards = m(text)
        assert not used & cards, f"{names(used & cards)} placed twice"
        used |= cards
        wanted[slot] = cards  # type: ignore[index]
    fillers = [c for c in iter_mask(FULL_DECK & ~used)]
    rounds = []
    for r, size in enumerate(round_sizes(rules)):
        hands_r = []
        for s in range(n):
            hand = wanted.pop((r, s), 0)
            need = size - hand.bit_count()
            assert need >= 0, f"round {r} seat {s}: {names(hand)} is more than {size} cards"
            for c in fillers[:need]:
                hand |= 1 << c
            del fillers[:need]
            hands_r.append(hand)
        rounds.append(tuple(hands_r))
    assert not wanted, f"no such round/seat: {sorted(wanted)}"
    layout = DealLayout(dealer, m(table), tuple(rounds))
    layout.check(rules)
    return layout


def position(preset: str, table: str, hand: str = "", players: int = 2, **overrides: Any) -> DealState:
    """A fresh deal of ``preset`` whose table is ``table`` and where seat 0 (to play) holds ``hand``.

    ``table_size`` follows the table given, so any even-sized table works for two players.
    """
    count = len(parse_cards(table))
    rules = Rules.preset(preset, players=players, **{"table_size": count, **overrides})
    hands = {0: hand} if hand else {}
    return DealState(rules, build_layout(rules, table, hands))


def plays_of(deal: DealState, card: str) -> list[str]:
    """The legal plays of one card on the deal's table, as canonical strings."""
    return [str(p) for p in deal.plays_for_card(Card.parse(card))]


def stock_mask(deal: DealState) -> int:
    """Cards still to be dealt in later rounds of the deal."""
    out = 0
    for hands in deal.layout.rounds[deal.round + 1 :]:
        for h in hands:
            out |= h
    return out


def snapshot(deal: DealState) -> tuple[Any, ...]:
    """Every observable field of a deal, to check that a refused play changed nothing."""
    return (
        tuple(deal.hands),
        deal.table,
        tuple(deal.piles),
        tuple(deal.bonus),
        tuple(deal.tablas),
        deal.last_capturer,
        deal.turn,
        deal.round,
        tuple(deal.plays),
        deal.leftover_team,
        deal.leftover,
        deal.over,
    )


Policy = Callable[[DealState], Play]


def trail_first(deal: DealState) -> Play:
    """The lowest card's first legal play: a trail whenever the rules allow it."""
    return deal.legal_plays()[0]


def random_policy(rng: random.Random) -> Policy:
    def choose(deal: DealState) -> Play:
        return rng.choice(deal.legal_plays())

    return choose


def run_script(deal: DealState, script: Mapping[int, str], stop: int | None = None) -> DealState:
    """Play a deal: play ``i`` is ``script[i]`` when given, else a filler.

    A scripted ``"JC:*"`` plays that card's widest legal capture (its last
    legal play), for a Jack sweep whose table the test does not spell out. A
    filler is the lowest card of the hand that no later scripted play needs,
    played as its first legal play (the trail when the rules allow one). Stops
    before play ``stop`` (if given) or when the deal is over.
    """
    scripted = {i: Play.parse(text.removesuffix(":*")) for i, text in script.items()}
    i = len(deal.plays)
    while not deal.over and (stop is None or i < stop):
        if i in scripted:
            if script[i].endswith(":*"):
                deal.play(deal.plays_for_card(scripted[i].card)[-1])
            else:
                deal.play(scripted[i])
        else:
            reserved = {p.card for j, p in scripted.items() if j > i}
            card = next(c for c in iter_mask(deal.hands[deal.turn]) if c not in reserved)
            deal.play(deal.plays_for_card(card)[0])
        i += 1
    return deal


def play_match(match: Match, policy: Policy, max_plays: int = 100_000) -> Match:
    """Play a match to its end with one policy for every seat (checked plays)."""
    for _ in range(max_plays):
        if match.is_over:
            return match
        match.play(policy(match.deal))
    raise AssertionError("the match did not end")


def oracle_score(rules: Rules, piles: list[int], bonus: list[int]) -> list[int]:
    """docs/rules.md scoring written out independently of the engine, by card name."""
    card_points = rules.to_dict()["card_points"]  # {"TD": 3, ...}
    score = list(bonus)
    for t, pile in enumerate(piles):
        score[t] += sum(card_points.get(name, 0) for name in card_names(pile))

    def award(counts: list[int], points: int, ties: bool) -> None:
        top = max(counts)
        leaders = [t for t, c in enumerate(counts) if c == top]
        if len(leaders) == 1 or ties:
            for t in leaders:
                score[t] += points

    if rules.most_cards:
        award([len(card_names(p)) for p in piles], rules.most_cards, rules.most_cards_tie == "all_tied")
    for suit, points in rules.to_dict()["most_suit"].items():
        award([sum(n[1] == suit for n in card_names(p)) for p in piles], points, False)
    return score
