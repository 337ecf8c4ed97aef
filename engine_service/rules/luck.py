"""Luck and skill in a finished match: the deal's share of the score, taken out without bias.

The arena knows every card, so it can say, at each *chance event* of a match,
how much the cards that came helped each team compared with the cards that
could have come. The chance events are the deal of the table and the first
hands, and every later deal of hands from the stock. At each one the
*correction* for a team is

    SCALE * (V(position after the event) - mean of V(position after a sampled event), K samples)

where V is :func:`~engine_service.rules.value.value_unchecked` (the deal points a
team can expect from a position) and each sample deals the same cards that
could have been dealt, uniformly: for the first deal a freshly shuffled deck
dealt by the engine's own procedure, for a later round the cards not yet seen
(the stock and the other hands) shuffled and dealt again. A team's **luck** is
the sum of its corrections, as a margin; its **skill** is its raw margin minus
its luck.

Why it is unbiased, for any bots: given everything before an event, the real
cards dealt and each sample are draws from the same distribution (a bot sees
neither the stock nor the other hands, so its plays carry no information about
them). So ``E[V(real)] = E[V(sample)]`` and every correction has mean zero,
whatever V is and whatever the bots do; their plays add no correction at all.
The sum of the corrections has mean zero too (a match stops after a bounded
number of deals). Skill is therefore the raw margin with mean-zero noise
removed: on average exactly the raw margin, and with less spread the better V
predicts the score.

Each difference of values counts as luck only in part, :func:`scale_for` of it
(:data:`SCALE`, about 3/4, at the arena's 8 samples), for two reasons. V's
play-out overrates a deal: a hand V rates three points above the average one
ends, on average, about two and a half points better (the other side takes back
part of what a strong hand sets up, which a play-out of one round does not see):
:data:`V_FACTOR`. And the mean of K samples is itself a draw, as spread as V
over K and unrelated to the score, so a correction's spread is (K+1)/K times what
exact means would give: the best constant shrinks by K/(K+1). Any constant keeps
each correction's mean at zero, so the estimator stays unbiased; this one is
near the constant that leaves skill the least spread. ``python bench/rating.py
--luck N`` measures the best constant again on its own games and prints it
beside the arena's, so it can be rebuilt here rather than taken on trust: on
1,500 units of the close pair at 8 samples it was 0.71 to 0.80 (two and three
seats, independent and mirrored deals), on the bench's own 1,000 units 0.73 to
0.78. (A one-off run over 800 matches of each preset, not kept as a script,
gave 0.72 to 0.82 at two seats, 0.77 at three and 0.61 at four.)

The margin of a team is its points minus the mean of the other teams' points
(for two teams, the usual difference); the same map turns corrections into luck.
The samples come from a generator seeded by a *sampling seed* (by default the
record's deal seed), the deal and the round, so the same record gives the same
numbers, and the two games of a mirrored pair share their first-deal samples.
The arena keys the sampling seed with a league's secret (``store.deal_seeds``):
a bot that knew the samples could steer its plays towards positions its real
cards rate well or badly against them.

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.match import Match
>>> m = Match(Rules.preset("tablic", target=20), seed="doc")
>>> while not m.is_over:
...     _ = m.play(m.legal_plays()[0])
>>> luck = luck_of_match(m, "doc")
>>> all(abs(r - (lk + s)) < 1e-9 for r, lk, s in zip(luck.raw, luck.luck, luck.skill))
True
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .deal import DealState
from .errors import LuckError, RecordError
from .match import FinishedDeal, Match
from .record import verify_record
from .record_schema import GameRecord
from .rules import Rules
from .shuffle import layout_of_deck
from .stock import StockSampler
from .value import value_unchecked

DEFAULT_SAMPLES = 8
"""Sampled outcomes per chance event (the arena's setting; any K >= 1 is unbiased)."""

V_FACTOR = 0.85
"""How much of a difference in V a deal's score keeps, on average (see the module doc)."""


def scale_for(samples: int) -> float:
    """What each difference of values counts as luck with ``samples`` samples: ``V_FACTOR * K / (K + 1)``,
    about the constant that leaves skill the least spread (any constant is unbiased)."""
    return V_FACTOR * samples / (samples + 1)


SCALE = scale_for(DEFAULT_SAMPLES)
"""The arena's scale: :func:`scale_for` its :data:`DEFAULT_SAMPLES` (0.756)."""

NORMAL_ENDS = ("target", "deals")


@dataclass(frozen=True)
class LuckEvent:
    """One chance event: the deal, the round dealt (0: the table and the first hands), the correction
    per team (deal points), and each team's luck margin so far (this event included)."""

    deal: int
    round: int
    correction: tuple[float, ...]
    luck: tuple[float, ...]


@dataclass(frozen=True)
class MatchLuck:
    """Luck and skill of one finished match, per team (``teams[t]`` lists team ``t``'s seats).

    ``raw``, ``luck`` and ``skill`` are margins in match points: a team's value minus
    the mean of the other teams'; ``raw = luck + skill`` for every team.
    """

    record_id: str
    teams: tuple[tuple[int, ...], ...]
    points: tuple[int, ...]
    raw: tuple[float, ...]
    luck: tuple[float, ...]
    skill: tuple[float, ...]
    events: tuple[LuckEvent, ...]
    samples: int
    scale: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (numbers rounded to 1/1000 of a point)."""
        return {
            "record_id": self.record_id,
            "teams": [list(t) for t in self.teams],
            "points": list(self.points),
            "raw": _rounded(self.raw),
            "luck": _rounded(self.luck),
            "skill": _rounded(self.skill),
            "samples": self.samples,
            "scale": self.scale,
            "events": [
                {"deal": e.deal, "round": e.round, "correction": _rounded(e.correction), "luck": _rounded(e.luck)}
                for e in self.events
            ],
        }


def _rounded(values: Sequence[float]) -> list[float]:
    return [round(v, 3) for v in values]


def margins(values: Sequence[float]) -> tuple[float, ...]:
    """Each team's value minus the mean of the others' (a difference for two teams)."""
    total, others = sum(values), len(values) - 1
    return tuple(v - (total - v) / others for v in values)


def luck_of_record(
    record: Mapping[str, Any] | GameRecord,
    samples: int = DEFAULT_SAMPLES,
    scale: float | None = None,
    sampling_seed: str | None = None,
) -> MatchLuck:
    """Luck and skill of a ``tablanette-record/1`` record (a dict or :class:`GameRecord`); ``samples``,
    ``scale`` and ``sampling_seed`` as for :func:`luck_of_match` (``scale=1``: as the arena counted luck
    before it had a scale).

    The record is re-verified first. Raises :class:`LuckError` for a record that does
    not verify, or that ended by a forfeit or abort (no correction is invented for those).
    """
    rid = str(record.get("id", "?")) if isinstance(record, Mapping) else "?"
    try:
        match = verify_record(record)
    except RecordError as exc:
        raise LuckError(f"no luck estimate: {exc}") from None
    return luck_of_match(match, rid, samples, scale, sampling_seed)


def luck_of_match(
    match: Match,
    record_id: str = "",
    samples: int = DEFAULT_SAMPLES,
    scale: float | None = None,
    sampling_seed: str | None = None,
) -> MatchLuck:
    """Luck and skill of a finished :class:`Match` (trusted: played or replayed by the engine); ``scale``
    is what each difference of values counts as luck (default :func:`scale_for` ``samples``; 1: whole);
    ``sampling_seed`` seeds the samples (default: the match's deal seed)."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise LuckError(f"samples must be a whole number >= 1, got {samples!r}")
    if scale is None:
        scale = scale_for(samples)
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 <= scale <= 1:
        raise LuckError(f"scale must be a number from 0 to 1, got {scale!r}")
    result = match.result
    if result is None:
        raise LuckError(f"record {record_id}: the match is not over")
    if result.reason not in NORMAL_ENDS:
        raise LuckError(
            f"record {record_id}: the match ended by {result.reason}; luck is estimated only for "
            "matches played to their end"
        )
    rules = match.rules
    total = [0.0] * rules.team_count
    events: list[LuckEvent] = []
    for k, deal in enumerate(match.deals):
        rng = random.Random(f"tablanette-luck/1|{sampling_seed or match.seed}|{k}")
        for rnd, difference in deal_corrections(rules, deal, rng, samples):
            correction = [scale * d for d in difference]
            total = [a + b for a, b in zip(total, correction, strict=True)]
            events.append(LuckEvent(k, rnd, tuple(correction), margins(total)))
    raw = margins([float(p) for p in match.totals])
    luck = margins(total)
    return MatchLuck(
        record_id,
        rules.teams,
        tuple(match.totals),
        raw,
        luck,
        tuple(r - lk for r, lk in zip(raw, luck, strict=True)),
        tuple(events),
        samples,
        scale,
    )


def deal_corrections(
    rules: Rules, deal: FinishedDeal, rng: random.Random, samples: int
) -> list[tuple[int, list[float]]]:
    """(round, V's difference per team: the correction before :data:`SCALE`) for each chance event of one
    played deal, in order."""
    state = DealState(rules, deal.layout)
    out = [(0, first_deal_correction(state, rng, samples))]
    for play in deal.plays:
        before = state.round
        state.push(play.card, play.mask)
        if state.round != before:
            out.append((state.round, redeal_correction(state, rng, samples)))
    if not state.over or tuple(state.score()) != deal.score:
        raise LuckError("a deal's plays do not replay to its recorded score")
    return out


def first_deal_correction(state: DealState, rng: random.Random, samples: int) -> list[float]:
    """V(the real table and first hands) minus the mean V of ``samples`` decks shuffled and dealt anew."""
    rules, dealer = state.rules, state.layout.dealer
    deck = list(range(52))
    baseline = [0.0] * rules.team_count
    for _ in range(samples):
        rng.shuffle(deck)
        value = value_unchecked(DealState(rules, layout_of_deck(rules, deck, dealer)))
        baseline = [a + b for a, b in zip(baseline, value, strict=True)]
    actual = value_unchecked(state)
    return [a - b / samples for a, b in zip(actual, baseline, strict=True)]


def redeal_correction(state: DealState, rng: random.Random, samples: int) -> list[float]:
    """V(the hands really dealt) minus the mean V of ``samples`` deals of the hidden stock.

    ``state`` is the position just after a new round's hands were dealt; each sample
    deals the stock as :class:`~engine_service.rules.stock.StockSampler` draws it,
    in the engine's order (from the dealer's left, a seat's cards together).
    """
    rules, layout = state.rules, state.layout
    sampler = StockSampler(rules, layout, state.round)
    size = state.hands[state.turn].bit_count()
    n = rules.players
    order = [(layout.dealer + 1 + k) % n for k in range(n)]
    baseline = [0.0] * rules.team_count
    for _ in range(samples):
        stock = sampler.sample(rng)
        sample = state.copy()
        hands = [0] * n
        for k, seat in enumerate(order):
            hands[seat] = _mask(stock[k * size : (k + 1) * size])
        sample.hands = hands
        value = value_unchecked(sample)
        baseline = [a + b for a, b in zip(baseline, value, strict=True)]
    actual = value_unchecked(state)
    return [a - b / samples for a, b in zip(actual, baseline, strict=True)]


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m
