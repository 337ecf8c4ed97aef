"""Possible worlds: where the cards a seat has not seen may be, drawn as likely as the shuffle makes them.

A *world* completes one seat's :class:`~engine_service.rules.observation.Observation`:
the hand every other seat holds now and the hands of every round still to be
dealt (the stock, dealt round by round in dealing order; the order of cards
inside one hand does not matter to play, so a hand is a set). With a world a bot
can run the engine on a whole deal (:meth:`WorldSampler.state`).

What the seat has seen, and what it infers from it:

- its own hand, the table, every play of the deal (who played which card and
  what it took) and both piles; so it knows every hand of a finished round, the
  cards each seat played from its current hand, and the deal's first table
  (``(table | piles) & ~played``);
- how many cards each seat holds and how many the stock holds;
- nothing of a partner's hand (partners see no more of each other than of
  opponents); at the last round there is no stock and a world is only the
  other hands.

The worlds are drawn from the exact distribution of the shuffle given those
observations: every shuffled deck that deals what the seat saw is equally likely
(the plays themselves are taken as telling nothing more: the sampler does not
model how the other bots choose). Under ``initial_table_jacks = keep`` that is
the uniform distribution over the consistent worlds. Under ``replace`` a Jack
drawn for the table went to the bottom of the stock, so a world whose
last-dealt hands hold Jacks is dealt by more decks: with ``t`` table cards and
``s`` Jacks sent to the bottom, a world is dealt by ``C(s + t - 1, s) * q_s``
times as many decks as a world under ``keep``, where ``q_s`` is the chance that
the last ``s`` cards of the stock, in a random order inside each hand, are
Jacks; its weight is the sum over ``s``. Only the hidden Jacks in the
last-dealt hands change that weight, so the sampler first draws how many hidden
Jacks each of those hands holds (exactly, from a short list of cases), then
deals the rest uniformly.

>>> from engine_service.rules.match import Match
>>> from engine_service.rules.rules import Rules
>>> m = Match(Rules.preset("tablic"), seed="demo")
>>> worlds = possible_worlds(m.observation(0), 3, seed=7)
>>> [w.hands[1].bit_count() for w in worlds], worlds == possible_worlds(m.observation(0), 3, seed=7)
([6, 6, 6], True)
"""

from __future__ import annotations

import random
from array import array
from dataclasses import dataclass
from itertools import accumulate
from math import comb, perm

from .cards import CARDS, FULL_DECK, JACK, format_cards, iter_mask
from .deal import DealState
from .errors import IllegalPositionError, TablanetteError
from .observation import Observation
from .play import Play
from .shuffle import DealLayout, round_sizes

_JACKS = sum(1 << (JACK * 4 + s) for s in range(4))
_BIT = [1 << c for c in range(52)]


@dataclass(frozen=True)
class World:
    """One completion of an observation: every hand now, and the hands of the rounds still to come."""

    hands: tuple[int, ...]
    """Each seat's hand now, as a mask (the observing seat's own as it is)."""
    rounds: tuple[tuple[int, ...], ...]
    """The hands of each round still to be dealt, by seat (empty at the last round)."""

    @property
    def stock(self) -> int:
        """The cards still to be dealt, as a mask."""
        out = 0
        for hands in self.rounds:
            for hand in hands:
                out |= hand
        return out


@dataclass(frozen=True)
class _Slot:
    """A hand with hidden cards in it: its round, its seat, how many cards are hidden."""

    round: int
    seat: int
    hidden: int


