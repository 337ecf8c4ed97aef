"""The state of one deal: hands, table, piles, and the plays that change them.

:meth:`DealState.legal_plays` is the complete, canonical list of legal plays for
the seat to move: cards in ascending order and, for each card, the trail first
(when legal) and then its capture sets in the order of
:mod:`engine_service.rules.captures`. :meth:`DealState.play` checks a play
against that list and raises :class:`IllegalPlayError` naming the play and the
position; :meth:`DealState.push` is the unchecked fast path for search and
simulation (it trusts the caller).

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.shuffle import deal_layout
>>> deal = DealState(Rules.preset("tablic"), deal_layout(Rules.preset("tablic"), "demo", 0))
>>> deal.turn, [str(p) for p in deal.legal_plays()][:3]
(1, ['AH', 'AH:AC', '3S'])
"""

from __future__ import annotations

from dataclasses import dataclass

from .captures import CaptureFinder
from .cards import CARDS, JACK, format_cards, iter_mask
from .errors import GameOverError, IllegalPlayError
from .play import Play
from .rules import Rules
from .shuffle import DealLayout


@dataclass(frozen=True)
class PlayRecord:
    """One play as it happened: who, what, the bonus it scored, whether automatic."""

    seat: int
    card: int
    mask: int
    bonus: int
    auto: bool = False

    @property
    def play(self) -> Play:
        return Play(CARDS[self.card], self.mask)


_FINDERS: dict[Rules, CaptureFinder] = {}


def finder_for(rules: Rules) -> CaptureFinder:
    """The shared (cached) capture finder of a rule set."""
    finder = _FINDERS.get(rules)
    if finder is None:
        if len(_FINDERS) > 64:
            _FINDERS.clear()
        finder = _FINDERS[rules] = CaptureFinder(rules)
    return finder


def plays_for_card(rules: Rules, table: int, card: int, finder: CaptureFinder | None = None) -> list[Play]:
    """Legal plays of ``card`` on ``table``: trail (when legal) first, then captures.

    A sweeping Jack takes the whole table (a trail on an empty one); a card that
    can capture may still be trailed only under ``capture_optional``.

    >>> from engine_service.rules.cards import mask_of, parse_cards, Card
    >>> table = mask_of(parse_cards("2H 5S 7C"))
    >>> [str(p) for p in plays_for_card(Rules.preset("tablic"), table, Card.parse("7D"))]
    ['7D', '7D:7C', '7D:2H,5S']
    """
    c = CARDS[card]
    if card >> 2 == JACK and rules.jack_sweeps:
        return [Play(c, table)]
    masks = (finder or finder_for(rules)).capture_masks(table, card)
    if not masks:
        return [Play(c, 0)]
    plays = [Play(c, 0)] if rules.capture_optional else []
    plays.extend([Play(c, mask) for mask in masks])
    return plays


