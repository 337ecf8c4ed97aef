"""The standing ladder's planner: it never ends, keeps its queue short, gives every bot its share, lets none hog,
places newcomers first, pairs a bot's newest version only, and skips the bots that are away."""

from __future__ import annotations

import math
import random
from collections import Counter

from engine_service.rules import Rules
from scheduler.league import planner_for, too_few_bots
from scheduler.pairings import PlannedMatch
from scheduler.ratings import Outcome
from scheduler.standing import MIN_SHARE, PER_BOT, PLACEMENT_GAMES, StandingPlanner, latest_versions
from store.leagues import League
from store.units import mirror_unit

RULES = Rules.preset("tablic", deals=1)


def ladder(bots: list[str], reference: list[str] | None = None) -> League:
    lg = League("st", RULES, "standing", 2, "mirrored", seed="st", bots=bots)
    lg.reference = reference or []
    return lg


class Arena:
    """A standing ladder played in-process with instant bots of known strength (natural-log units)."""

    def __init__(self, planner: StandingPlanner, strength: dict[str, float], seed: int = 1) -> None:
        self.planner = planner
        self.strength = strength
        self.rng = random.Random(seed)
        self.planned: list[PlannedMatch] = []
        self.outcomes: list[Outcome] = []
        self.unplayed: list[PlannedMatch] = []

    def ask(self) -> list[PlannedMatch]:
        more = self.planner.more(self.outcomes, self.planned, [m.match_id for m in self.unplayed])
        assert more is not None
        self.planned += more
        self.unplayed += more
        return more

    def play(self, share: float = 1.0) -> None:
        """Play this share of the matches not played yet (the first ones)."""
        k = math.ceil(len(self.unplayed) * share)
        for m in self.unplayed[:k]:
            a, b = m.seats
            won = self.rng.random() < 1 / (1 + math.exp(self.strength[b] - self.strength[a]))
            placing, points = ((1.0, 0.0), (101, 70)) if won else ((0.0, 1.0), (70, 101))
            self.outcomes.append(Outcome(m.match_id, mirror_unit(m.seed, m.seats), ((a,), (b,)), placing, points))
        self.unplayed = self.unplayed[k:]

    def rounds(self, n: int, share: float = 1.0) -> None:
        for _ in range(n):
            self.ask()
            self.play(share)

    def games(self) -> Counter[str]:
        return Counter(b for o in self.outcomes for t in o.teams for b in t)


def field(n: int, seed: int = 0) -> dict[str, float]:
    rng = random.Random(seed)
    return {f"b{i:02d}": rng.gauss(0.0, 1.0) for i in range(n)}


def test_it_never_ends_and_waits_for_bots_rather_than_stopping() -> None:
    planner = StandingPlanner(ladder([]))
    assert planner.initial() == [] and planner.more([], [], []) == []  # no bots yet: nothing now, never None
    assert too_few_bots(ladder(["a"])) == ""  # a standing ladder starts with the bots it has, and waits
    strength = field(6)
    arena = Arena(StandingPlanner(ladder(list(strength))), strength)
    for _ in range(60):
        assert arena.ask() is not None
        arena.play()
    assert len(arena.outcomes) > 60 * 4 and isinstance(planner_for(ladder(list(strength))), StandingPlanner)


def test_the_queue_stays_bounded_whatever_is_asked() -> None:
    strength = field(30)
    planner = StandingPlanner(ladder(list(strength)), ahead=12)
    arena = Arena(planner, strength)
    first = arena.ask()
    assert 0 < len(first) <= 12 and len(first) % 2 == 0  # pairs of games
    for _ in range(5):  # nothing played: nothing more
        assert arena.ask() == []
    for _ in range(40):
        arena.play(share=0.3)
        arena.ask()
        assert len(arena.unplayed) <= 12 == planner.ahead
        assert len(planner.pending()) == len(arena.unplayed)


def test_no_bot_hogs_the_queue() -> None:
    strength = field(12)
    arena = Arena(StandingPlanner(ladder(list(strength)), ahead=40), strength)
    for _ in range(50):
        arena.ask()
        load = Counter(b for m in arena.unplayed for b in m.seats)
        assert max(load.values()) <= PER_BOT
        pairs = Counter(frozenset(m.seats) for m in arena.unplayed)
        assert max(pairs.values()) <= 2  # one pair of games at a time between two bots
        arena.play(share=0.5)