class WorldSampler:
    """Checks one observation once, then draws worlds for it (:meth:`sample`) and plays them (:meth:`state`)."""

    def __init__(self, obs: Observation) -> None:
        self.obs = obs
        rules = obs.rules
        self.sizes = sizes = round_sizes(rules)
        _check_counts(obs, sizes)
        self.known = _known_hands(obs, sizes)
        """``known[r][s]``: the cards seen in seat ``s``'s hand of round ``r`` (played, or the seat's own)."""
        self.first_table = _first_table(obs)
        n = rules.players
        order = [(obs.dealer + 1 + k) % n for k in range(n)]
        self.slots = [_Slot(obs.round, s, obs.hand_counts[s]) for s in order if s != obs.seat]
        self.slots += [_Slot(r, s, sizes[r]) for r in range(obs.round + 1, len(sizes)) for s in order]
        self.ends = list(accumulate(slot.hidden for slot in self.slots))
        hidden = list(iter_mask(obs.unseen))
        self.jacks = [c for c in hidden if c >> 2 == JACK]
        self.others = [c for c in hidden if c >> 2 != JACK]
        self.plan = _JackPlan(self, order) if _replaces(obs, len(sizes)) else None
        self.base = self._replay(self.fill(hidden))

    # -------------------------------------------------------------- drawing

    def sample(self, rng: random.Random) -> World:
        """One world, drawn from the shuffle's distribution given the observation."""
        if self.plan is None:
            cards = _shuffled(rng, self.jacks + self.others)
        else:
            cards = self.plan.deal(rng, self.jacks, self.others)
        return self.fill(cards)

    def fill(self, cards: list[int]) -> World:
        """The world that deals ``cards`` (one per hidden place, hand after hand) into :attr:`slots`."""
        obs = self.obs
        hands = [0] * obs.rules.players
        hands[obs.seat] = obs.hand
        future = [[0] * obs.rules.players for _ in range(len(self.sizes) - obs.round - 1)]
        start = 0
        for slot, end in zip(self.slots, self.ends, strict=True):
            mask = sum(map(_BIT.__getitem__, cards[start:end]))
            start = end
            if slot.round == obs.round:
                hands[slot.seat] = mask
            else:
                future[slot.round - obs.round - 1][slot.seat] = mask
        return World(tuple(hands), tuple(tuple(h) for h in future))

    # -------------------------------------------------------------- playing

    def layout(self, world: World) -> DealLayout:
        """The whole deal as ``world`` completes it: the first table and every round's hands."""
        obs = self.obs
        rounds = [tuple(hands) for hands in self.known[: obs.round]]
        rounds.append(tuple(k | h for k, h in zip(self.known[obs.round], world.hands, strict=True)))
        rounds.extend(world.rounds)
        return DealLayout(obs.dealer, self.first_table, tuple(rounds))

    def state(self, world: World) -> DealState:
        """The deal in progress as ``world`` has it: the engine's own state, ready to play on."""
        state = self.base.copy()
        state.layout = self.layout(world)
        state.hands = list(world.hands)
        state._legal = None
        return state

    def _replay(self, world: World) -> DealState:
        """Play the observation's plays again on one world; any mismatch means no deal reaches it."""
        obs = self.obs
        state = DealState(obs.rules, self.layout(world))
        for i, record in enumerate(obs.plays):
            where = f"play {i + 1} of the deal (seat {record.seat} plays {Play(CARDS[record.card], record.mask)})"
            if state.over or state.turn != record.seat:
                raise IllegalPositionError(f"{where}: it was not seat {record.seat}'s turn")
            play = Play(CARDS[record.card], record.mask)
            if not state.hands[record.seat] >> record.card & 1 or play not in state.plays_for_card(record.card):
                legal = ", ".join(str(p) for p in state.plays_for_card(record.card))
                raise IllegalPositionError(f"{where} cannot have been made: the card may be played only as {legal}")
            done = state.push(record.card, record.mask, record.auto)
            if done.bonus != record.bonus:
                raise IllegalPositionError(f"{where} scored {done.bonus}, the observation says {record.bonus}")
        seen = (state.table, tuple(state.piles), tuple(state.bonus))
        if seen != (obs.table, tuple(obs.piles), tuple(obs.deal_bonus)):
            raise IllegalPositionError(
                f"the plays leave table [{format_cards(state.table)}] and piles "
                f"{[format_cards(p) for p in state.piles]}, bonus {state.bonus}; the observation shows "
                f"[{format_cards(obs.table)}], {[format_cards(p) for p in obs.piles]}, {list(obs.deal_bonus)}"
            )
        if not state.over and state.turn != obs.turn:
            raise IllegalPositionError(f"seat {state.turn} is to play after these plays, not seat {obs.turn}")
        return state


def possible_worlds(obs: Observation, k: int, seed: int) -> list[World]:
    """``k`` worlds for ``obs`` drawn with ``random.Random(seed)``: same observation and seed, same worlds."""
    if k < 0:
        raise TablanetteError(f"k = {k}: ask for 0 or more worlds")
    sampler = WorldSampler(obs)
    rng = random.Random(seed)
    return [sampler.sample(rng) for _ in range(k)]


def _shuffled(rng: random.Random, cards: list[int]) -> list[int]:
    """``cards`` in a uniformly random order: sorted on 64-bit random keys drawn in one call (ties: ~n²/2⁶⁵)."""
    n = len(cards)
    keys = array("Q", rng.getrandbits(64 * n).to_bytes(8 * n, "little")) if n else array("Q")
    return [cards[i] for i in sorted(range(n), key=keys.__getitem__)]


