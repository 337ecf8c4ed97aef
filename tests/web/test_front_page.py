"""The front page lists the arena's leagues, not the preflight leagues that check each hosted version before
it plays: those stay on their version's page, at their own address, and in ``/api/leagues?preflights=true``.

A light arena: ``tablanette web`` on a fresh prefix with a league and a version's preflight league created
through the store as the CLI and a host create them (nothing is played)."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from arena_harness import new_arena
from web_kit import DESKTOP, Site, open_tab

from cli.local import CLI, free_port
from engine_service.rules import Rules
from hosting import preflight
from store.leagues import League, LeagueStore


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    arena = new_arena("front", tmp_path_factory.mktemp("front"))
    try:
        port = free_port()
        site = Site(arena, f"http://127.0.0.1:{port}", arena.spawn("web", [*CLI, "web", "--port", str(port)]))
        store = LeagueStore(arena.redis, arena.prefix)
        store.create(League("spring", Rules.preset("tablic"), bots=["ann", "bob"]))
        assert preflight.create(store, "perly@1").league_id == "preflight-perly-1"
        site.wait_up()
        yield site
    finally:
        arena.close()


def status_of(site: Site, path: str) -> int:
    with urllib.request.urlopen(site.url(path), timeout=10) as res:
        return int(res.status)


def test_the_league_list_leaves_preflights_out_and_each_stays_at_its_address(light: Site) -> None:
    assert [lg["id"] for lg in light.api("/leagues")] == ["spring"]
    every = {lg["id"]: lg["preflight"] for lg in light.api("/leagues?preflights=true")}
    assert every == {"spring": None, "preflight-perly-1": "perly@1"}
    assert light.api("/leagues/preflight-perly-1")["id"] == "preflight-perly-1"
    assert status_of(light, "/leagues/preflight-perly-1") == 200


def test_the_front_page_shows_the_league_and_not_the_preflight(light: Site, browser: Any) -> None:
    with open_tab(browser, light, DESKTOP) as tab:
        tab.page.goto(light.url("/"))
        tab.page.locator('[data-testid="league-row"]').first.wait_for()
        shown = [row.get_attribute("data-league") for row in tab.page.locator('[data-testid="league-row"]').all()]
        assert shown == ["spring"], shown
        assert tab.page.locator("#leagues-count").inner_text() == "1 league(s)"
        assert "preflight" in tab.text("preflights-hint")
