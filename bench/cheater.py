"""A cheating bot: every way an outsider could learn the cards it should not know, tried on every turn.

It is the strong bot (:mod:`bots.strong`) with one change: where it has learnt a
hidden card, its look-ahead deals that card where it really is instead of
guessing. It uses only what a bot anywhere has: what the arena sends it, the
public web API, its own memory, and the open-source code. Its channels:

- ``seed``: the deal seed computed from the game id, as the arena's code would
  from a public seed (the league's name, as leagues dealt before secret deals,
  or a seed the operator published: ``--known-seed``);
- ``twin``: the record of another game of the same pairing, fetched from the
  web API (a mirrored twin is dealt the same cards), and whether the live
  stream of such a game answers while this one is being played;
- ``memory``: every game it has played, remembered by the first table of the
  game; a game that opens on a remembered table is taken for its twin, and the
  hands it saw there (its own, and the cards its opponents played) are taken for
  the hands of this one.

A channel's knowledge is used only where it agrees with what the bot can see
(its own hand), so a wrong guess of a seed costs it nothing. On each turn it
also writes down its *prediction* of the next seat's hand: the cards it believes
are there (known ones first, then drawn at random from the cards it has not
seen), one JSON line a turn in ``--log``. bench/fair_play.py scores those lines
against the records once the league is over: a bot that learns nothing predicts
at the exact chance rate (hand size / unseen cards).

``--honest`` turns every channel off: the same program, the same look-ahead,
and the same predictions drawn at random, to measure the cheater against.

    TABLANETTE_TOKEN=... python -m bench.cheater --address 127.0.0.1:50051 --name mole \\
        --web http://127.0.0.1:8000 --log mole.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bots.base import Bot
from bots.client_command import NO_TOKEN, run_until_stopped
from bots.evaluate import trail_cost
from bots.sdk import BotClient
from bots.sdk_session import Upkeep
from bots.strong import StrongBot, determinize
from engine_service.rules import (
    DealLayout,
    DealState,
    Observation,
    Play,
    Rules,
    card_names,
    deal_layout,
    iter_mask,
    mask_of,
    parse_cards,
    round_sizes,
)
from engine_service.rules.cards import popcount
from store.deal_seeds import DealSeeds
from tablanette.v1 import arena_pb2 as apb

CHANNELS = ("seed", "twin", "memory")

Hands = dict[tuple[int, int, int], int]
"""What is known of a game's hands: (deal, round, seat) -> the cards that seat was dealt in that round."""


