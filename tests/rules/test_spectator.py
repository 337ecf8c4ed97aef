"""The spectator's feed leaks no hidden card, misses nothing, tells nothing twice, and shows what the table shows.

Leak: after every play of real matches (every preset, 2 to 4 players), no card
named anywhere in a new event about the deal in play is in a hand or in the
stock at that moment, and a deal's hands are shown only once it is over (``reveal_after`` deals later when
asked). Completeness: a feed updated after every play and one updated now and
then give the same events. Truth: each event's public position is the one every
seat's observation shows (table, counts, whose turn, scores).
"""

from __future__ import annotations

import json
import random
import re

import pytest

from bots import make_bot
from engine_service.rules import PRESETS, Match, Rules
from engine_service.rules.cards import card_names
from engine_service.rules.spectator import PublicEvent, PublicFeed

CASES = [(p, n) for p, spec in PRESETS.items() for n in spec.players]
CARD = re.compile(r'"([2-9TJQKA][CDHS])"')


def hidden(match: Match) -> set[str]:
    """Every card nobody has seen face up now: the hands, and the stock still to be dealt this deal."""
    deal = match.deal
    cards = 0
    for hand in deal.hands:
        cards |= hand
    for later in deal.layout.rounds[deal.round + 1 :]:
        for hand in later:
            cards |= hand
    return set(card_names(cards))


def named(event: PublicEvent) -> set[str]:
    return set(CARD.findall(json.dumps(event.to_json())))


def play_out(rules: Rules, seed: str, each: int = 1) -> tuple[Match, list[PublicEvent], list[str]]:
    """A match of built-in bots, the feed updated every ``each`` plays; the leaks seen, if any."""
    match = Match(rules, seed)
    bots = [make_bot("greedy" if s % 2 else "random", f"{seed}/{s}") for s in range(rules.players)]
    feed = PublicFeed(rules)
    leaks: list[str] = []
    plays = 0
    feed.update(match)
    while not match.is_over:
        match.play(bots[match.turn].choose(match.observation(match.turn)))
        plays += 1
        if plays % each == 0 or match.is_over:
            secret = hidden(match) if not match.is_over else set()
            for event in feed.update(match):
                # the same 52 cards are dealt again each deal: what is hidden is the deal in play's
                about_now = event.data.get("deal") == len(match.deals) and not match.is_over
                if about_now and (seen := named(event) & secret):
                    leaks.append(f"event {event.id} ({event.kind}) names hidden {sorted(seen)}")
                if event.kind == "hands" and not match.is_over:
                    assert event.data["deal"] < len(match.deals), "a deal's hands shown before it ended"
    return match, feed.events, leaks


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_no_hidden_card_reaches_a_spectator(preset: str, players: int) -> None:
    rules = Rules.preset(preset, players=players).with_overrides({"target": 41})
    match, events, leaks = play_out(rules, f"leak/{preset}/{players}")
    assert not leaks, leaks[:5]
    kinds = [e.kind for e in events]
    assert kinds[0] == "deal" and kinds[-1] == "over"
    assert kinds.count("deal") == kinds.count("deal-over") == kinds.count("hands") == len(match.deals)
    assert kinds.count("play") == sum(len(d.plays) for d in match.deals)
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert events[-1].data["scores"] == list(match.totals)


@pytest.mark.parametrize("each", [2, 7, 1000])
def test_a_feed_updated_now_and_then_tells_the_same_events(each: int) -> None:
    rules = Rules.preset("tablic", players=3).with_overrides({"target": 41})
    _, every_play, _ = play_out(rules, "same")
    _, now_and_then, leaks = play_out(rules, "same", each)
    assert [e.to_json() for e in now_and_then] == [e.to_json() for e in every_play]
    assert not leaks


def test_each_position_is_what_every_seat_sees_of_the_table() -> None:
    rules = Rules.preset("tablic-pagat", players=4)
    match = Match(rules, "truth")
    feed = PublicFeed(rules)
    rng = random.Random(5)
    checked = 0
    feed.update(match)
    while not match.is_over:
        match.play(rng.choice(match.legal_plays()))
        events = [e for e in feed.update(match) if e.kind in ("play", "round", "deal")]
        if match.is_over or not events:
            continue
        last = events[-1].data
        for seat in range(rules.players):
            obs = match.observation(seat)
            assert last["table"] == card_names(obs.table)
            assert last["hand_counts"] == list(obs.hand_counts)
            assert last["stock_count"] == obs.stock_count
            assert last["to_move"] == obs.turn
            assert last["scores"] == list(obs.scores)
        checked += 1
    assert checked > 100


def test_hands_are_revealed_deals_later_when_asked() -> None:
    rules = Rules.preset("tablic").with_overrides({"deals": 4})
    match = Match(rules, "delay")
    feed = PublicFeed(rules, reveal_after=2)
    rng = random.Random(1)
    shown: dict[int, int] = {}
    while not match.is_over:
        match.play(rng.choice(match.legal_plays()))
        for event in feed.update(match):
            if event.kind == "hands":
                shown[event.data["deal"]] = len(match.deals)
    # deal 0's hands once deal 2 is over (3 deals finished), deal 1's after deal 3; the rest at the end
    assert shown == {0: 3, 1: 4, 2: 4, 3: 4}


def test_a_deal_cut_short_by_a_forfeit_shows_only_the_cards_played() -> None:
    rules = Rules.preset("tablic")
    match = Match(rules, "forfeit")
    feed = PublicFeed(rules)
    for _ in range(5):
        match.play(match.legal_plays()[0])
    unplayed = hidden(match)
    match.forfeit(1)
    events = feed.update(match)
    over = next(e for e in events if e.kind == "deal-over")
    assert over.data["complete"] is False
    hands = next(e for e in events if e.kind == "hands")
    assert not named(hands) & unplayed
    assert events[-1].kind == "over" and events[-1].data["reason"] == "forfeit"


def test_a_negative_delay_is_refused() -> None:
    with pytest.raises(ValueError, match="reveal_after must be 0 or more"):
        PublicFeed(Rules.preset("tablic"), reveal_after=-1)
