"""How a league deals: secret unless told a seed, mirrored only where no bot can remember a deal.

Against the real store: leagues created as the CLI creates them, hosted versions
submitted as the host would, plans made as the scheduler makes them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from arena_harness import scratch_redis
from fastapi.testclient import TestClient

from engine_service.rules import Rules
from scheduler.fair_play import PUBLIC_SEED, deals_report
from scheduler.league import plan_league
from store.deal_policy import CONNECTED, GRPC_VERSION
from store.deal_seeds import DealSeeds
from store.keys import LeagueKeys
from store.leagues import League, LeagueStore
from store.results import LeagueResults
from store.versions import Versions
from web.app import create_app

JSONLINES = {"language": "perl", "protocol": "jsonlines", "run": ["perl", "bot.pl"]}
GRPC = {"language": "python", "protocol": "grpc", "run": ["python", "bot.py"]}
RULES = Rules.preset("tablic", target=31)


@pytest.fixture
def arena() -> Iterator[tuple[redis.Redis, str]]:
    with scratch_redis("deal-policy") as scratch:
        yield scratch


def started(store: LeagueStore, name: str, bots: list[str], **settings: object) -> League:
    store.create(League(name, RULES, "round-robin", 2, **settings))  # type: ignore[arg-type]
    store.add_bots(name, bots)
    return store.settle_deals(store.load(name))


def test_a_league_deals_from_a_secret_no_game_id_gives_away(arena: tuple[redis.Redis, str]) -> None:
    client, prefix = arena
    store = LeagueStore(client, prefix)
    league = started(store, "spring", ["ann", "ben"])
    plan = plan_league(league, store.deal_seeds(league))
    secret = client.get(LeagueKeys(prefix, "spring").secret)
    assert secret is not None and len(bytes.fromhex(secret.decode())) == 32
    # what anyone could compute: the old default (the league's name) over every place the planner uses
    guesses = {DealSeeds.public(text).deal(*place) for text in ("spring", "") for place in _places(plan)}
    assert not guesses & {m.seed for m in plan}
    assert len({m.seed for m in plan}) == len(plan)  # connected bots: independent deals, one a game
    # a second league of the same name and bots deals other cards: the secret is the league's own
    store.delete("spring")
    again = started(store, "spring", ["ann", "ben"])
    assert not {m.seed for m in plan_league(again, store.deal_seeds(again))} & {m.seed for m in plan}


def _places(plan: list[object]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for m in plan:
        ident, _, game = m.match_id.rpartition("/")  # type: ignore[attr-defined]
        n = int(game[1:]) - 1
        out += [(ident, n), (ident, n // 2), (ident,)]
    return out


def test_a_public_seed_is_said_to_be_public(arena: tuple[redis.Redis, str]) -> None:
    client, prefix = arena
    store = LeagueStore(client, prefix)
    league = started(store, "demo", ["ann", "ben"], seed="open")
    assert client.get(LeagueKeys(prefix, "demo").secret) is None
    assert {m.seed for m in plan_league(league, store.deal_seeds(league))} >= {
        DealSeeds.public("open").deal("r1/p1", 0)
    }
    report = deals_report(store, LeagueResults(client, prefix), league)
    assert report["secret"] is False and report["public"] == PUBLIC_SEED


def test_mirrored_only_where_every_bot_is_run_afresh_by_the_arena(arena: tuple[redis.Redis, str]) -> None:
    client, prefix = arena
    store = LeagueStore(client, prefix)
    versions = Versions(client, prefix)
    fresh = [versions.submit(b, JSONLINES, b"x", "h").name for b in ("perly", "snaky")]
    kept = versions.submit("grpcy", GRPC, b"x", "h").name
    for name in (*fresh, kept):
        versions.set_state(name, "ready")  # as its preflight leaves it

    only_fresh = started(store, "fresh", [*fresh, "preflight-greedy"])
    assert only_fresh.dealt == "mirrored" and only_fresh.mirrored
    plan = plan_league(only_fresh, store.deal_seeds(only_fresh))
    assert all(m.deal for m in plan) and len({m.seed for m in plan}) == len(plan) // 2

    assert store.who_may_remember(store.load("fresh")) == {}
    with_grpc = started(store, "grpc", [*fresh, kept])
    assert with_grpc.dealt == "independent" and store.who_may_remember(with_grpc) == {kept: GRPC_VERSION}
    with_connected = started(store, "connected", [fresh[0], "ann"])
    assert with_connected.dealt == "independent" and store.who_may_remember(with_connected) == {"ann": CONNECTED}
    assert not any(m.deal for m in plan_league(with_connected, store.deal_seeds(with_connected)))

    forced = started(store, "forced", [fresh[0], "ann"], deals="mirrored")
    report = deals_report(store, LeagueResults(client, prefix), forced)
    assert forced.dealt == "mirrored" and "ann" in report["warning"] and report["may_remember"] == {"ann": CONNECTED}
    # decided once, when the league starts: a bot's version changing later does not change how it deals
    versions.submit("perly", GRPC, b"y", "h2")
    assert store.settle_deals(store.load("fresh")).dealt == "mirrored"


def test_no_answer_of_the_web_api_holds_a_league_secret(arena: tuple[redis.Redis, str]) -> None:
    client, prefix = arena
    store = LeagueStore(client, prefix)
    league = started(store, "hidden", ["ann", "ben"])
    store.write_plan(league, plan_league(league, store.deal_seeds(league)))
    secret = client.get(LeagueKeys(prefix, "hidden").secret)
    assert secret is not None
    with TestClient(create_app(client, prefix)) as api:
        app = api.app
        paths = [p for p, ops in app.openapi()["paths"].items() if "get" in ops and "live" not in p]  # type: ignore[attr-defined]
        for template in paths:
            path = template.replace("{league_id}", "hidden").replace("{match_id:path}", "r1/p1/g1")
            path = path.replace("{match_id}", "r1/p1/g1").replace("{bot}", "ann")
            body = api.get(path).text
            assert secret.decode() not in body and secret.decode()[:16] not in body, path
