"""A replay written to a file (``tablanette replay``) works in Chromium from disk: no server, nothing fetched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from web_kit import DESKTOP

from bots import make_bot
from engine_service.rules import Rules
from scheduler.local_games import Entry, play_series
from web.replay_file import replay_html

HOSTILE = '<img src=x onerror="document.title=1">'


def test_a_replay_page_from_disk_steps_through_the_match(browser: Any, tmp_path: Path) -> None:
    records: list[Any] = []
    entries = [Entry(HOSTILE, lambda seed: make_bot("greedy", seed)), Entry("random", lambda s: make_bot("random", s))]
    play_series(Rules.preset("tablic", target=21), entries, 1, "file", on_record=records.append)
    page_file = tmp_path / "replay.html"
    page_file.write_text(replay_html(records[0], "games.jsonl"))

    context = browser.new_context(viewport=DESKTOP, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(10_000)
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(page_file.as_uri())
        page.wait_for_selector("body[data-ready]")
        assert page.get_by_test_id("frame-counter").inner_text() == "Deal 1 · dealt"
        page.keyboard.press("ArrowRight")
        assert page.get_by_test_id("frame-counter").inner_text() != "Deal 1 · dealt"
        assert page.get_by_test_id("luck-curve").count() == 1
        names = page.locator(".seat-head .name").all_inner_texts()
        assert HOSTILE in names  # shown as text
        assert page.locator("img[src=x]").count() == 0 and page.title() != "1"
        assert "games.jsonl" in page.locator("#crumbs").inner_text()
        assert page.locator("#site-header a").count() == 0  # no links to pages that are not there
    finally:
        context.close()
    assert requests == [page_file.as_uri()], f"the page fetched more than itself: {requests}"
    assert not errors, f"JavaScript errors: {errors}"
