"""Planning is pure and complete: every pair meets as often as promised, ids are stable."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler.pairings import berger_rounds, plan_gauntlet, plan_round_robin, plan_tables

bots_lists = st.integers(2, 11).map(lambda n: [f"bot{i}" for i in range(n)])


@given(bots_lists)
def test_berger_rounds_pair_everyone_once_and_nobody_twice_a_round(bots: list[str]) -> None:
    rounds = berger_rounds(bots)
    pairs = [frozenset(p) for r in rounds for p in r]
    assert len(pairs) == len(set(pairs)) == len(bots) * (len(bots) - 1) // 2
    for r in rounds:
        seated = [b for p in r for b in p]
        assert len(seated) == len(set(seated))


@given(bots_lists, st.integers(1, 4), st.booleans())
def test_round_robin_meets_every_pair_games_times_per_cycle_with_seats_balanced(
    bots: list[str], games: int, double: bool
) -> None:
    plan = plan_round_robin(bots, games=games, seed="s", double=double)
    cycles = 2 if double else 1
    meetings = Counter(frozenset(m.seats) for m in plan)
    assert set(meetings.values()) == {games * cycles}
    assert len(meetings) == len(bots) * (len(bots) - 1) // 2
    assert len({m.match_id for m in plan}) == len(plan)
    if games % 2 == 0 or double:
        firsts = Counter(m.seats[0] for m in plan)
        seconds = Counter(m.seats[1] for m in plan)
        assert firsts == seconds  # every bot sits first as often as second


def test_the_plan_is_stable_so_a_restarted_scheduler_resumes_the_same_matches() -> None:
    a = plan_round_robin(["x", "y", "z", "w"], games=2, seed="league-7", double=True)
    b = plan_round_robin(["x", "y", "z", "w"], games=2, seed="league-7", double=True)
    assert a == b
    assert plan_round_robin(["x", "y", "z", "w"], games=2, seed="other") != a


def test_mirrored_games_share_deals_with_seats_swapped() -> None:
    plan = sorted(plan_round_robin(["a", "b"], games=4, seed="m"), key=lambda m: m.match_id)
    assert [m.seats for m in plan] == [("a", "b"), ("b", "a")] * 2
    assert plan[0].seed == plan[1].seed != plan[2].seed == plan[3].seed
    assert plan[0].deal == plan[1].deal != plan[2].deal == plan[3].deal


def test_which_seat_sees_a_mirrored_deal_first_varies_from_deal_to_deal() -> None:
    plan = plan_round_robin(["a", "b"], games=200, seed="m")
    firsts = [plan[k].seats[0] for k in range(0, len(plan), 2)]  # the game of each deal played first
    assert all(plan[k].deal == plan[k + 1].deal for k in range(0, len(plan), 2))  # a deal's games together
    assert 30 < firsts.count("a") < 70  # 100 deals: a fair coin's count, not always the same seat
    unmirrored = plan_round_robin(["a", "b"], games=2, seed="m", mirrored=False)
    assert unmirrored[0].seed != unmirrored[1].seed


def test_gauntlet_plays_the_champion_against_each_other_bot() -> None:
    plan = plan_gauntlet("champ", ["champ", "a", "b", "c"], games=2)
    assert Counter(frozenset(m.seats) for m in plan) == {frozenset({"champ", x}): 2 for x in "abc"}
    with pytest.raises(ValueError, match="opponent"):
        plan_gauntlet("champ", ["champ"])


def test_three_seat_tables_rotate_every_bot_through_every_seat() -> None:
    plan = plan_tables(["a", "b", "c", "d"], 3)
    assert len(plan) == 4 * 3  # C(4,3) tables, 3 rotations each
    for group in {frozenset(m.seats) for m in plan}:
        games = [m for m in plan if frozenset(m.seats) == group]
        for seat in range(3):
            assert {m.seats[seat] for m in games} == set(group)


def test_partnership_tables_play_every_split_of_four_into_two_teams() -> None:
    plan = plan_tables(["a", "b", "c", "d"], 4, partnerships=True)
    splits = Counter(frozenset({frozenset(m.seats[0::2]), frozenset(m.seats[1::2])}) for m in plan)
    assert len(splits) == 3 and set(splits.values()) == {2}
    with pytest.raises(ValueError, match="partnerships"):
        plan_tables(["a", "b", "c"], 3, partnerships=True)
