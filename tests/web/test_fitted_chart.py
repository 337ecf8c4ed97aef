"""A standing ladder's bot page charts the bot's fitted rating over time with its interval; an event league's bot
page stays as it was.

A light arena: ``tablanette web`` on a fresh prefix, a standing ladder and an event league seeded through the store
as a worker and the standing scheduler leave them (a match each, played in-process and committed by the ledger;
the fitted points written by :class:`store.rating_history.RatingHistory`). Nothing else runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from arena_harness import new_arena
from web_kit import DESKTOP, Site, open_tab

from bots import make_bot, play_match
from cli.local import CLI, free_port
from engine_service.rules import Rules, match_record
from store.leagues import League, LeagueStore
from store.ledger import Ledger
from store.rating_history import Point, RatingHistory

CLEAN = {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False}
POINTS = [
    Point(1_765_000_000.0, 2, 1512.3, 1320.0, None),  # an end without bound: the band runs to the chart's edge
    Point(1_765_000_300.0, 40, 1540.0, 1480.5, 1610.2),
    Point(1_765_000_900.0, 120, 1531.7, 1500.1, 1563.9),
]


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    arena = new_arena("fitted", tmp_path_factory.mktemp("fitted"))
    try:
        port = free_port()
        site = Site(arena, f"http://127.0.0.1:{port}", arena.spawn("web", [*CLI, "web", "--port", str(port)]))
        store = LeagueStore(arena.redis, arena.prefix)
        rules = Rules.preset("tablic", deals=1)
        store.create(League("open", rules, "standing", bots=["ann", "bob"], seed="open"))
        store.create(League("spring", rules, bots=["ann", "bob"], seed="spring"))
        for league in ("open", "spring"):
            players = [make_bot("greedy", "g"), make_bot("random", "r")]
            record = match_record(play_match(rules, "deal", players), ["ann", "bob"], f"{league}/t1/g1")
            Ledger(arena.redis).commit(store.keys(league), "t1/g1", record, ["ann", "bob"], [CLEAN] * 2, 24, 1500)
        history = RatingHistory(arena.redis, arena.prefix)
        for p in POINTS:
            history.record("open", {"ann": p})
        site.wait_up()
        yield site
    finally:
        arena.close()


def test_the_api_serves_a_standing_bots_fitted_history_and_no_event_bot_gets_one(light: Site) -> None:
    assert light.api("/leagues/open/bots/ann")["fitted_history"] == [p.to_json() for p in POINTS]
    assert light.api("/leagues/open/bots/bob")["fitted_history"] == []
    assert "fitted_history" not in light.api("/leagues/spring/bots/ann")


def test_a_standing_bots_page_charts_its_fitted_rating_with_its_interval(light: Site, browser: Any) -> None:
    with open_tab(browser, light, DESKTOP) as tab:
        tab.open("/leagues/open/bots/ann")
        chart = tab.testid("fitted-chart")
        assert chart.get_attribute("data-points") == str(len(POINTS))
        assert chart.locator('[data-testid="chart-band"]').count() == 1
        assert chart.locator('[data-testid="chart-line"]').count() == 1
        titles = chart.locator("circle title").evaluate_all("nodes => nodes.map((n) => n.textContent)")
        assert len(titles) == 3, titles
        assert titles[1].endswith("after 40 result(s): 1540.0 (95%: 1481 – 1610)"), titles
        assert titles[0].endswith("after 2 result(s): 1512.3 (95%: 1320 – …)"), titles
        caption = tab.text("fitted-caption")
        assert "fitted rating" in caption and "95% interval (3 point(s)" in caption
        assert "ann" in chart.get_attribute("aria-label")
        assert tab.testid("rating-chart").count() == 1  # the form chart stays
        tab.screenshot("fitted-chart")
        tab.open("/leagues/open/bots/bob")  # no point yet: an empty chart that says so
        assert tab.testid("fitted-chart").get_attribute("data-points") == "0"
        assert "No fitted rating recorded yet" in tab.text("fitted-caption")


def test_an_event_leagues_bot_page_has_no_fitted_chart(light: Site, browser: Any) -> None:
    with open_tab(browser, light, DESKTOP) as tab:
        tab.open("/leagues/spring/bots/ann")
        assert tab.testid("rating-chart").count() == 1
        assert tab.testid("fitted-chart").count() == 0
        assert tab.page.locator("#fitted-panel").is_hidden()
