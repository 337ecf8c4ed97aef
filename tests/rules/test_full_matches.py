"""Whole matches for every preset and every allowed player count, each record re-verified."""

from __future__ import annotations

import random

import pytest
from rules_testkit import PRESET_PLAYERS, oracle_score, play_match, random_policy

from engine_service.rules import DealState, Match, Play, Rules, dumps, loads, match_record, verify_record


def greedy(deal: DealState) -> Play:
    """Take the most cards; otherwise the first legal play."""
    return max(deal.legal_plays(), key=lambda p: p.mask.bit_count())


def check_finished_match(match: Match) -> None:
    rules = match.rules
    result = match.result
    assert result is not None
    totals = [0] * rules.team_count
    for k, deal in enumerate(match.deals):
        assert deal.complete
        assert deal.layout.dealer == k % rules.players
        assert len(deal.plays) == 52 - rules.table_size
        assert len(deal.score) == rules.team_count
        for t, pts in enumerate(deal.score):
            totals[t] += pts
    assert totals == match.totals
    top = max(totals)
    leaders = [t for t, v in enumerate(totals) if v == top]
    if result.reason == "target":
        assert leaders == [result.winner] and top >= rules.target
    else:
        assert result.reason == "deals" and len(match.deals) == rules.deals


@pytest.mark.parametrize(("preset", "players"), PRESET_PLAYERS)
@pytest.mark.parametrize("seed", ["one", "two"])
def test_full_random_match(preset: str, players: int, seed: str) -> None:
    rules = Rules.preset(preset, players=players)
    match = play_match(Match(rules, seed=f"{seed}-{preset}-{players}"), random_policy(random.Random(seed)))
    check_finished_match(match)
    names = [f"random-{s}" for s in range(players)]
    record = match_record(match, names, f"{preset}/{players}/{seed}")
    line = dumps(record)
    replayed = verify_record(loads(line))
    assert replayed.totals == match.totals and replayed.result == match.result
    assert dumps(match_record(replayed, names, record["id"])) == line


@pytest.mark.parametrize(("preset", "players"), PRESET_PLAYERS)
def test_full_greedy_match_with_timeouts(preset: str, players: int) -> None:
    """A greedy policy, with one play in five made by the engine's timeout rule."""
    rules = Rules.preset(preset, players=players)
    match = Match(rules, seed=f"greedy-{preset}")
    rng = random.Random(players)
    while not match.is_over:
        if rng.random() < 0.2:
            match.play(match.timeout_play(), auto=True)
        else:
            match.play(greedy(match.deal))
    check_finished_match(match)
    record = match_record(match, ["g"] * players, "greedy")
    verify_record(loads(dumps(record)))


@pytest.mark.parametrize(
    "overrides",
    [
        {"ace_values": [1, 14], "tabla_points": "card_value", "jack_sweep_tabla": "one"},
        {"partnerships": True},
        {"leftover_to": "dealer", "last_play_tabla": True, "most_cards_tie": "all_tied"},
        {"deals": 3},
        {"multi_capture": True, "capture_optional": True, "rank_priority": False},
    ],
    ids=["ro-variants", "partnerships", "dealer-leftover", "fixed-deals", "loose"],
)
def test_full_matches_with_rule_variants(overrides: dict[str, object]) -> None:
    players = 4 if "partnerships" in overrides else 2
    rules = Rules.preset("tablanette-ro", players=players, **overrides)
    match = play_match(Match(rules, seed="variant"), random_policy(random.Random(11)))
    check_finished_match(match)
    for deal in match.deals:
        piles = [0] * rules.team_count
        bonus = [0] * rules.team_count
        for p in deal.plays:
            if p.mask:
                piles[rules.team_of(p.seat)] |= p.mask | 1 << p.card
            bonus[rules.team_of(p.seat)] += p.bonus
        if deal.leftover_team is not None:
            piles[deal.leftover_team] |= deal.leftover
        assert list(deal.score) == oracle_score(rules, piles, bonus)
    record = match_record(match, ["r"] * players, "variant")
    assert record["rules"] == {"preset": "tablanette-ro", **overrides}
    verify_record(loads(dumps(record)))