def test_every_bot_gets_its_minimum_share_though_the_information_is_elsewhere() -> None:
    # four bots of equal strength (their order is never sure) among far-apart ones (soon settled)
    strength = {f"eq{i}": 0.0 for i in range(4)} | {f"far{i}": 4.0 * (i - 3) for i in range(7)}
    arena = Arena(StandingPlanner(ladder(list(strength)), ahead=8), strength)
    arena.rounds(400)
    games = arena.games()
    mean = sum(games.values()) / len(strength)
    assert min(games[b] for b in strength) >= MIN_SHARE * mean - 2 * PER_BOT
    assert max(games[f"eq{i}"] for i in range(4)) > mean  # the unsure bots get more than the mean


def test_the_ladder_it_plays_orders_a_field() -> None:
    strength = field(16, seed=3)
    planner = StandingPlanner(ladder(list(strength)))
    Arena(planner, strength).rounds(300)
    order = [r.bot for r in planner.refit().ratings]
    truth = sorted(strength, key=lambda b: -strength[b])
    displaced = sum(abs(order.index(b) - truth.index(b)) for b in strength) / len(strength)
    assert displaced < 1.5


def test_a_newcomer_is_placed_first_against_the_references() -> None:
    strength = field(10)
    refs = ["b00", "b01", "b02"]
    lg = ladder(list(strength), reference=refs)
    planner = StandingPlanner(lg, ahead=8)
    arena = Arena(planner, strength)
    arena.rounds(150)
    assert all(g >= PLACEMENT_GAMES for g in arena.games().values())  # everybody placed by now
    strength["new"] = 0.0
    lg.bots.append("new")
    planner.roster(lg, away=())
    first = arena.ask()
    with_new = [m for m in first if "new" in m.seats]
    assert with_new and all(set(m.seats) - {"new"} <= set(refs) for m in with_new)
    arena.play()
    arena.rounds(20)
    assert arena.games()["new"] >= 20  # placement keeps it busy (within its share of the queue)


def test_a_newer_version_retires_the_older_and_starts_from_its_rating() -> None:
    strength = field(16) | {"hosted@1": 3.0}
    lg = ladder(list(strength))
    planner = StandingPlanner(lg, ahead=8)
    arena = Arena(planner, strength)
    arena.rounds(200)
    old = planner.refit()
    top = old.ratings[0].bot
    assert top == "hosted@1"
    strength["hosted@2"] = 3.0
    lg.bots.append("hosted@2")
    planner.roster(lg, away=())
    arena.play()
    arena.rounds(30)
    since = arena.planned[-30 * 8 :]
    assert not any("hosted@1" in m.seats for m in since)  # retired from pairing
    first_opponents = [b for m in since[:4] for b in m.seats if m.seats.count("hosted@2") and b != "hosted@2"]
    near_the_top = [r.bot for r in old.ratings[1:6]]  # a bot new to the ladder starts in its middle (8th)
    assert first_opponents and set(first_opponents) <= set(near_the_top)  # it starts where its predecessor stood
    fit = planner.refit()
    assert "hosted@1" in fit.index  # its games stay on the ladder


def test_a_bot_that_is_away_is_skipped_then_paired_again() -> None:
    strength = field(8)
    lg = ladder(list(strength))
    planner = StandingPlanner(lg, ahead=8)
    arena = Arena(planner, strength)
    arena.rounds(20)
    planner.roster(lg, away={"b03"})
    arena.play()
    for _ in range(20):
        assert not any("b03" in m.seats for m in arena.ask())
        arena.play()
    planner.roster(lg, away=())
    arena.rounds(20)
    assert any("b03" in m.seats for m in arena.planned[-20 * 8 :])


def test_matches_dropped_no_longer_fill_the_queue() -> None:
    strength = field(8)
    planner = StandingPlanner(ladder(list(strength)), ahead=4)
    arena = Arena(planner, strength)
    first = arena.ask()
    assert arena.ask() == []
    planner.drop([m.match_id for m in first])  # withdrawn or failed: they will not be played
    assert len(arena.ask()) == len(first)


def test_latest_versions_keeps_other_bots_and_each_bots_newest_version() -> None:
    assert latest_versions(["x@2", "y", "x@10", "z@1"]) == ["y", "x@10", "z@1"]
    assert latest_versions([]) == []


def test_a_restarted_planner_resumes_with_new_ids_and_the_same_queue() -> None:
    strength = field(8)
    lg = ladder(list(strength))
    arena = Arena(StandingPlanner(lg, ahead=8), strength)
    arena.rounds(10)
    arena.ask()
    again = StandingPlanner(lg, ahead=8)  # a restart: it reads what was planned and played
    again.remember({r.bot: r.rating for r in arena.planner.refit().ratings})
    assert again.more(arena.outcomes, arena.planned, []) == []  # the queue is full already
    arena.play()
    more = again.more(arena.outcomes, arena.planned, [])
    assert more and not {m.match_id for m in more} & {m.match_id for m in arena.planned}