@dataclass
class Memory:
    """Every game the process played, by its first table: the hands each game showed."""

    games: dict[int, dict[str, Hands]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def remember(self, first_table: int, game_id: str, hands: Hands) -> None:
        with self.lock:
            self.games.setdefault(first_table, {})[game_id] = dict(hands)

    def recall(self, first_table: int, game_id: str) -> Hands:
        """What other games that opened on ``first_table`` showed (the latest wins where they overlap)."""
        with self.lock:
            seen = [hands for gid, hands in self.games.get(first_table, {}).items() if gid != game_id]
        out: Hands = {}
        for hands in seen:
            for k, v in hands.items():
                out[k] = out.get(k, 0) | v
        return out


@dataclass
class Spy:
    """What one cheater process shares between its games: its channels, memory, web address and log."""

    channels: frozenset[str]
    web: str = ""
    known_seeds: tuple[str, ...] = ()
    log: Path | None = None
    memory: Memory = field(default_factory=Memory)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def write(self, line: dict[str, object]) -> None:
        if self.log is None:
            return
        with self.lock, self.log.open("a") as fh:
            fh.write(json.dumps(line) + "\n")

    def get(self, path: str) -> tuple[int, dict[str, object] | None]:
        """GET ``path`` of the web API: its status and JSON (None where it is not JSON or did not answer)."""
        url = self.web.rstrip("/") + "/api" + urllib.parse.quote(path)
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if answer.headers.get_content_type() != "application/json":
                    return answer.status, None
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, None
        except (OSError, ValueError):
            return 0, None

    def opens(self, path: str) -> bool:
        """Whether the live stream at ``path`` answers (it is closed at once: its headers say enough)."""
        url = self.web.rstrip("/") + "/api" + urllib.parse.quote(path)
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return bool(answer.status == 200)
        except (OSError, ValueError):  # HTTPError (a 409: held back) among them
            return False


def places(match_id: str) -> list[tuple[object, ...]]:
    """Where the arena's planner could have taken ``match_id``'s deal seed from (scheduler/pairings.py):
    ``<ident>/g<N>`` deals from ``(ident, (N-1)//2)`` when mirrored, ``(ident, N-1)`` when not, ``(ident,)``
    for a table rotation."""
    ident, _, game = match_id.rpartition("/")
    if not game.startswith("g") or not game[1:].isdigit():
        return []
    n = int(game[1:]) - 1
    return [(ident, n // 2), (ident, n), (ident,)]


def twins(match_id: str, most: int = 6) -> list[str]:
    """The other games of ``match_id``'s pairing or table: the ones that could share its deal."""
    ident, _, game = match_id.rpartition("/")
    return [f"{ident}/g{k}" for k in range(1, most + 1) if f"g{k}" != game]


def layout_hands(rules: Rules, deal: int, layout: DealLayout) -> Hands:
    return {(deal, r, s): hand for r, rnd in enumerate(layout.rounds) for s, hand in enumerate(rnd)}


def record_hands(record: dict[str, object]) -> Hands:
    """Every hand of a record: what a served record gives away."""
    out: Hands = {}
    deals = record.get("deals")
    for d, entry in enumerate(deals if isinstance(deals, list) else []):
        for r, rnd in enumerate(entry["hands"]):
            for s, hand in enumerate(rnd):
                out[(d, r, s)] = mask_of(parse_cards(hand))
    return out


def first_table(obs: Observation) -> int:
    """The table the deal opened with: the table now with this deal's plays undone."""
    table = obs.table
    for p in reversed(obs.plays):
        table = table | p.mask if p.mask else table & ~(1 << p.card)
    return table


def round_of_play(rules: Rules, index: int) -> int:
    """The round of a deal's ``index``-th play."""
    for r, size in enumerate(round_sizes(rules)):
        if index < size * rules.players:
            return r
        index -= size * rules.players
    return len(round_sizes(rules)) - 1


class Cheater(Bot):
    """One game of the cheater (a fresh one each game, as the SDK makes them; the :class:`Spy` is shared)."""

    name = "cheater"
    version = "1"

    def __init__(self, spy: Spy, game_id: str = "", samples: int = 8) -> None:
        self.spy = spy
        self.game_id = game_id
        self.strong = StrongBot(seed=game_id or None, samples=samples)
        self.rng = random.Random(f"guess/{game_id}/{os.getpid()}")
        self.known: Hands = {}
        self.source: dict[int, str] = {}  # deal -> the channel that told it
        self.seen: Hands = {}  # what this game showed: its own hands, and every card others played, by round
        self.opening: int | None = None
        self.asked: set[tuple[int, int]] = set()

    @property
    def league(self) -> str:
        return self.game_id.partition("/")[0]

    @property
    def match_id(self) -> str:
        return self.game_id.partition("/")[2]

    def new_match(self, rules: Rules, seat: int) -> None:
        self.rules, self.seat = rules, seat

    # ------------------------------------------------------------------ channels

    def _agrees(self, hands: Hands, obs: Observation) -> bool:
        """Whether ``hands`` deal this seat every card it has held this round (all of them: a seat sees its
        whole hand at its first turn of a round), so a wrong guess is never taken for the deal."""
        held = self.seen.get((obs.deal_index, obs.round, obs.seat), 0)
        mine = hands.get((obs.deal_index, obs.round, obs.seat))
        return mine is not None and held & ~mine == 0 and popcount(held) == round_sizes(obs.rules)[obs.round]

    def _learn(self, obs: Observation) -> None:
        deal = obs.deal_index
        if deal in self.source:
            return
        channels = self.spy.channels
        if "seed" in channels:
            texts = [*self.spy.known_seeds, self.league]
            for text in texts:
                for place in places(self.match_id):
                    layout = deal_layout(obs.rules, DealSeeds.public(text).deal(*place), deal)
                    hands = layout_hands(obs.rules, deal, layout)
                    if layout.table == first_table(obs) and self._agrees(hands, obs):
                        self._take(hands, deal, "seed")
                        return
        if "memory" in channels and self.opening is not None:
            hands = {k: v for k, v in self.spy.memory.recall(self.opening, self.game_id).items() if k[0] == deal}
            if hands and self._agrees_where_known(hands, obs):
                self._take(hands, deal, "memory")
                return
        if "twin" in channels and (deal, obs.round) not in self.asked:
            self.asked.add((deal, obs.round))
            for twin in twins(self.match_id):
                status, body = self.spy.get(f"/leagues/{self.league}/matches/{twin}")
                record = body.get("record") if body else None
                if isinstance(record, dict):
                    hands = record_hands(record)
                    if self._agrees(hands, obs):
                        self._take(hands, deal, "twin")
                        return
                if status == 200 and self.spy.opens(f"/leagues/{self.league}/live/{twin}"):
                    # the twin's live stream (its hands at each deal's end) while this game is being played
                    self.spy.write({"game": self.game_id, "leak": "live", "twin": twin})

    def _agrees_where_known(self, hands: Hands, obs: Observation) -> bool:
        """Remembered hands may lack a card (one its opponent played after its last turn of a round)."""
        mine = hands.get((obs.deal_index, obs.round, obs.seat), 0)
        held = self.seen.get((obs.deal_index, obs.round, obs.seat), 0)
        return popcount(mine) < round_sizes(obs.rules)[obs.round] or held & ~mine == 0

    def _take(self, hands: Hands, deal: int, channel: str) -> None:
        self.known.update({k: v for k, v in hands.items() if k[0] == deal})
        self.source[deal] = channel

    def _watch(self, obs: Observation) -> None:
        """Note what this game shows, for the memory of a later game on the same deal."""
        if self.opening is None and obs.deal_index == 0:
            self.opening = first_table(obs)
        key = (obs.deal_index, obs.round, obs.seat)
        self.seen[key] = self.seen.get(key, 0) | obs.hand
        for i, p in enumerate(obs.plays):
            k = (obs.deal_index, round_of_play(obs.rules, i), p.seat)
            self.seen[k] = self.seen.get(k, 0) | (1 << p.card)
        if self.opening is not None and "memory" in self.spy.channels:
            self.spy.memory.remember(self.opening, self.game_id, self.seen)

    # ------------------------------------------------------------------ play

    def choose(self, observation: Observation) -> Play:
        obs = observation
        self._watch(obs)
        if self.spy.channels:
            self._learn(obs)
        self._predict(obs)
        plays = obs.legal_plays
        if len(plays) == 1:
            return plays[0]
        strong = self.strong
        samples = 1 if self._knows_all(obs) else strong.samples
        totals = [0.0] * len(plays)
        for _ in range(samples):
            state = self._world(obs)
            for i, play in enumerate(plays):
                totals[i] += strong._evaluate(obs.rules, state.copy(), play, obs.seat)
        for i, play in enumerate(plays):
            if not play.mask:
                totals[i] -= samples * trail_cost(obs.rules, play) * 0.25
        return plays[max(range(len(plays)), key=lambda i: totals[i])]

    def _known_now(self, obs: Observation, seat: int) -> int:
        return self.known.get((obs.deal_index, obs.round, seat), 0) & obs.unseen

    def _knows_all(self, obs: Observation) -> bool:
        return all(
            popcount(self._known_now(obs, s)) == obs.hand_counts[s] for s in range(obs.rules.players) if s != obs.seat
        )

    def _world(self, obs: Observation) -> DealState:
        """The strong bot's determinization, with every known card dealt where it is."""
        state = determinize(obs, self.strong.rng)
        if not self.known:
            return state
        pool = list(iter_mask(obs.unseen & ~self._placed(obs)))
        self.strong.rng.shuffle(pool)
        hands = list(state.hands)
        for s in range(obs.rules.players):
            if s == obs.seat:
                continue
            known = self._known_now(obs, s)
            fill = obs.hand_counts[s] - popcount(known)
            hands[s] = known | mask_of(pool[:fill])
            pool = pool[fill:]
        state.hands = hands
        return state

    def _placed(self, obs: Observation) -> int:
        placed = 0
        for s in range(obs.rules.players):
            if s != obs.seat:
                placed |= self._known_now(obs, s)
        return placed

    def _predict(self, obs: Observation) -> None:
        """Write down which cards the next seat holds: the known ones, then a random draw of the unseen."""
        target = (obs.seat + 1) % obs.rules.players
        size = obs.hand_counts[target]
        if size == 0:
            return
        known = list(iter_mask(self._known_now(obs, target)))[:size]
        rest = [c for c in iter_mask(obs.unseen) if c not in known]
        guess = known + self.rng.sample(rest, size - len(known))
        self.spy.write(
            {
                "game": self.game_id,
                "seat": obs.seat,
                "of": target,
                "deal": obs.deal_index,
                "round": obs.round,
                "guess": card_names(mask_of(guess)),
                "unseen": popcount(obs.unseen),
                "channel": self.source.get(obs.deal_index, "none") if known else "none",
            }
        )


class CheaterClient(BotClient):
    """The SDK's client, telling each new game's bot its game id (a bot is told it in every turn anyway)."""

    def __init__(self, spy: Spy, address: str, token: str, name: str, samples: int) -> None:
        self._starting = ""
        self.spy, self.samples = spy, samples
        super().__init__(lambda: Cheater(spy, self._starting, samples), address, token, name=name, max_games=4)

    def _dispatch(self, msg: apb.ServerMessage, upkeep: Upkeep) -> None:
        if msg.WhichOneof("kind") == "game_started":
            self._starting = msg.game_started.game_id
        super()._dispatch(msg, upkeep)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cheater", description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--name", required=True)
    parser.add_argument("--web", default="", help="the web ladder's address (the twin channel)")
    parser.add_argument("--log", type=Path, help="one JSON line a turn: the prediction of the next seat's hand")
    parser.add_argument("--known-seed", action="append", default=[], help="a public seed to try (repeatable)")
    parser.add_argument("--channels", default=",".join(CHANNELS), help=f"of {', '.join(CHANNELS)}")
    parser.add_argument("--honest", action="store_true", help="no channel: the same program, playing fair")
    parser.add_argument("--samples", type=int, default=8, help="the strong bot's determinizations a turn")
    args = parser.parse_args(list(argv) if argv is not None else None)
    token = os.environ.get("TABLANETTE_TOKEN")
    if not token:
        print(NO_TOKEN, file=sys.stderr)
        return 2
    channels = frozenset() if args.honest else frozenset(c for c in args.channels.split(",") if c)
    if channels - set(CHANNELS):
        parser.error(f"unknown channel(s): {', '.join(sorted(channels - set(CHANNELS)))}")
    spy = Spy(channels, args.web, tuple(args.known_seed), args.log)
    client = CheaterClient(spy, args.address, token, args.name, args.samples)
    return run_until_stopped(client, "honest" if args.honest else "cheating: " + ",".join(sorted(channels)))


if __name__ == "__main__":
    raise SystemExit(main())