class DealState:
    """One deal in progress. Mutable; :meth:`copy` is cheap (a few ints and lists)."""

    __slots__ = (
        "_legal",
        "bonus",
        "finder",
        "hands",
        "last_capturer",
        "layout",
        "leftover",
        "leftover_team",
        "over",
        "piles",
        "plays",
        "round",
        "rules",
        "tablas",
        "table",
        "turn",
    )

    def __init__(self, rules: Rules, layout: DealLayout) -> None:
        self.rules = rules
        self.layout = layout
        self.finder = finder_for(rules)
        self.hands: list[int] = list(layout.rounds[0])
        self.table: int = layout.table
        teams = rules.team_count
        self.piles: list[int] = [0] * teams
        """Cards each team has captured (played cards included)."""
        self.bonus: list[int] = [0] * teams
        """Sweep and pişti points each team has earned this deal."""
        self.tablas: list[int] = [0] * teams
        self.last_capturer: int | None = None
        self.turn: int = (layout.dealer + 1) % rules.players
        self.round: int = 0
        self.plays: list[PlayRecord] = []
        self.leftover_team: int | None = None
        self.leftover: int = 0
        self.over: bool = False
        self._legal: tuple[Play, ...] | None = None
        """The legal plays of this position, once asked (every play clears it)."""

    def copy(self) -> DealState:
        other = DealState.__new__(DealState)
        for name in DealState.__slots__:
            setattr(other, name, getattr(self, name))
        other.hands = self.hands[:]
        other.piles = self.piles[:]
        other.bonus = self.bonus[:]
        other.tablas = self.tablas[:]
        other.plays = self.plays[:]
        return other

    # -------------------------------------------------------------- queries

    def plays_for_card(self, card: int) -> list[Play]:
        """Legal plays of one card (in the hand or not) on the current table."""
        return plays_for_card(self.rules, self.table, card, self.finder)

    def legal_plays(self) -> list[Play]:
        """Every legal play of the seat to move, canonical order."""
        return list(self.legal_tuple())

    def legal_tuple(self) -> tuple[Play, ...]:
        """:meth:`legal_plays`, computed once per position and shared: do not change it."""
        if self._legal is None:
            out: list[Play] = []
            if not self.over:
                rules, table, finder = self.rules, self.table, self.finder
                for card in iter_mask(self.hands[self.turn]):
                    out.extend(plays_for_card(rules, table, card, finder))
            self._legal = tuple(out)
        return self._legal

    def is_legal(self, play: Play) -> bool:
        if self.over or not self.hands[self.turn] >> play.card & 1:
            return False
        return play in self.legal_tuple()

    def timeout_play(self) -> Play:
        """The speed variant's automatic play: the lowest card, trailed if legal.

        If the rules force that card to capture, its first legal capture is
        played instead (the canonical first play of the lowest card).
        """
        if self.over:
            raise GameOverError("the deal is over; nobody is to play")
        lowest = next(iter_mask(self.hands[self.turn]))
        return self.plays_for_card(lowest)[0]

    @property
    def rounds_left(self) -> int:
        """Rounds still to be dealt after the current one."""
        return len(self.layout.rounds) - 1 - self.round

    @property
    def is_last_play(self) -> bool:
        """Whether the next play is the deal's very last (no tabla then, unless ``last_play_tabla``)."""
        return not self.rounds_left and sum(h.bit_count() for h in self.hands) == 1

    def describe(self) -> str:
        """The position in words, for error messages."""
        return (
            f"seat {self.turn} to play, hand [{format_cards(self.hands[self.turn])}], "
            f"table [{format_cards(self.table)}], play {len(self.plays) + 1} of the deal"
        )

    # -------------------------------------------------------------- actions

    def play(self, play: Play, auto: bool = False) -> PlayRecord:
        """Apply a play after checking it; raise :class:`IllegalPlayError` if illegal."""
        if self.over:
            raise GameOverError(f"the deal is over; {play} cannot be played")
        if not self.hands[self.turn] >> play.card & 1:
            raise IllegalPlayError(f"illegal play {play}: {play.card} is not in the hand ({self.describe()})")
        if play not in self.legal_tuple():
            legal = ", ".join(str(p) for p in self.plays_for_card(play.card))
            raise IllegalPlayError(
                f"illegal play {play}: {play.card} may be played only as {legal} ({self.describe()})"
            )
        return self.push(play.card, play.mask, auto)

    def push(self, card: int, mask: int, auto: bool = False) -> PlayRecord:
        """Apply a play without checking it (fast path); the caller guarantees legality."""
        rules = self.rules
        seat = self.turn
        self._legal = None
        team = rules.team_of(seat) if rules.partnerships else seat
        bit = 1 << card
        self.hands[seat] &= ~bit
        n = rules.players
        bonus = 0
        if mask:
            before = self.table
            self.table = before & ~mask
            self.piles[team] |= mask | bit
            self.last_capturer = seat
            if not self.table:
                last = not self.rounds_left and not any(self.hands)
                if not last or rules.last_play_tabla:
                    bonus = sweep_bonus(rules, card, before)
                    self.tablas[team] += 1
                    self.bonus[team] += bonus
        else:
            self.table |= bit
        record = PlayRecord(seat, card, mask, bonus, auto)
        self.plays.append(record)
        self.turn = (seat + 1) % n
        if not self.hands[self.turn] and not any(self.hands):
            if self.rounds_left:
                self.round += 1
                self.hands = list(self.layout.rounds[self.round])
            else:
                self._finish()
        return record

    def _finish(self) -> None:
        rules = self.rules
        self.over = True
        if self.table:
            # docs/rules.md leftover_to: nobody takes the leftover if no one captured.
            if self.last_capturer is None:
                self.leftover_team = None
            elif rules.leftover_to == "dealer":
                self.leftover_team = rules.team_of(self.layout.dealer)
            else:
                self.leftover_team = rules.team_of(self.last_capturer)
            self.leftover = self.table
            if self.leftover_team is not None:
                self.piles[self.leftover_team] |= self.table
                self.table = 0

    # -------------------------------------------------------------- scoring

    def score(self) -> list[int]:
        """Points per team for this deal (call when :attr:`over`)."""
        return score_piles(self.rules, self.piles, self.bonus)


def sweep_bonus(rules: Rules, card: int, table_before: int) -> int:
    """Points for clearing ``table_before`` with ``card``: tabla plus pişti.

    The caller decides whether the play counts as a sweep at all (the last play
    of a deal does not unless ``last_play_tabla``).
    """
    rank = card >> 2
    bonus = 0
    lone_same_rank = table_before.bit_count() == 1 and table_before.bit_length() - 1 >> 2 == rank
    if rules.pisti_bonus and lone_same_rank:
        bonus += rules.pisti_bonus * (2 if rank == JACK else 1)
    if rank == JACK and rules.jack_sweeps:
        policy = rules.jack_sweep_tabla
        if policy == "one" or (policy == "same" and rules.tabla_points != "none"):
            bonus += 1
        return bonus
    points = rules.tabla_points
    if points == "fixed":
        return bonus + 1
    if points == "none":
        return bonus
    for cap in finder_for(rules).captures(table_before, card):
        if cap.mask == table_before:
            return bonus + (cap.value if points == "card_value" else cap.total)
    raise IllegalPlayError(f"{CARDS[card]} cannot capture the whole table [{format_cards(table_before)}]")


def score_piles(rules: Rules, piles: list[int], bonus: list[int]) -> list[int]:
    """Deal points per team from captured piles and sweep bonuses (docs/rules.md scoring)."""
    score = list(bonus)
    table = rules._card_points_table
    for t, pile in enumerate(piles):
        score[t] += sum(table[c] for c in iter_mask(pile))
    if rules.most_cards:
        _award_most(score, [p.bit_count() for p in piles], rules.most_cards, rules.most_cards_tie == "all_tied")
    for suit, pts in rules.most_suit:
        suit_mask = _SUIT_MASKS[suit]
        _award_most(score, [(p & suit_mask).bit_count() for p in piles], pts, False)
    return score


def _award_most(score: list[int], counts: list[int], points: int, ties_score: bool) -> None:
    top = max(counts)
    leaders = [t for t, c in enumerate(counts) if c == top]
    if len(leaders) == 1 or ties_score:
        for t in leaders:
            score[t] += points


_SUIT_MASKS = tuple(sum(1 << (r * 4 + s) for r in range(13)) for s in range(4))
