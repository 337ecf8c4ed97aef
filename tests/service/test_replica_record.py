"""The record a replica sends at a match's end is checked against the match the runner's own driver followed."""

from __future__ import annotations

import json
import random

import pytest

from engine_service.driver import MatchDriver
from engine_service.rules import RecordError, Rules
from engine_service.time_control import TimeControl
from engine_service.wire import convert
from tablanette.v1 import dispatch_pb2 as dpb
from worker.match_runner import MatchRunner

RULES = Rules.preset("tablic", target=21)
LABELS = ["east@1", "west@1"]


def followed(seed: str) -> MatchDriver:
    """A driver that followed a whole match's answers, as the runner follows a replica playing it."""
    driver = MatchDriver(RULES, seed, f"L/{seed}", TimeControl.of_rules(RULES))
    rng = random.Random(seed)
    while not driver.over:
        play = convert.play_to_pb(rng.choice(driver.match.legal_plays()))
        driver.resume(driver.match.turn, dpb.PlayResponse(outcome=dpb.PlayResponse.PLAYED, play=play))
    return driver


def test_the_replicas_record_is_accepted_as_one_string_or_in_another_versions_spelling() -> None:
    finished = followed("same").finished(LABELS)
    MatchRunner.check_replica_record(dpb.MatchEnd(record=finished.text), finished, "same", LABELS)
    spelled = json.dumps(finished.record, indent=1)  # a replica of another version may write it otherwise
    MatchRunner.check_replica_record(dpb.MatchEnd(record=spelled), finished, "same", LABELS)


def test_a_record_that_is_not_the_followed_match_is_the_arenas_bug_never_scored() -> None:
    finished = followed("mine").finished(LABELS)
    other = followed("theirs").finished(LABELS)
    with pytest.raises(RecordError, match="record of another match"):
        MatchRunner.check_replica_record(dpb.MatchEnd(record=other.text), finished, "mine", LABELS)
    changed = dict(finished.record, score=[s + 1 for s in finished.record["score"]])
    with pytest.raises(RecordError, match="not the match its own answers make"):
        MatchRunner.check_replica_record(dpb.MatchEnd(record=json.dumps(changed)), finished, "mine", LABELS)
