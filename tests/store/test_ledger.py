"""The one atomic commit: a match counts once, Elo changes sum to zero, stats add up."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import redis
from arena_harness import REDIS_URL, clear_prefix, unique_prefix

from bots import make_bot, play_match
from engine_service.rules import Rules, match_record
from store.keys import LeagueKeys
from store.ledger import Ledger
from store.results import stored_record

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}


@pytest.fixture
def ledger() -> Iterator[tuple[redis.Redis, LeagueKeys]]:
    client = redis.Redis.from_url(REDIS_URL)
    keys = LeagueKeys(unique_prefix("ledger"), "L")
    yield client, keys
    clear_prefix(client, keys.prefix)
    client.close()


def record_for(rules: Rules, seed: str, names: list[str]) -> dict:  # type: ignore[type-arg]
    bots = [make_bot("greedy" if i == 0 else "random", f"{seed}{i}") for i in range(len(names))]
    return match_record(play_match(rules, seed, bots), names, seed)


def ratings(client: redis.Redis, keys: LeagueKeys) -> dict[str, float]:
    return {k.decode(): v for k, v in client.zrange(keys.form, 0, -1, withscores=True)}


def test_a_match_committed_twice_counts_once(ledger: tuple[redis.Redis, LeagueKeys]) -> None:
    client, keys = ledger
    rec = record_for(Rules.preset("tablic", target=31), "m1", ["a", "b"])
    assert Ledger(client).commit(keys, "m1", rec, ["a", "b"], [CLEAN, CLEAN], 24, 1500) is True
    before = (ratings(client, keys), client.hgetall(keys.stats("a")), client.llen(keys.bot_matches("a")))
    assert Ledger(client).commit(keys, "m1", rec, ["a", "b"], [CLEAN, CLEAN], 24, 1500) is False
    assert (ratings(client, keys), client.hgetall(keys.stats("a")), client.llen(keys.bot_matches("a"))) == before
    assert client.lrange(keys.finished_order, 0, -1) == [b"m1"]
    winner = rec["result"]["winner"]
    stats = {k.decode(): int(v) for k, v in client.hgetall(keys.stats("ab"[winner])).items() if k != b"last_played"}
    assert stats["games"] == 1 and stats["wins"] == 1 and stats["points"] == rec["score"][winner]
    assert stored_record(client.hget(keys.records, "m1"), "m1") == rec


@pytest.mark.parametrize(
    ("preset", "players", "names"),
    [("tablic", 2, ["a", "b"]), ("tablic", 3, ["a", "b", "c"]), ("tablic", 4, ["a", "b", "c", "d"])],
)
def test_elo_changes_sum_to_zero_for_every_table_size(
    ledger: tuple[redis.Redis, LeagueKeys], preset: str, players: int, names: list[str]
) -> None:
    client, keys = ledger
    for g in range(6):
        rec = record_for(Rules.preset(preset, players=players, target=31), f"g{g}", names)
        seats = names[g % players :] + names[: g % players]
        Ledger(client).commit(keys, f"g{g}", rec, seats, [CLEAN] * players, 32, 1500)
    assert sum(ratings(client, keys).values()) == pytest.approx(1500 * players, abs=1e-3)


def test_the_winner_gains_what_the_loser_loses_and_a_forfeit_loses(ledger: tuple[redis.Redis, LeagueKeys]) -> None:
    client, keys = ledger
    rec = record_for(Rules.preset("tablic", target=31), "f", ["a", "b"])
    rec["result"] = {"winner": 1, "reason": "forfeit", "forfeit_seat": 0}
    Ledger(client).commit(keys, "f", rec, ["a", "b"], [{**CLEAN, "forfeit": True}, CLEAN], 24, 1500)
    r = ratings(client, keys)
    assert r["b"] - 1500 == pytest.approx(12) and r["a"] - 1500 == pytest.approx(-12)
    assert client.hget(keys.stats("a"), "forfeits") == b"1"


def test_head_to_head_and_per_bot_match_lists_add_up(ledger: tuple[redis.Redis, LeagueKeys]) -> None:
    client, keys = ledger
    for g in range(4):
        rec = record_for(Rules.preset("tablic", target=31), f"h{g}", ["a", "b"])
        seats = ["a", "b"] if g % 2 == 0 else ["b", "a"]
        Ledger(client).commit(keys, f"h{g}", rec, seats, [CLEAN, CLEAN], 24, 1500)
    h2h = {k.decode(): float(v) for k, v in client.hgetall(keys.head_to_head).items()}
    games = {k.decode(): int(v) for k, v in client.hgetall(keys.head_to_head_games).items()}
    assert games == {"a\tb": 4, "b\ta": 4}
    assert h2h["a\tb"] + h2h["b\ta"] == 4
    wins_a = int(client.hget(keys.stats("a"), "wins") or 0) + 0.5 * int(client.hget(keys.stats("a"), "draws") or 0)
    assert h2h["a\tb"] == wins_a
    played = [m.decode().split("\t") for m in client.lrange(keys.bot_matches("a"), 0, -1)]
    assert [p[0] for p in played] == ["h0", "h1", "h2", "h3"]
    assert float(played[-1][1]) == pytest.approx(ratings(client, keys)["a"], abs=0.005)  # the rating after it


def test_state_moves_keep_one_set_per_match_and_never_undo_a_result(ledger: tuple[redis.Redis, LeagueKeys]) -> None:
    client, keys = ledger
    client.hset(keys.match("m"), "status", "planned")
    assert Ledger(client).set_state(keys, "m", "queued", queued_at=1)
    assert Ledger(client).set_state(keys, "m", "running", worker="w1")
    assert client.smembers(keys.state_set("running")) == {b"m"} and not client.smembers(keys.state_set("queued"))
    rec = record_for(Rules.preset("tablic", target=31), "m", ["a", "b"])
    Ledger(client).commit(keys, "m", rec, ["a", "b"], [CLEAN, CLEAN], 24, 1500)
    assert not client.smembers(keys.state_set("running")) and client.lrange(keys.finished_order, 0, -1) == [b"m"]
    assert {b"worker", b"waiting", b"queued_at"}.isdisjoint(client.hkeys(keys.match("m")))  # a runner's fields go
    assert Ledger(client).set_state(keys, "m", "queued") is False  # a late duplicate cannot reopen it
    assert client.hget(keys.match("m"), "status") == b"done"


def test_many_state_moves_in_one_round_trip_keep_each_match_atomic(ledger: tuple[redis.Redis, LeagueKeys]) -> None:
    client, keys = ledger
    ledger_ = Ledger(client)
    for mid in ("a", "b", "c"):
        client.hset(keys.match(mid), "status", "planned")
    rec = record_for(Rules.preset("tablic", target=31), "b", ["x", "y"])
    ledger_.set_state(keys, "b", "running")
    ledger_.commit(keys, "b", rec, ["x", "y"], [CLEAN, CLEAN], 24, 1500)
    ledger_.set_states(keys, ["a", "b", "c"], "queued", queued_at=7)
    assert client.smembers(keys.state_set("queued")) == {b"a", b"c"}  # the done match stays done
    assert client.hget(keys.match("b"), "status") == b"done"
    assert client.hget(keys.match("c"), "queued_at") == b"7"
    with pytest.raises(ValueError, match="unknown match state"):
        ledger_.set_states(keys, ["a"], "lost")


def test_the_fitted_ladder_is_the_same_whatever_order_results_were_committed_in() -> None:
    from scheduler.ladder import ladder
    from store.leagues import League, LeagueStore
    from store.results import LeagueResults
    from store.units import mirror_unit

    rules = Rules.preset("tablic", target=31)
    names = ["a", "b", "c"]
    games = []
    for i, (x, y) in enumerate([("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")] * 3):
        seed = f"s{i // 2}"
        games.append((f"m{i}", seed, [x, y], record_for(rules, seed, [x, y])))
    client = redis.Redis.from_url(REDIS_URL)
    prefixes = [unique_prefix("order") for _ in range(3)]
    ladders, forms = [], []
    try:
        for n, prefix in enumerate(prefixes):
            store = LeagueStore(client, prefix)
            store.create(League("L", rules, bots=names))
            order = games[:]
            random.Random(n).shuffle(order)
            for mid, seed, seats, rec in order:
                store.ledger.commit(
                    store.keys("L"), mid, rec, seats, [CLEAN, CLEAN], 24, 1500, unit=mirror_unit(seed, seats)
                )
            data = ladder(LeagueResults(client, prefix), store.load("L"))
            ladders.append([{k: r[k] for k in ("bot", "rating", "interval", "margin", "games")} for r in data["rows"]])
            forms.append([r["form"] for r in data["rows"]])
        assert ladders[0] == ladders[1] == ladders[2]  # the fitted ladder: identical
        assert len(ladders[0]) == 3 and all(r["interval"] for r in ladders[0])
    finally:
        for prefix in prefixes:
            clear_prefix(client, prefix)
        client.close()
