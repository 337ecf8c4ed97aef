"""A ladder that never stops (``--format standing``): bots come and go, and games go where they teach most.

Every other planner (:mod:`scheduler.planners`) says at some point that its league needs nothing more. A
standing ladder never does: each time the :class:`~scheduler.league.Feeder` asks, :class:`StandingPlanner`
tops the plan up to :attr:`StandingPlanner.ahead` matches planned but not yet played (*backpressure*: the
queue stays just ahead of the workers, however long the ladder runs), each a pair of games with the seats
swapped (one deal when the ladder's games are mirrored). It chooses the pairs in three passes:

1. **Newcomers are placed first.** A bot (or a new version of a hosted bot) that is not *placed* yet plays
   the reference bots nearest its rating (``--reference``), or without references the nearest placed bots
   (the nearest bots of any kind when those are busy). It is placed as the placement gauntlet places
   (:func:`scheduler.planners.is_placed`: its interval within 75 Elo, or settled against every
   reference), or after :data:`PLACEMENT_GAMES` games whatever its interval. A new version starts from its
   predecessor's rating.
2. **Every bot gets its minimum share.** A placed bot with fewer than :data:`MIN_SHARE` of the mean games
   of the active bots plays next, against its nearest free neighbour, fewest games first.
3. **Then information per game.** Neighbours on the ladder of the placed bots whose order is least sure,
   and who have met least: each pair of neighbours scores ``(1 - |2 LOS - 1|) / (1 + games between them)``,
   and the best are paired.

Throughout, **no bot hogs the workers**: one with :data:`PER_BOT` matches planned and not played is skipped,
and a pair already planned is not planned again until it is played. **A newer version retires the older
ones**: of ``bot@2`` and ``bot@3`` only ``bot@3`` is paired (``bot@2``'s games stay on the ladder).
**A bot that is away** (not connected, or in quarantine: the Feeder says so through
:meth:`StandingPlanner.roster`) is skipped without penalty: nothing is forfeited, its matches not yet sent
are withdrawn (:mod:`scheduler.standing_feed`), and it is paired again when it is back.

**Cost.** The planner keeps its results as running sums (:class:`scheduler.duel_tally.DuelTally`: each
result is read once), refits them warm (from the last fit) once the results have grown by a
:data:`REFIT_SHARE`-th, and reads how sure a pair's order is from the *conditional* variance
(:mod:`scheduler.information`: the pair's own games and each bot's, a 2 x 2 block of the information). The
bots are ranked once a fit; a decision filters that order by who is active, scores the neighbours in a few
vectorized steps and looks a few places along the ladder for a free opponent: some 25 ms at 10,000 bots,
for as many pairs as the queue has room for (``bench/standing.py``).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduler.duel_tally import DuelTally
from scheduler.pairings import PlannedMatch, Seed, pair_of_games
from scheduler.planners import _seeds, is_placed, nearest_first
from scheduler.ratings import ELO, Z95, Fit, Outcome
from store.leagues import League
from store.versions import split_version

AHEAD = 16
"""Matches planned but not played that a standing ladder keeps at most, unless told otherwise (the Feeder
keeps twice the matches it has in flight)."""
PER_BOT = 4
"""Matches planned but not played one bot may have at once (two pairs of games): more, and it is skipped."""
MIN_SHARE = 0.5
"""A placed bot with fewer games than this share of the mean of the active bots' is paired first."""
PLACEMENT_GAMES = 40
"""A newcomer counts as placed after this many games, however wide its interval still is."""
REFIT_SHARE = 1000
"""The ladder is refitted once its results have grown by a thousandth (see :meth:`StandingPlanner.refit_after`)."""
REACH = 4
"""How many bots up and down the ladder a bot looks for a free opponent before it waits for the next call."""


def latest_versions(bots: Sequence[str]) -> list[str]:
    """The bots that may be paired: all but the hosted versions that a newer version of the same bot retires.

    >>> latest_versions(["a", "perly@1", "perly@3", "b", "perly@2"])
    ['a', 'perly@3', 'b']
    """
    newest: dict[str, int] = {}
    for bot in bots:
        if v := split_version(bot):
            newest[v[0]] = max(newest.get(v[0], 0), v[1])
    return [b for b in bots if (v := split_version(b)) is None or v[1] == newest[v[0]]]