# ------------------------------------------------------------------ checks


def _check_counts(obs: Observation, sizes: list[int]) -> None:
    """Raise :class:`IllegalPositionError` unless the observation's counts fit a deal of these rules."""
    rules, n = obs.rules, obs.rules.players
    if not 0 <= obs.seat < n or not 0 <= obs.dealer < n or not 0 <= obs.turn < n:
        raise IllegalPositionError(f"seat {obs.seat}, dealer {obs.dealer}, turn {obs.turn}: seats are 0..{n - 1}")
    if not 0 <= obs.round < len(sizes) or obs.rounds_left != len(sizes) - 1 - obs.round:
        raise IllegalPositionError(
            f"round {obs.round} with {obs.rounds_left} rounds left: these rules deal {len(sizes)} rounds"
        )
    if len(obs.hand_counts) != n or len(obs.piles) != rules.team_count or len(obs.deal_bonus) != rules.team_count:
        raise IllegalPositionError(f"give a hand count per seat ({n}) and a pile and a bonus per team")
    mine = obs.hand_counts[obs.seat]
    if any(not 0 <= c <= sizes[obs.round] for c in obs.hand_counts) or mine != obs.hand.bit_count():
        raise IllegalPositionError(
            f"hand counts {list(obs.hand_counts)}: each is 0..{sizes[obs.round]} and seat {obs.seat}'s "
            f"is its hand's {obs.hand.bit_count()} cards"
        )
    seen = 0
    for mask in (obs.hand, obs.table, *obs.piles):
        if mask & seen or mask & ~FULL_DECK:
            raise IllegalPositionError(f"[{format_cards(mask & seen)}] seen twice (hand, table, piles), or a bad mask")
        seen |= mask
    played = sum(n * size for size in sizes[: obs.round]) + n * sizes[obs.round] - sum(obs.hand_counts)
    if len(obs.plays) != played:
        raise IllegalPositionError(
            f"{len(obs.plays)} plays, but round {obs.round} with hand counts {list(obs.hand_counts)} means {played}"
        )
    stock = n * sum(sizes[obs.round + 1 :])
    if obs.stock_count != stock:
        raise IllegalPositionError(
            f"{obs.unseen.bit_count()} unseen cards: the other hands hold "
            f"{sum(obs.hand_counts) - obs.hand.bit_count()} and the stock {stock}, which makes "
            f"{sum(obs.hand_counts) - obs.hand.bit_count() + stock}"
        )


