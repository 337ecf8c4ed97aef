"""The luck estimator is unbiased: over many deals between fixed built-in bots, the mean correction is 0.

For every preset (two players, and the three- and four-seat tables of two presets)
built-in bots that play nothing alike (greedy in seat 0, random in seat 1, more
below) play matches of ten deals, and the arena's estimator (its value function,
its default number of samples) rates every match. The statistic is each deal's
correction to the team of seat 0 (the sum over the deal's chance events):
corrections of different deals are uncorrelated (each has mean zero given all
before it), so the usual 95% interval of a mean applies, and 0 must lie in it.

The default run takes 2,000 deals per preset (10,000 over the five presets, two
players) and 1,000 per larger table: about two minutes on one idle core. Set
``TABLANETTE_LUCK_DEALS=10000`` for 10,000 deals per case (five times as long).
The last test shows the check has teeth: a baseline drawn from the wrong
distribution fails it.
"""

from __future__ import annotations

import math
import os
import statistics

import pytest

from bots import make_bot, play_match
from engine_service.rules import Match, Rules, luck_of_match
from engine_service.rules import luck as luck_module
from engine_service.rules.shuffle import DealLayout, layout_of_deck

pytestmark = pytest.mark.slow  # two minutes: the full suite runs it, `scripts/test.sh --fast` does not

DEALS = int(os.environ.get("TABLANETTE_LUCK_DEALS", "2000"))
DEALS_PER_MATCH = 10
BOTS = ["greedy", "random", "greedy:eps=0.2", "random"]
CASES = [
    ("tablic", 2, DEALS),
    ("tablanette-1939", 2, DEALS),
    ("tablic-pagat", 2, DEALS),
    ("tablanette-ro", 2, DEALS),
    ("pisti", 2, DEALS),
    ("tablic", 3, DEALS // 2),
    ("tablic-pagat", 4, DEALS // 2),
]


def deal_corrections(preset: str, players: int, deals: int, seed: str) -> list[float]:
    """Per deal, the correction to seat 0's team, over ``deals`` deals of ten-deal matches."""
    rules = Rules.preset(preset, players=players, deals=DEALS_PER_MATCH)
    out: list[float] = []
    for g in range(math.ceil(deals / DEALS_PER_MATCH)):
        match: Match = play_match(
            rules, f"{seed}/{g}", [make_bot(b, f"{seed}/{g}/{s}") for s, b in enumerate(BOTS[:players])]
        )
        per_deal = [0.0] * DEALS_PER_MATCH
        for event in luck_of_match(match, f"{seed}/{g}").events:
            per_deal[event.deal] += event.correction[0]
        out += per_deal
    return out[:deals]


def interval(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval."""
    return statistics.fmean(values), 1.96 * statistics.stdev(values) / math.sqrt(len(values))


@pytest.mark.parametrize(("preset", "players", "deals"), CASES)
def test_mean_correction_is_zero_within_its_interval(preset: str, players: int, deals: int) -> None:
    values = deal_corrections(preset, players, deals, f"unbiased/{preset}/{players}")
    mean, half = interval(values)
    spread = statistics.stdev(values)
    assert spread > 0.5, f"{preset}: corrections of spread {spread:.2f}: the estimator corrects nothing"
    assert abs(mean) <= half, f"{preset}, {players} players: mean correction {mean:+.3f} outside ±{half:.3f}"


def test_a_baseline_from_the_wrong_deals_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Samples that always give the ten of diamonds to seat 0: its team's correction is biased low, and seen."""

    def rigged(rules: Rules, deck: list[int], dealer: int) -> DealLayout:
        ten = 9 * 4 + 1
        first_of_seat_0 = (-dealer - 1) % rules.players * rules.hand_size  # seats are dealt from the dealer's left
        rest = [c for c in deck if c != ten]
        return layout_of_deck(rules, [*rest[:first_of_seat_0], ten, *rest[first_of_seat_0:]], dealer)

    monkeypatch.setattr(luck_module, "layout_of_deck", rigged)
    values = deal_corrections("tablic", 2, 400, "rigged")
    mean, half = interval(values)
    assert mean < -half, f"a rigged baseline went unnoticed: mean {mean:+.3f}, ±{half:.3f}"