def _pair_number(match_id: str) -> int:
    """``7`` for ``t7/g1``: the number of a standing ladder's pair of games (0 for any other id)."""
    head = match_id.split("/", 1)[0]
    return int(head[1:]) if head[:1] == "t" and head[1:].isdigit() else 0


@dataclass
class _Picks:
    """The pairs chosen in one call, and what they leave free: each bot's load, the pairs planned."""

    want: int
    load: Counter[str]
    planned: set[frozenset[str]]
    pairs: list[tuple[str, str]] = field(default_factory=list)

    def full(self) -> bool:
        return len(self.pairs) >= self.want

    def free(self, bot: str) -> bool:
        return self.load[bot] + 2 <= PER_BOT

    def take(self, a: str, b: str) -> bool:
        """Pair ``a`` and ``b`` if both are free and the pair is not planned already; whether it was."""
        if a == b or not self.free(a) or not self.free(b) or frozenset((a, b)) in self.planned:
            return False
        self.pairs.append((a, b))
        self.load[a] += 2
        self.load[b] += 2
        self.planned.add(frozenset((a, b)))
        return True


@dataclass
class _Ladder:
    """The active bots as the last fit ranks them, best first, with their ratings (Elo) and games."""

    bots: list[str]
    rating: dict[str, float]
    games: dict[str, int]
    placed: set[str]
    ranks: list[str] = field(default_factory=list)
    """The placed bots, best first."""
    bot_keys: list[float] = field(default_factory=list)
    rank_keys: list[float] = field(default_factory=list)
    """What :meth:`around` searches in :attr:`bots` and in :attr:`ranks`."""

    def around(self, bot: str, among: Sequence[str], keys: Sequence[float], reach: int = REACH) -> Iterator[str]:
        """The bots of ``among`` (best first; ``keys``: minus their ratings) nearest ``bot``'s rating, nearest
        first, at most ``reach`` on each side (``bot`` itself left out)."""
        here = -self.rating[bot]
        hi = bisect.bisect_left(keys, here)
        lo, up, down = hi - 1, 0, 0
        while (lo >= 0 and up < reach) or (hi < len(among) and down < reach):
            nearer_below = hi < len(among) and down < reach and (lo < 0 or keys[hi] - here <= here - keys[lo])
            if nearer_below or lo < 0 or up >= reach:
                other, hi = among[hi], hi + 1
                down += other != bot
            else:
                other, lo = among[lo], lo - 1
                up += other != bot
            if other != bot:
                yield other

    def keys(self, among: Sequence[str]) -> list[float]:
        """What :meth:`around` searches: minus the ratings of ``among`` (ascending, as ``among`` is best first)."""
        return [-self.rating[b] for b in among]