def _union(masks: list[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


def _known_hands(obs: Observation, sizes: list[int]) -> list[list[int]]:
    """The cards seen in each seat's hand of rounds ``0..obs.round``: what it played, and the seat's own hand."""
    n = obs.rules.players
    known = [[0] * n for _ in range(obs.round + 1)]
    bounds = list(accumulate(n * size for size in sizes))
    r = 0
    for i, record in enumerate(obs.plays):
        while i >= bounds[r]:
            r += 1
        if not 0 <= record.seat < n or not 0 <= record.card < 52:
            raise IllegalPositionError(f"play {i + 1}: seat {record.seat}, card {record.card} out of range")
        known[r][record.seat] |= _BIT[record.card]
    known[obs.round][obs.seat] |= obs.hand
    return known


def _first_table(obs: Observation) -> int:
    """The deal's first table: every card on the table or in a pile that nobody played."""
    played = 0
    for record in obs.plays:
        if played >> record.card & 1:
            raise IllegalPositionError(f"{CARDS[record.card]} is played twice in the deal")
        played |= _BIT[record.card]
    seen = _union([obs.table, *obs.piles])
    if played & ~seen:
        raise IllegalPositionError(f"played cards [{format_cards(played & ~seen)}] are neither on the table nor taken")
    first = seen & ~played
    if first.bit_count() != obs.rules.table_size:
        raise IllegalPositionError(
            f"the table and piles hold {first.bit_count()} cards nobody played "
            f"([{format_cards(first)}]); the deal's first table has {obs.rules.table_size}"
        )
    return first


def _replaces(obs: Observation, rounds: int) -> bool:
    """Whether Jacks drawn for the table went to the bottom of the stock in this deal."""
    rules = obs.rules
    return rules.initial_table_jacks == "replace" and rules.table_size > 0 and rounds > 1


# ------------------------------------------------------------------ replace


class _JackPlan:
    """Under ``replace``: how many hidden Jacks each of the last-dealt hands holds, drawn exactly.

    The tail is the stock's last hands, last first, until they hold 4 cards (all
    the Jacks there are). A case gives each tail hand a number of hidden Jacks;
    its chance is the uniform one (how many ways to place the Jacks) times the
    deck-count weight of the module doc.
    """

    def __init__(self, sampler: WorldSampler, order: list[int]) -> None:
        obs = sampler.obs
        if sampler.first_table & _JACKS:
            raise IllegalPositionError(
                f"a Jack on the deal's first table ([{format_cards(sampler.first_table)}]) under "
                "initial_table_jacks = replace: no deal of these rules leaves one there"
            )
        last = len(sampler.sizes) - 1
        tail: list[tuple[int, int, int]] = []  # (slot index or -1, hand size, known Jacks)
        index = {(slot.round, slot.seat): i for i, slot in enumerate(sampler.slots)}
        hands = [(r, s) for r in range(last, 0, -1) for s in reversed(order)]  # the stock's hands, last first
        for r, s in hands:
            if sum(size for _, size, _ in tail) >= 4:
                break
            known = sampler.known[r][s] if r <= obs.round else 0
            tail.append((index.get((r, s), -1), sampler.sizes[r], (known & _JACKS).bit_count()))
        self.tail = [(i, sampler.slots[i].hidden if i >= 0 else 0) for i, _, _ in tail]
        self.slots = sampler.slots
        self.ends = sampler.ends
        places = sampler.ends[-1] if sampler.ends else 0
        hidden = [h for _, h in self.tail]
        cases, weights = _cases(tail, hidden, len(sampler.jacks), places, obs.rules.table_size)
        if not cases:
            raise IllegalPositionError("no deal under initial_table_jacks = replace reaches this observation")
        self.cases = cases
        self.cum = list(accumulate(weights))

    def deal(self, rng: random.Random, jacks: list[int], others: list[int]) -> list[int]:
        """The hidden cards, one per hidden place, with the tail hands' Jacks as one drawn case says."""
        case = self.cases[rng.choices(range(len(self.cases)), cum_weights=self.cum)[0]]
        jacks, others = _shuffled(rng, jacks), _shuffled(rng, others)
        tail_cards: dict[int, list[int]] = {}
        for (i, hidden), x in zip(self.tail, case, strict=True):
            if i >= 0:
                tail_cards[i] = [jacks.pop() for _ in range(x)] + [others.pop() for _ in range(hidden - x)]
        spots = set(rng.sample(range(len(jacks) + len(others)), len(jacks)))  # where the other Jacks go
        jack, other = iter(jacks), iter(others)
        rest = [next(jack) if p in spots else next(other) for p in range(len(jacks) + len(others))]
        cards: list[int] = []
        for i, slot in enumerate(self.slots):
            if i in tail_cards:
                cards.extend(tail_cards[i])
            else:
                cards.extend(rest[len(rest) - slot.hidden :])
                del rest[len(rest) - slot.hidden :]
        return cards


def _cases(
    tail: list[tuple[int, int, int]], hidden: list[int], jacks: int, places: int, t: int
) -> tuple[list[tuple[int, ...]], list[float]]:
    """Every way to put hidden Jacks into the tail hands, with its chance (unnormalised)."""
    rest_places = places - sum(hidden)
    cases: list[tuple[int, ...]] = [()]
    for h in hidden:
        cases = [(*c, x) for c in cases for x in range(min(h, jacks - sum(c)) + 1)]
    out, weights = [], []
    for case in cases:
        left = jacks - sum(case)
        if left > rest_places:
            continue
        ways = comb(rest_places, left)
        for h, x in zip(hidden, case, strict=True):
            ways *= comb(h, x)
        w = _deck_weight([(size, known + x) for (_, size, known), x in zip(tail, case, strict=True)], t)
        if ways and w:
            out.append(case)
            weights.append(ways * w)
    return out, weights


def _deck_weight(tail: list[tuple[int, int]], t: int) -> float:
    """Sum over ``s`` of ``C(s + t - 1, s) * q_s``: tail hands (size, Jacks in it), last dealt first."""
    total = 0.0
    for s in range(5):
        q, left = 1.0, s
        for size, jacks in tail:
            u = min(size, left)
            q *= perm(jacks, u) / perm(size, u)
            left -= u
        if left:
            break
        total += comb(s + t - 1, s) * q
    return total
