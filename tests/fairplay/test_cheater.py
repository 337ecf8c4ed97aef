"""A cheater against the real arena: in the default configuration it learns no hidden card and wins nothing.

The cheater (bench/cheater.py) tries every channel an outsider has on every
turn: deals computed from the game id as the arena's code would from a public
seed, the records and live streams of the other games of its pairing through the
web API, and its memory of every game it played. One arena (engine service, two
Celery workers, the web ladder, bots over gRPC) plays three leagues
(bench/fair_play.py, which prints the same figures with their intervals):

- ``league create NAME`` and nothing else: the cheater predicts its opponent's
  hand at the exact chance rate (z < 4 over at least 10,000 predictions), no
  channel ever tells it a card, and it is no stronger than its honest twin;
- the control, ``--seed`` told to the cheater and deals forced mirrored: it knows
  every card, so the measurement can see a cheater when there is one;
- a secret league forced to mirrored deals: remembering the first game of a deal
  works (why the arena does not mirror deals for bots it does not run), while the
  twin's record and live stream stay held back all along, with two workers
  playing a deal's games at the same time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_harness import new_arena

from bench.fair_play import Findings, Stage, run


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Findings]:
    arena = new_arena("fair-play", Path(tmp_path_factory.mktemp("fair-play")))
    try:
        # 24 games a pairing: about 11,500 predictions of the cheater's; 4 determinizations keep it quick
        yield run(Stage(arena, samples=4).start(), games=24, control_games=4, forced_games=16)
    finally:
        arena.close()


def test_in_the_default_league_the_cheater_predicts_at_chance(findings: Findings) -> None:
    cheater = findings.default
    print("\n".join(findings.lines))
    assert cheater.made >= 10_000
    assert set(cheater.by_channel) == {"none"}, "a channel told the cheater a card"
    assert cheater.leaks == []
    assert abs(cheater.z) < 4, cheater.line()


def test_in_the_default_league_the_cheater_is_no_stronger_than_its_honest_twin(findings: Findings) -> None:
    edge, head = findings.edge, findings.head_to_head
    for what in (edge, head):  # the interval is 1.96 standard errors each side
        z = what.mean / ((what.high - what.mean) / 1.96)
        assert z < 4, f"the cheater is stronger than its honest twin: {what}"


def test_the_measurement_sees_a_cheater_that_knows_the_deals(findings: Findings) -> None:
    control = findings.public
    assert control.by_channel.get("seed", 0) >= 0.9 * control.made, control.line()
    assert control.z > 20 and control.rate > 0.95, control.line()


def test_forced_mirrored_deals_hold_the_twin_back_and_the_memory_shows(findings: Findings) -> None:
    forced, status = findings.forced, findings.forced_status
    assert status["deals"]["dealt"] == "mirrored" and status["deals"]["secret"]
    assert "mole" in status["deals"]["warning"]  # the operator was told who could remember
    assert forced.by_channel.get("twin", 0) == 0, "a twin's record was served while its deal was being played"
    assert forced.leaks == [], f"a twin's live stream answered: {forced.leaks[:3]}"
    assert forced.by_channel.get("memory", 0) > 0 and forced.z > 10, forced.line()
    assert {s["bot"] for s in status["deals"]["second_sight"]} == {"mole", "greedy"}
