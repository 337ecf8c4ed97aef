"""The finished match, made once from the live match: the same record, blob and luck a replay of its record gives."""

from __future__ import annotations

import random

from engine_service.rules import Match, Rules, dumps, finish, luck_of_record, match_record
from engine_service.rules.compact import decode_full, encode


def played(rules: Rules, seed: str, rng: random.Random) -> Match:
    match = Match(rules, seed)
    while not match.is_over:
        if rng.random() < 0.05:
            match.play(match.timeout_play(), auto=True)
        else:
            match.play(rng.choice(match.legal_plays()))
    return match


def test_a_finished_match_is_what_a_replay_of_its_record_makes() -> None:
    rng = random.Random(11)
    for preset, players in [("tablic", 2), ("tablic", 4), ("pisti", 3), ("tablanette-1939", 2)]:
        match = played(Rules.preset(preset, players=players, target=31), f"s/{preset}/{players}", rng)
        names = [f"bot{s}@1" for s in range(players)]
        plays = sum(len(d.plays) for d in match.deals)
        times = [rng.randrange(0, 5000) for _ in range(plays)]
        game = finish(match, names, f"L/{preset}/{players}", times)
        record = match_record(match, names, f"L/{preset}/{players}")
        assert dumps(game.record) == dumps(record)
        assert game.blob == encode(record, times)
        assert decode_full(game.blob).times_ms == tuple(times) == game.times_ms
        assert game.luck("sampling") == luck_of_record(record, sampling_seed="sampling").luck
        assert dumps(match_record(match, names, f"L/{preset}/{players}")) == dumps(record)  # luck changed nothing


def test_a_forfeit_has_no_luck_and_times_that_are_not_one_a_play_are_not_kept() -> None:
    match = Match(Rules.preset("tablic"), "forfeit")
    for _ in range(5):
        match.play(match.legal_plays()[0])
    match.forfeit(1)
    game = finish(match, ["a", "b"], "f/1", [1, 2])
    assert game.luck("x") is None
    assert game.times_ms is None and decode_full(game.blob).times_ms is None
    assert game.blob == encode(game.record)
