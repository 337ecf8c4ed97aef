"""Helpers of the web-ladder browser tests: the site under test and a browser tab that records.

A :class:`Site` is an arena (Redis prefix, engine service, Celery workers, bots)
whose league a real tournament has played, with ``tablanette web`` in front of
it. A :class:`Tab` is a Chromium page that records every request it makes and
every JavaScript error, so each test can check that nothing left 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena_harness import ROOT, Arena, Proc

CHROMIUM = os.environ.get("TABLANETTE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("TABLANETTE_ARTIFACTS", str(ROOT / "artifacts" / "screenshots")))
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 740}

LEAGUE = "ladder"
FAST_BOTS = {"ada-strong": "strong", "bo-greedy": "greedy", "cy-random": "random"}
SLOW_BOTS = {"slow-greedy": "greedy", "slow-random": "random"}
SLOW_THINK_MS = "20"


@dataclass
class Site:
    """The arena, its finished league and the web server in front of it."""

    arena: Arena
    base: str
    web: Proc

    def url(self, path: str) -> str:
        return self.base + path

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(self.base + "/api" + path, timeout=10) as res:
            return json.loads(res.read())

    def cli(self, *args: str, timeout: float = 120) -> str:
        done = self.arena.tablanette(*args, timeout=timeout)
        assert done.returncode == 0, f"tablanette {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def wait_up(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url("/api/health"), timeout=2) as res:
                    if res.status == 200:
                        return
            except OSError:
                pass
            if not self.web.alive():
                break
            time.sleep(0.1)
        raise RuntimeError(f"tablanette web did not answer at {self.base}:\n{self.web.text()}")


@dataclass
class Tab:
    """A browser page that records every request, JavaScript error and console error it sees."""

    page: Any
    site: Site
    requests: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def open(self, path: str) -> Any:
        """Load a page and wait until its script marks it ready (``body[data-ready]``)."""
        self.page.goto(self.site.url(path))
        self.page.wait_for_selector("body[data-ready]", timeout=15_000)
        return self.page

    def mark_document(self) -> None:
        """Tag the loaded document; :meth:`same_document` is true until the page reloads."""
        self.page.evaluate("window.__sameDocument = true")

    def same_document(self) -> bool:
        return bool(self.page.evaluate("window.__sameDocument === true"))

    def testid(self, tid: str) -> Any:
        return self.page.get_by_test_id(tid)

    def text(self, tid: str) -> str:
        return str(self.page.get_by_test_id(tid).inner_text()).strip()

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@contextmanager
def open_tab(browser: Any, site: Site, viewport: dict[str, int]) -> Iterator[Tab]:
    """A fresh browser context and page; on a clean exit, checks that only 127.0.0.1 was contacted."""
    context = browser.new_context(viewport=viewport, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(10_000)
    tab = Tab(page, site)
    page.on("request", lambda req: tab.requests.append(req.url))
    page.on("pageerror", lambda exc: tab.page_errors.append(str(exc)))
    page.on("console", lambda msg: tab.console_errors.append(msg.text) if msg.type == "error" else None)
    try:
        yield tab
        assert tab.requests, "the page made no request"
        outside = [u for u in tab.requests if not u.startswith("http://127.0.0.1")]
        assert not outside, f"requests left 127.0.0.1: {outside}"
        assert not tab.page_errors, f"JavaScript errors: {tab.page_errors}"
    finally:
        context.close()
