"""Who plays in a league: a standing ladder takes and drops bots while it runs, a newer version retires the
older; every other league's participants stay fixed once it starts, as before."""

from __future__ import annotations

import pytest

from engine_service.rules import Rules
from store.league_settings import League, LeagueError, check
from store.membership import joined, left
from store.versions import Version

RULES = Rules.preset("tablic", deals=1)


def version(name: str, state: str = "ready") -> Version:
    bot, number = name.split("@")
    return Version(bot, int(number), "hash", {}, 0.0, state=state, note="" if state == "ready" else "its build failed")


def ready(name: str) -> Version | None:
    return version(name) if "@" in name else None


def standing(status: str = "running", bots: list[str] | None = None) -> League:
    return League("st", RULES, "standing", bots=list(bots or []), status=status)


def test_a_running_standing_ladder_takes_bots_and_drops_them_keeping_them_as_retired() -> None:
    lg = standing(bots=["a", "b"])
    assert joined(lg, ["c"], ready) == [] and lg.bots == ["a", "b", "c"]
    left(lg, ["a"])
    assert lg.bots == ["b", "c"] and lg.retired == ["a"]
    joined(lg, ["a"], ready)  # it may come back
    assert lg.bots == ["b", "c", "a"] and lg.retired == []


def test_a_newer_version_retires_the_older_and_an_older_one_is_refused() -> None:
    lg = standing(bots=["a", "perly@1"])
    assert joined(lg, ["perly@3"], ready) == ["perly@1"]
    assert lg.bots == ["a", "perly@3"] and lg.retired == ["perly@1"]
    with pytest.raises(LeagueError, match="perly@2 is older than perly@3"):
        joined(lg, ["perly@2"], ready)


def test_a_version_joins_only_once_it_passed_its_preflight() -> None:
    with pytest.raises(LeagueError, match="it is build-failed: its build failed"):
        joined(standing(), ["perly@2"], lambda name: version(name, "build-failed"))
    with pytest.raises(LeagueError, match="no hosted version 'ghost@1'"):
        joined(standing(), ["ghost@1"], lambda name: None)


def test_other_leagues_are_fixed_once_started_and_a_cancelled_ladder_takes_no_one() -> None:
    lg = League("rr", RULES, "round-robin", bots=["a", "b"], status="running")
    with pytest.raises(LeagueError, match="participants are fixed"):
        joined(lg, ["c"], ready)
    with pytest.raises(LeagueError, match="participants are fixed"):
        left(lg, ["a"])
    created = League("rr", RULES, "round-robin", bots=["a", "b", "perly@1"])
    joined(created, ["perly@2"], ready)  # before a start: any league; only a standing ladder retires versions
    left(created, ["a"])
    assert created.bots == ["b", "perly@1", "perly@2"] and created.retired == []
    with pytest.raises(LeagueError, match="was cancelled"):
        joined(standing("cancelled"), ["c"], ready)


def test_unknown_and_duplicate_bots_are_refused_with_why() -> None:
    lg = standing(bots=["a"])
    with pytest.raises(LeagueError, match="'a' is already in league 'st'"):
        joined(lg, ["a"], ready)
    left(lg, ["a"])
    with pytest.raises(LeagueError, match="it is retired already"):
        left(lg, ["a"])


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"rules": Rules.preset("tablic", players=3)}, "pairs two bots a match: give --players 2, not 3"),
        ({"fit": "skill"}, "leave out --fit skill"),
        ({"absent_action": "forfeit"}, "never forfeits an absent bot"),
    ],
)
def test_what_a_standing_ladder_cannot_do_is_refused_at_creation(change: dict[str, object], why: str) -> None:
    lg = standing("created")
    for name, value in change.items():
        setattr(lg, name, value)
    with pytest.raises(LeagueError, match=why):
        check(lg)


def test_a_standing_ladder_is_fitted_on_wins_and_losses() -> None:
    assert standing().fitted_on == "win-loss"
    assert League("x", RULES, "round-robin", deals="independent").fitted_on == "skill"  # as before
