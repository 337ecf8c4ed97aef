"""The expert bot: legal answers under every preset, its clock kept, its seed honoured, its spec checked.

Strength is not asserted here (a few games are noise): ``bench/expert.py`` measures it.
"""

from __future__ import annotations

import time

import pytest

from bots import make_bot, play_match
from bots.expert import ExpertBot
from bots.sdk import Clock
from engine_service.rules import PRESETS, Match, Observation, Rules

PRESET_PLAYERS = [(name, n) for name, spec in PRESETS.items() for n in spec.players]


def _busy_observation(seed: str = "expert") -> Observation:
    """An observation early in a tablic deal with several legal plays (the hard case for the clock)."""
    match = Match(Rules.preset("tablic"), seed=seed)
    obs = match.observation(match.turn)
    while len(obs.legal_plays) < 4:
        match.play(obs.legal_plays[0])
        obs = match.observation(match.turn)
    return obs


@pytest.mark.parametrize(("preset", "players"), PRESET_PLAYERS)
def test_always_answers_a_legal_play(preset: str, players: int) -> None:
    """A whole short match: play_match checks every answer against the engine's legal plays."""
    rules = Rules.preset(preset, players=players).with_overrides({"target": "21"})
    bots = [make_bot("expert:worlds=3", seed=s) if s % 2 == 0 else make_bot("greedy", seed=s) for s in range(players)]
    match = play_match(rules, f"expert-{preset}-{players}", bots)
    assert match.is_over and match.result is not None


def test_every_answer_is_one_of_the_legal_plays() -> None:
    bot = ExpertBot(seed=1, worlds=4)
    match = Match(Rules.preset("tablic", players=3), seed="legal")
    for _ in range(40):
        obs = match.observation(match.turn)
        play = bot.choose(obs)
        assert play in obs.legal_plays
        match.play(play)


def test_keeps_inside_a_small_clock() -> None:
    obs = _busy_observation()
    bot = ExpertBot(seed=2)
    clock = Clock(50)
    started = time.monotonic()
    play = bot.choose(obs, clock=clock)
    assert play in obs.legal_plays
    assert time.monotonic() - started < 0.5  # a generous bound: 10x the whole turn
    assert bot.last_worlds >= 1


def test_the_ms_cap_bounds_a_long_clock() -> None:
    obs = _busy_observation()
    bot = ExpertBot(seed=3, ms=20)
    started = time.monotonic()
    bot.choose(obs, clock=Clock(60_000))
    assert time.monotonic() - started < 0.5  # 20 ms asked, a minute given: the cap wins


def test_answers_at_once_with_one_legal_play() -> None:
    match = Match(Rules.preset("tablic"), seed="forced")
    obs = match.observation(match.turn)
    while True:  # play on until some seat holds a single card (its last of the round)
        if len(obs.legal_plays) == 1:
            break
        match.play(obs.legal_plays[-1])
        obs = match.observation(match.turn)
    bot = ExpertBot(seed=4)
    assert bot.choose(obs, clock=Clock(1)) == obs.legal_plays[0]
    assert bot.last_worlds == 0


@pytest.mark.parametrize("clocked", [False, True])
def test_same_seed_same_play(clocked: bool) -> None:
    """With a worlds cap (and a clock too long to bind), the seed decides everything."""
    for seed in ("a", "b", "c"):
        obs = _busy_observation(seed)
        answers = set()
        for _ in range(2):
            bot = make_bot("expert:worlds=6", seed=7)
            assert isinstance(bot, ExpertBot)
            answers.add(bot.choose(obs, clock=Clock(60_000) if clocked else None))
            assert bot.last_worlds == 6
        assert len(answers) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("expert:ms=x", "ms must be an integer, got 'x'"),
        ("expert:worlds=1.5", "worlds must be an integer, got '1.5'"),
        ("expert:share=half", "share must be a number, got 'half'"),
        ("expert:depth=3", "expert takes name=value parameters (ms, worlds, share, risk, eps), not 'depth=3'"),
        ("expert:ms=0", "ms is the most a move may think"),
        ("expert:worlds=-1", "worlds is a cap on the worlds a move samples"),
        ("expert:share=0", "share is the part of the turn's time left"),
        ("expert:risk=-1", "risk weighs the sweeps"),
        ("expert:eps=2", "eps is a probability"),
    ],
)
def test_bad_spec_parameters_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_bot(spec)


def test_spec_parameters_reach_the_bot() -> None:
    bot = make_bot("expert:ms=80:worlds=5:share=0.5:risk=0:eps=0.1", seed=1)
    assert isinstance(bot, ExpertBot)
    assert (bot.ms, bot.worlds, bot.share, bot.risk, bot.eps) == (80, 5, 0.5, 0.0, 0.1)
    assert bot.version == "1:eps=0.1:ms=80:risk=0.0:share=0.5:worlds=5"