class StandingPlanner:
    """Pairs for a ladder that never stops (see the module's doc)."""

    def __init__(self, league: League, seeds: Seed | None = None, ahead: int = AHEAD) -> None:
        if league.rules.players != 2:
            raise ValueError("a standing ladder pairs two bots a match: create it with --players 2")
        self.league = league
        self.seed = _seeds(league, seeds)
        self.ahead = ahead
        self.away: frozenset[str] = frozenset()
        self.tally = DuelTally(mirrored=league.mirrored)
        self.fit: Fit | None = None
        """The last fit (no intervals): what the pairs were chosen from."""
        self.fitted_at = -1
        """How many results the last fit had."""
        self._pending: dict[str, tuple[str, ...]] = {}
        self._planned_seen = 0
        self._next = 1
        self._theta: dict[str, float] = {}
        self._info: Any = None
        self._diag = np.zeros(0)
        self._placed_by_fit: set[str] = set()
        self._rating: dict[str, float] = {}
        """The ratings (Elo) of the last fit, or those remembered."""
        self._ranked: list[str] = []
        """The bots of :attr:`_rating`, best first."""
        self._rated_versions: dict[str, list[int]] = {}
        self._members = latest_versions(league.bots)
        self._note: dict[str, Any] = {"format": "standing"}

    def initial(self) -> list[PlannedMatch]:
        """Nothing: every pair comes from :meth:`more`, as the bots present then allow."""
        return []

    def roster(self, league: League, away: Collection[str]) -> None:
        """The league as it now stands (bots added, removed or retired) and the bots away now (not connected,
        or in quarantine): they are not paired until they are back."""
        self.league = league
        self.away = frozenset(away)
        self._members = latest_versions(league.bots)

    def remember(self, ratings: Mapping[str, float]) -> None:
        """Start the next fit from these ratings (Elo, a cached ladder's: a restarted scheduler's warm start)."""
        mean = sum(ratings.values()) / len(ratings) if ratings else self.league.initial
        self._theta = {bot: (r - mean) / ELO for bot, r in ratings.items()}
        self._rank()

    def restart(self) -> None:
        """A new season (``league season --new``): forget every result and rating, so that the next fit, the
        newcomers' placement and every bot's share count the new season's games only. What is planned stays
        planned (its results count in the new season)."""
        self.tally = DuelTally(mirrored=self.league.mirrored)
        self.fit, self.fitted_at = None, -1
        self._theta, self._info, self._diag, self._placed_by_fit = {}, None, np.zeros(0), set()
        self._rating, self._ranked, self._rated_versions = {}, [], {}

    def drop(self, match_ids: Collection[str]) -> None:
        """Forget matches that will not be played (withdrawn, or failed): they no longer fill the queue."""
        for mid in match_ids:
            self._pending.pop(mid, None)

    def pending(self) -> dict[str, tuple[str, ...]]:
        """The matches planned and not yet played, with their bots."""
        return dict(self._pending)

    def more(
        self, outcomes: Sequence[Outcome], planned: Sequence[PlannedMatch], in_flight: Sequence[str]
    ) -> list[PlannedMatch]:
        """Top the plan up to :attr:`ahead` matches not played (``[]`` when it is full, or fewer than two bots
        may play now); never None: the ladder never ends.

        ``outcomes`` and ``planned`` only grow from call to call: what was read of them is not read again (the
        Feeder hands results over through :meth:`absorb` instead, and ``outcomes`` empty)."""
        self.absorb(planned, outcomes[self.tally.count :])
        if self.tally.count and self.tally.count - self.fitted_at >= self.refit_after():
            self.refit()
        waiting = sum(1 for seats in self._pending.values() if self.away.isdisjoint(seats))
        want = (self.ahead - waiting) // 2
        pairs = self._choose(want) if want > 0 else []
        out: list[PlannedMatch] = []
        for a, b in pairs:
            out += pair_of_games(a, b, self.seed, f"t{self._next}", self._next, self.league.mirrored)
            self._next += 1
        for m in out:
            self._pending[m.match_id] = m.seats
        self._note.update({"ahead": self.ahead, "pending": len(self._pending), "results": self.tally.count})
        return out

    def absorb(self, planned: Sequence[PlannedMatch], fresh: Sequence[Outcome]) -> None:
        """Take in the matches planned since the last call (``planned`` only grows: it is read from where the last
        call stopped), then results not seen yet (each once)."""
        for m in planned[self._planned_seen :]:
            self._pending[m.match_id] = tuple(m.seats)
            self._next = max(self._next, _pair_number(m.match_id) + 1)
        self._planned_seen = len(planned)
        for o in fresh:
            self._pending.pop(o.match_id, None)
        self.tally.add(fresh)

    def refit_after(self) -> int:
        """New results that call for a new fit: a :data:`REFIT_SHARE`-th of the results, or a hundredth of the
        bots' number (a fit's cost grows with both), or one."""
        return max(1, self.tally.count // REFIT_SHARE, len(self.tally.names) // 100)

    def refit(self) -> Fit:
        """Fit every result so far, warm from the last fit (a new version from its predecessor)."""
        start = self.tally.start(self._theta, self._heirs(self.tally.names)) if self._theta else None
        fit = self.tally.fit(initial=self.league.initial, threshold=self.league.confidence, start=start)
        if fit.model is None:  # no result yet: nothing to rank by
            return fit
        self.fit, self.fitted_at = fit, self.tally.count
        self._theta = dict(zip(self.tally.names, map(float, fit.theta), strict=True))
        self._info = fit.model.information(fit.theta, sparse=True)
        self._diag = np.asarray(self._info.diagonal())
        self._placed_by_fit = self._placed_now()
        self._rank()
        return fit

    def _rank(self) -> None:
        """Rank the bots the last fit rates (once a fit: a decision then only filters this order)."""
        mean = float(np.mean(list(self._theta.values()))) if self._theta else 0.0
        initial = self.league.initial
        self._rating = {b: (t - mean) * ELO + initial for b, t in self._theta.items()}
        self._ranked = sorted(self._rating, key=lambda b: (-self._rating[b], b))
        self._rated_versions = {}
        for bot in self._rating:
            if "@" in bot and (v := split_version(bot)):
                self._rated_versions.setdefault(v[0], []).append(v[1])

    def _placed_now(self) -> set[str]:
        """The bots the last fit places (:func:`~scheduler.planners.is_placed`: by their conditional interval,
        or settled against every reference)."""
        names = self.tally.names[: len(self._diag)]
        half = Z95 * ELO / np.sqrt(np.maximum(self._diag, 1e-300))
        refs = [r for r in self.league.reference if r in self._theta]
        over = [self._neighbour_los(names, [r] * len(names)) for r in refs]
        return {b for i, b in enumerate(names) if is_placed(float(half[i]), [float(x[i]) for x in over], self.league)}

    def shown(self) -> Fit:
        """The ladder as people read it: every result absorbed, with intervals, fitted warm."""
        start = self.tally.start(self._theta, self._heirs(self.tally.names)) if self._theta else None
        league = self.league
        return self.tally.fit(
            league.bots, initial=league.initial, threshold=league.confidence, intervals=True, start=start
        )

    def _heirs(self, bots: Sequence[str]) -> dict[str, str]:
        """Each version of ``bots`` without a rating yet -> its newest older version that has one."""
        out = {}
        for bot in bots:
            if "@" not in bot or bot in self._rating or not (v := split_version(bot)):
                continue
            if older := [n for n in self._rated_versions.get(v[0], []) if n < v[1]]:
                out[bot] = f"{v[0]}@{max(older)}"
        return out

    def note(self) -> dict[str, Any]:
        return self._note

    # --------------------------------------------------------- choosing

    def _choose(self, want: int) -> list[tuple[str, str]]:
        members = self._members
        active = [b for b in members if b not in self.away]
        retired = len(self.league.bots) - len(members)
        self._note.update({"bots": len(self.league.bots), "active": len(active), "retired": retired})
        self._note.update({"away": len(self.away & set(members))})
        if len(active) < 2:
            return []
        ladder = self._ladder(active)
        picks = _Picks(want, Counter(b for seats in self._pending.values() for b in seats), set())
        picks.planned = {frozenset(seats) for seats in self._pending.values()}
        newcomers = sorted((b for b in active if b not in ladder.placed), key=lambda b: (ladder.games[b], b))
        self._place(ladder, newcomers, picks)
        starved = self._starved(ladder)
        for bot in starved:
            if picks.full():
                break
            if picks.free(bot):
                any(picks.take(bot, other) for other in ladder.around(bot, ladder.bots, ladder.bot_keys))
        unsure = self._by_information(ladder, picks)
        self._note.update({"newcomers": len(newcomers), "starved": len(starved), "least_sure": unsure})
        return picks.pairs

    def _ladder(self, active: list[str]) -> _Ladder:
        """The active bots, best first: those the last fit rates in its order, the others (new since) at their
        predecessor's rating or the initial one."""
        present = set(active)
        ranked = [b for b in self._ranked if b in present]
        unrated = [b for b in active if b not in self._rating]
        heirs = self._heirs(unrated)
        initial = self.league.initial
        rating = self._rating | {b: self._rating.get(heirs.get(b, ""), initial) for b in unrated}
        if len(unrated) > 64:
            ranked = sorted(active, key=lambda b: (-rating[b], b))
        else:
            for b in unrated:
                keys = [-rating[x] for x in ranked]
                ranked.insert(bisect.bisect_left(keys, -rating[b]), b)
        played, index = self.tally.games(), self.tally.index
        games = {b: int(played[index[b]]) if b in index else 0 for b in ranked}
        ladder = _Ladder(ranked, rating, games, set())
        ladder.placed = {b for b in ranked if self._is_placed(b, ladder)}
        ladder.ranks = [b for b in ranked if b in ladder.placed]
        ladder.bot_keys, ladder.rank_keys = ladder.keys(ranked), ladder.keys(ladder.ranks)
        return ladder

    def _is_placed(self, bot: str, ladder: _Ladder) -> bool:
        """A reference, a bot past :data:`PLACEMENT_GAMES`, or one the last fit places."""
        return bot in self.league.reference or ladder.games[bot] >= PLACEMENT_GAMES or bot in self._placed_by_fit

    def _place(self, ladder: _Ladder, newcomers: list[str], picks: _Picks) -> None:
        """Each newcomer against the reference nearest it, or without references the nearest placed bot; when
        those are busy, the nearest bot of any kind (before any bot is placed, that is all there is)."""
        refs = [b for b in ladder.bots if b in self.league.reference]
        for bot in newcomers:
            if picks.full():
                return
            if not picks.free(bot):
                continue
            if refs:
                first = nearest_first(ladder.rating[bot], {r: ladder.rating[r] for r in refs if r != bot})
            else:
                first = list(ladder.around(bot, ladder.ranks, ladder.rank_keys))
            for other in [*first, *ladder.around(bot, ladder.bots, ladder.bot_keys)]:
                if picks.full() or not picks.free(bot):
                    break
                picks.take(bot, other)

    def _starved(self, ladder: _Ladder) -> list[str]:
        """The placed bots below their minimum share of games, fewest games first."""
        placed = ladder.ranks
        if not placed:
            return []
        floor = MIN_SHARE * sum(ladder.games[b] for b in placed) / len(placed)
        return sorted((b for b in placed if ladder.games[b] < floor), key=lambda b: (ladder.games[b], b))

    def _by_information(self, ladder: _Ladder, picks: _Picks) -> list[list[Any]]:
        """Pair neighbours on the ladder of the placed bots, those whose order is least sure and who met least
        first; the five least sure neighbours (for the note)."""
        above, below = ladder.ranks[:-1], ladder.ranks[1:]
        if not above:
            return []
        los = self._neighbour_los(above, below)
        met = self.tally.pair_games_of(above, below).astype(float)
        score = (1 - np.abs(2 * los - 1)) / (1 + met)
        order = np.argsort(-score, kind="stable")
        for k in order:
            if picks.full():
                break
            picks.take(above[k], below[k])
        return [[above[k], below[k], round(float(los[k]), 4)] for k in np.argsort(np.abs(los - 0.5))[:5]]

    def _neighbour_los(self, above: Sequence[str], below: Sequence[str]) -> np.ndarray:
        """LOS of each bot of ``above`` over the one beside it in ``below``, given every other bot's rating
        (0.5 for a bot the last fit did not have)."""
        index = self.fit.index if self.fit is not None else {}
        ia = np.array([index.get(b, -1) for b in above], dtype=np.int64)
        ib = np.array([index.get(b, -1) for b in below], dtype=np.int64)
        known = (ia >= 0) & (ib >= 0)
        out = np.full(len(above), 0.5)
        if not known.any():
            return out
        a, b = ia[known], ib[known]
        assert self.fit is not None
        theta = self.fit.theta
        iab = np.asarray(self._info[a, b]).ravel()
        iaa, ibb = self._diag[a], self._diag[b]
        det = np.maximum(iaa * ibb - iab * iab, 1e-300)
        var = np.maximum((iaa + ibb + 2 * iab) / det, 1e-12)
        from scipy.special import ndtr

        out[known] = ndtr((theta[a] - theta[b]) / np.sqrt(var))
        return out

    def _los(self, a: str, b: str) -> float:
        return float(self._neighbour_los([a], [b])[0])
