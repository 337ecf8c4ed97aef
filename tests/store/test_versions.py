"""Hosted versions in Redis: numbered, immutable, leased to one host, and kept out of rated leagues until ready."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from arena_harness import scratch_redis

from engine_service.rules import Rules
from store.leagues import League, LeagueError, LeagueStore
from store.sessions import SessionEntry
from store.tokens import BotTokens
from store.versions import VersionError, Versions, split_version

MANIFEST = {"language": "perl", "protocol": "jsonlines", "run": ["perl", "bot.pl"]}


@pytest.fixture
def arena() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("versions") as scratch:
        yield scratch


def test_every_submission_is_a_new_numbered_version_with_its_source(arena: tuple[redis.Redis, str]) -> None:
    versions = Versions(*arena)
    first = versions.submit("perly", MANIFEST, b"archive-1", "h1")
    second = versions.submit("perly", MANIFEST, b"archive-1", "h1")  # the same source again: still a new version
    assert (first.name, second.name) == ("perly@1", "perly@2")
    assert versions.source("perly@1") == b"archive-1"
    assert [v.name for v in versions.of("perly")] == ["perly@1", "perly@2"]
    assert versions.require("perly@2").state == "submitted"
    assert versions.bots() == ["perly"]
    with pytest.raises(VersionError, match="no hosted version 'perly@3'"):
        versions.require("perly@3")


def test_a_name_taken_by_a_bot_that_connects_itself_is_refused(arena: tuple[redis.Redis, str]) -> None:
    r, prefix = arena
    BotTokens(r, prefix).add("greedy")
    with pytest.raises(VersionError, match="a bot that connects itself"):
        Versions(r, prefix).submit("greedy", MANIFEST, b"x", "h")
    with pytest.raises(VersionError, match="must be 1-64 letters"):
        Versions(r, prefix).submit("bad@name", MANIFEST, b"x", "h")


def test_latest_means_the_newest_version_that_passed_preflight(arena: tuple[redis.Redis, str]) -> None:
    versions = Versions(*arena)
    for _ in range(3):
        versions.submit("perly", MANIFEST, b"x", "h")
    with pytest.raises(VersionError, match="no version that passed preflight"):
        versions.resolve("perly@latest")
    versions.set_state("perly@1", "ready")
    versions.set_state("perly@2", "ready")
    versions.set_state("perly@3", "preflight-failed", "2 illegal play(s)")
    assert versions.resolve("perly@latest") == "perly@2"
    assert versions.resolve("perly@3") == "perly@3"


def test_only_a_ready_version_joins_a_rated_league_and_the_refusal_says_why(arena: tuple[redis.Redis, str]) -> None:
    r, prefix = arena
    versions, leagues = Versions(r, prefix), LeagueStore(r, prefix)
    versions.submit("perly", MANIFEST, b"x", "h")
    versions.submit("perly", MANIFEST, b"x", "h")
    versions.set_state("perly@1", "preflight-failed", "3 timeout(s)")
    leagues.create(League("rated", Rules.preset()))
    with pytest.raises(LeagueError, match=r"perly@1 cannot join a rated league: it is preflight-failed: 3 timeout"):
        leagues.add_bots("rated", ["perly@1"])
    with pytest.raises(LeagueError, match=r"perly@2 cannot join a rated league: it is submitted"):
        leagues.add_bots("rated", ["perly@2"])
    with pytest.raises(LeagueError, match=r"no hosted version 'perly@9'"):
        leagues.add_bots("rated", ["perly@9"])
    assert leagues.load("rated").bots == []
    leagues.create(League("preflight-perly-2", Rules.preset(), preflight="perly@2"))
    leagues.add_bots("preflight-perly-2", ["perly@2"])  # its own preflight takes it
    with pytest.raises(LeagueError, match="perly@1 cannot join"):
        leagues.add_bots("preflight-perly-2", ["perly@1"])  # but no other version that is not ready
    versions.set_state("perly@2", "ready")
    assert leagues.add_bots("rated", ["perly@2"]).bots == ["perly@2"]


def test_one_host_at_a_time_holds_a_version(arena: tuple[redis.Redis, str]) -> None:
    versions = Versions(*arena)
    assert versions.claim("perly@1", "host-a", 5)
    assert versions.claim("perly@1", "host-a", 5)  # kept
    assert not versions.claim("perly@1", "host-b", 5)
    assert versions.holder("perly@1") == "host-a"
    versions.release("perly@1", "host-b")  # not its lease: nothing happens
    assert versions.holder("perly@1") == "host-a"
    versions.release("perly@1", "host-a")
    assert versions.claim("perly@1", "host-b", 5)


def test_a_host_reissues_a_versions_token_and_the_old_one_stops_working(arena: tuple[redis.Redis, str]) -> None:
    tokens = BotTokens(*arena)
    old = tokens.reissue("perly@1")
    new = tokens.reissue("perly@1")
    assert tokens.lookup(old) is None
    assert tokens.lookup(new) == "perly@1"


def test_a_hosted_versions_session_is_labelled_by_its_name_alone() -> None:
    assert SessionEntry("perly@2", "r", "s", "perl 1.0", 4).label == "perly@2"
    assert SessionEntry("greedy", "r", "s", "1", 4).label == "greedy@1"
    assert split_version("perly@2") == ("perly", 2)


def test_evidence_is_kept_newest_first_and_capped(arena: tuple[redis.Redis, str]) -> None:
    versions = Versions(*arena)
    versions.submit("perly", MANIFEST, b"x", "h")
    for i in range(15):
        versions.add_evidence("perly@1", f"fault {i}", [f"line {i}"] * 100)
    got = versions.require("perly@1").evidence
    assert [e["reason"] for e in got[:2]] == ["fault 14", "fault 13"]
    assert len(got) == 10 and len(got[0]["output"]) == 40
