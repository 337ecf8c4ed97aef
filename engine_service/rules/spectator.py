"""What a spectator may see of a match while it is played: public events, from public facts only.

A hidden-hand game shown live is a way to cheat: a bot that could read its
opponent's hand from a spectator page would play with it. So the spectator's
view is built, by construction, from what every player at the table sees:

- the face-up table a deal starts with, and its dealer;
- every play (who played which card, what it took, a tabla and its bonus, an
  automatic play for a missed turn) and so the table after it, which
  :class:`PublicFeed` works out itself from the plays;
- counts: the cards in each hand and in the stock, the cards each side has
  captured; the deal's sweep points and the match's score;
- a finished deal's score; and its hands, which by then are public anyway (every
  card of a deal is played face up before the deal ends), shown only once the
  deal is over, and ``reveal_after`` deals later if the league asks for a delay
  (a deal cut short by a forfeit shows only the cards that were played).

It never reads a hand, the stock or the seed: :meth:`PublicFeed.update` takes the
match and reads the layout's dealer and face-up table, the plays, the hands'
sizes (never their cards), the scores and the result. Each event holds the whole
public position after it, so a spectator who joins late, or reconnects, needs
only the last event it got to draw the table; events are numbered from 1, in
order, so a reconnect resumes after the last one it saw.

>>> from engine_service.rules.match import Match
>>> from engine_service.rules.rules import Rules
>>> m = Match(Rules.preset("tablic"), "demo")
>>> feed = PublicFeed(m.rules)
>>> [e.kind for e in feed.update(m)]
['deal']
>>> _ = m.play(m.legal_plays()[0])
>>> [(e.id, e.kind, e.data["seat"]) for e in feed.update(m)]
[(2, 'play', 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .cards import card_names
from .shuffle import round_sizes

if TYPE_CHECKING:
    from .deal import PlayRecord
    from .match import Match
    from .rules import Rules


@dataclass(frozen=True)
class PublicEvent:
    """One thing that happened in view of everyone: ``kind`` is ``deal`` (a deal starts), ``round`` (new
    hands are dealt), ``play``, ``deal-over`` (its score), ``hands`` (a finished deal's hands, revealed)
    or ``over`` (the result)."""

    id: int
    kind: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, **self.data}


class PublicFeed:
    """The public events of one match, as it is played (see the module doc).

    ``reveal_after``: a finished deal's hands are shown this many deals after it ends (0: at its end;
    every hand is shown when the match ends).
    """

    def __init__(self, rules: Rules, reveal_after: int = 0) -> None:
        if reveal_after < 0:
            raise ValueError(f"reveal_after must be 0 or more deals, not {reveal_after}")
        self.rules = rules
        self.reveal_after = reveal_after
        self.events: list[PublicEvent] = []
        self._sizes = round_sizes(rules)
        self._finished = 0
        """Deals told as over."""
        self._current = -1
        """The deal whose start has been told."""
        self._dealer = 0
        self._plays = 0
        """Plays of the current deal told."""
        self._round = 0
        self._table = 0
        """The table as the plays told so far leave it, worked out here from the face-up start."""
        self._captured = [0] * rules.team_count
        self._scores = [0] * rules.team_count
        """The match's score before the current deal: the finished deals' scores, summed here."""
        self._hidden: list[tuple[int, list[list[list[str]]]]] = []
        """Finished deals whose hands are still to be shown: (deal, per round, per seat, its cards)."""
        self._over = False

    def update(self, match: Match) -> list[PublicEvent]:
        """The events since the last update (feed it after every play, or less often: nothing is missed)."""
        start = len(self.events)
        while self._finished < len(match.deals):
            finished = match.deals[self._finished]
            if self._current != self._finished:
                self._start(self._finished, finished.layout.dealer, finished.layout.table)
            for record in finished.plays[self._plays :]:
                self._play(record)
            self._deal_over(finished.plays, finished.score, finished.tablas, finished.leftover)
        if match.result is None:
            deal = match.deal
            if self._current != len(match.deals):
                self._start(len(match.deals), deal.layout.dealer, deal.layout.table)
            for record in deal.plays[self._plays :]:
                self._play(record)
        elif not self._over:
            self._over = True
            self._reveal(everything=True)
            result = match.result
            self._emit("over", {"winner": result.winner, "reason": result.reason, "scores": list(self._scores)})
        return self.events[start:]

    # ------------------------------------------------------------ events

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        self.events.append(PublicEvent(len(self.events) + 1, kind, data))

    def _start(self, deal_index: int, dealer: int, table: int) -> None:
        self._current, self._dealer, self._plays, self._round = deal_index, dealer, 0, 0
        self._table = table
        self._captured = [0] * self.rules.team_count
        self._emit("deal", {"deal": deal_index, "dealer": dealer, **self._position()})

    def _play(self, record: PlayRecord) -> None:
        bit = 1 << record.card
        if record.mask:
            self._table &= ~record.mask
            self._captured[self.rules.team_of(record.seat)] += (record.mask | bit).bit_count()
        else:
            self._table |= bit
        self._plays += 1
        play = {
            "deal": self._current,
            "seat": record.seat,
            "card": card_names(bit)[0],
            "captured": card_names(record.mask),
            "bonus": record.bonus,
            "auto": record.auto,
        }
        self._emit("play", {**play, **self._position()})
        round_done = self._plays == sum(self._sizes[: self._round + 1]) * self.rules.players
        if round_done and self._round + 1 < len(self._sizes):
            self._round += 1
            self._emit("round", {"deal": self._current, "round": self._round, **self._position()})

    def _deal_over(
        self, plays: Sequence[PlayRecord], score: Sequence[int], tablas: Sequence[int], leftover: int
    ) -> None:
        """The deal is over: its score; its hands (each seat's cards of each round, every one of them
        played in view) are kept back until :meth:`_reveal` shows them."""
        n, at = self.rules.players, 0
        hands: list[list[list[str]]] = []
        for size in self._sizes:
            cards = [0] * n
            for p in plays[at : at + size * n]:
                cards[p.seat] |= 1 << p.card
            at += size * n
            hands.append([card_names(c) for c in cards])
        for t, points in enumerate(score):
            self._scores[t] += points
        deal_index = self._current
        self._emit(
            "deal-over",
            {
                "deal": deal_index,
                "score": list(score),
                "tablas": list(tablas),
                "left_on_table": card_names(leftover),
                "complete": len(plays) == at,
                "scores": list(self._scores),
            },
        )
        self._finished += 1
        self._hidden.append((deal_index, hands))
        self._reveal()

    def _reveal(self, everything: bool = False) -> None:
        """Show the hands of the finished deals ``reveal_after`` deals old (every one at the match's end)."""
        while self._hidden and (everything or self._hidden[0][0] + self.reveal_after < self._finished):
            deal_index, hands = self._hidden.pop(0)
            self._emit("hands", {"deal": deal_index, "hands": hands})

    # ------------------------------------------------------------ the public position

    def _position(self) -> dict[str, Any]:
        """The position after the events so far: the table, every count, the scores."""
        n = self.rules.players
        size = self._sizes[self._round] if self._sizes else 0
        full, extra = divmod(self._plays - sum(self._sizes[: self._round]) * n, n)
        first = (self._dealer + 1) % n  # each round's first to play
        counts = [size - full - (1 if (s - first) % n < extra else 0) for s in range(n)]
        return {
            "table": card_names(self._table),
            "hand_counts": counts,
            "stock_count": sum(self._sizes[self._round + 1 :]) * n,
            "captured_counts": list(self._captured),
            "to_move": (first + self._plays) % n,
            "scores": list(self._scores),
        }
