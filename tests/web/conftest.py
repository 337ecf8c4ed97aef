"""The web ladder in a real browser, against a league a real tournament has just played.

One arena per module: Redis on a private prefix, an engine service, two Celery
workers, Python bots (three fast ones for the finished league, two slow ones for
the live-progress test), a league played with the ``tablanette`` CLI, and
``tablanette web`` on a free port. Debian's Chromium runs headless under
Playwright; screenshots go to ``$TABLANETTE_ARTIFACTS`` (default
``artifacts/screenshots``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena_harness import new_arena
from tiers import tier
from web_kit import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    FAST_BOTS,
    LEAGUE,
    SLOW_BOTS,
    SLOW_THINK_MS,
    Site,
    Tab,
    open_tab,
)

from cli.local import CLI, free_port

sync_api = pytest.importorskip("playwright.sync_api")

pytest_collection_modifyitems = tier(__file__, "server")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A league played end to end by real workers and bots, served by ``tablanette web``."""
    arena = new_arena("web", tmp_path_factory.mktemp("web"))
    try:
        _, port = arena.start_engine()
        for name, kind in FAST_BOTS.items():
            arena.start_python_bot(kind, name, arena.add_bot(name), port)
        for name, kind in SLOW_BOTS.items():
            arena.start_python_bot(kind, name, arena.add_bot(name), port, "--think-ms", SLOW_THINK_MS)
        for i in (1, 2):
            arena.start_worker(f"w{i}")
        web_port = free_port()
        site = Site(arena, f"http://127.0.0.1:{web_port}", arena.spawn("web", [*CLI, "web", "--port", str(web_port)]))
        arena.wait_connected(*FAST_BOTS, *SLOW_BOTS)
        clocks = ("--latency-credit-ms", "300", "--time-bank-ms", "5000")  # shown on the league page
        site.cli("league", "create", LEAGUE, "--games", "2", "--rule", "target=31", *clocks)
        site.cli("league", "add-bot", LEAGUE, *FAST_BOTS)
        site.cli("league", "start", LEAGUE, "--window", "4", timeout=180)
        site.wait_up()
        yield site
    finally:
        arena.close()  # stops every process and clears the prefix


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(headless=True, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def tab(browser: Any, site: Site) -> Iterator[Tab]:
    """A desktop-sized page; afterwards checked: only 127.0.0.1 contacted, no JavaScript error."""
    with open_tab(browser, site, DESKTOP) as t:
        yield t
