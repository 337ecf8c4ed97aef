"""A match: deals until a side reaches the target (or a fixed number of deals).

The match owns the sequence of deals, the running totals and the result. The
deck of every deal comes from the seed (:mod:`engine_service.rules.shuffle`),
or from explicit layouts (a "what if the hidden cards were dealt otherwise"
twin, used to prove observations never depend on them).

>>> from engine_service.rules.rules import Rules
>>> m = Match(Rules.preset("tablic", target=20), seed="doc")
>>> while not m.is_over:
...     _ = m.play(m.legal_plays()[0])
>>> m.result.reason, len(m.deals) >= 1, max(m.totals) >= 20
('target', True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .deal import DealState, PlayRecord
from .errors import GameOverError
from .observation import Observation
from .play import Play
from .rules import Rules
from .shuffle import DealLayout, deal_layout

MAX_DEALS = 1000
"""A match that has not ended after this many deals is aborted (rules with no points)."""


@dataclass(frozen=True)
class MatchResult:
    """How a match ended: the winning team (``None`` for a draw) and why."""

    winner: int | None
    reason: str  # "target", "deals", "forfeit" or "aborted"
    forfeit_seat: int | None = None


@dataclass(frozen=True)
class FinishedDeal:
    """A deal that has been played out (or cut short by a forfeit)."""

    layout: DealLayout
    plays: tuple[PlayRecord, ...]
    leftover_team: int | None
    leftover: int
    score: tuple[int, ...]
    tablas: tuple[int, ...]
    complete: bool = True


class Match:
    """One match under ``rules`` with ``seed``; mutable, advanced by plays."""

    def __init__(self, rules: Rules, seed: str, layouts: Sequence[DealLayout] | None = None) -> None:
        self.rules = rules
        self.seed = seed
        self._layouts = layouts
        self.totals: list[int] = [0] * rules.team_count
        self.deals: list[FinishedDeal] = []
        self.result: MatchResult | None = None
        self.deal = DealState(rules, self._layout(0))
        self.choices: list[tuple[int, int]] | None = []
        """Each chosen (not automatic) play's index among its position's legal plays, and their number, in
        play order: what the compact record form stores (:func:`engine_service.rules.compact.encode_match`).
        None once an unchecked :meth:`push` made a play whose index was not looked up."""

    def _layout(self, index: int) -> DealLayout:
        if self._layouts is not None:
            if index >= len(self._layouts):
                raise GameOverError(f"the record holds no deal {index}")
            return self._layouts[index]
        return deal_layout(self.rules, self.seed, index)

    # -------------------------------------------------------------- queries

    @property
    def is_over(self) -> bool:
        return self.result is not None

    @property
    def turn(self) -> int:
        """The seat to play."""
        return self.deal.turn

    @property
    def deal_index(self) -> int:
        return len(self.deals)

    def legal_plays(self) -> list[Play]:
        return [] if self.result else self.deal.legal_plays()

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may see now; legal plays are filled in on its turn."""
        deal = self.deal
        mine = seat == deal.turn and not self.result
        return Observation(
            rules=self.rules,
            seat=seat,
            turn=deal.turn,
            deal_index=len(self.deals),
            dealer=deal.layout.dealer,
            round=deal.round,
            rounds_left=deal.rounds_left,
            hand=deal.hands[seat],
            table=deal.table,
            piles=tuple(deal.piles),
            hand_counts=tuple(h.bit_count() for h in deal.hands),
            plays=tuple(deal.plays),
            deal_bonus=tuple(deal.bonus),
            scores=tuple(self.totals),
            legal_plays=deal.legal_tuple() if mine else (),
        )

    # -------------------------------------------------------------- actions

    def play(self, play: Play, auto: bool = False) -> PlayRecord:
        """Checked play by the seat to move (raises :class:`IllegalPlayError`)."""
        self._check_running(play)
        legal = self.deal.legal_tuple()  # once a position: the check below reads the same
        record = self.deal.play(play, auto)
        if not auto and self.choices is not None:
            self.choices.append((legal.index(play), len(legal)))
        self._after_play()
        return record

    def push(self, play: Play, auto: bool = False) -> PlayRecord:
        """Unchecked fast path: the caller guarantees ``play`` is legal (its index is not kept: :attr:`choices`
        becomes None for a chosen play)."""
        if not auto:
            self.choices = None
        record = self.deal.push(play.card, play.mask, auto)
        self._after_play()
        return record

    def timeout_play(self) -> Play:
        """The play the engine makes for a seat that missed its deadline."""
        self._check_running("a timeout play")
        return self.deal.timeout_play()

    def forfeit(self, seat: int) -> None:
        """End the match: ``seat`` forfeits, the best other team wins."""
        self._check_running(f"a forfeit by seat {seat}")
        if not 0 <= seat < self.rules.players:
            raise ValueError(f"seat {seat} is not a seat of this match")
        if self.deal.plays and not self.deal.over:
            self._close_deal(complete=False)
        loser = self.rules.team_of(seat)
        others = [t for t in range(self.rules.team_count) if t != loser]
        best = max(self.totals[t] for t in others)
        leaders = [t for t in others if self.totals[t] == best]
        winner = leaders[0] if len(leaders) == 1 else None
        self.result = MatchResult(winner, "forfeit", seat)

    def abort(self) -> None:
        """End the match with no winner (e.g. the service could not finish it)."""
        self._check_running("an abort")
        if self.deal.plays and not self.deal.over:
            self._close_deal(complete=False)
        self.result = MatchResult(None, "aborted")

    def _check_running(self, what: object) -> None:
        if self.result is not None:
            raise GameOverError(f"the match is over ({self.result.reason}); {what} is not possible")

    def _after_play(self) -> None:
        if not self.deal.over:
            return
        score = self._close_deal(complete=True)
        for t, pts in enumerate(score):
            self.totals[t] += pts
        self.result = self._decide()
        if self.result is None:
            self.deal = DealState(self.rules, self._layout(len(self.deals)))

    def _close_deal(self, complete: bool) -> tuple[int, ...]:
        deal = self.deal
        score = tuple(deal.score()) if complete else tuple(0 for _ in self.totals)
        self.deals.append(
            FinishedDeal(
                deal.layout,
                tuple(deal.plays),
                deal.leftover_team,
                deal.leftover,
                score,
                tuple(deal.tablas),
                complete,
            )
        )
        return score

    def _decide(self) -> MatchResult | None:
        rules = self.rules
        top = max(self.totals)
        leaders = [t for t, v in enumerate(self.totals) if v == top]
        if rules.deals:
            if len(self.deals) >= rules.deals:
                return MatchResult(leaders[0] if len(leaders) == 1 else None, "deals")
            return None
        if top >= rules.target and len(leaders) == 1:
            return MatchResult(leaders[0], "target")
        if len(self.deals) >= MAX_DEALS:
            return MatchResult(None, "aborted")
        return None
