"""A stranger's whole path, with no operator command in between: from the front page (or a terminal with no way
to reach the arena's Redis) to an account, a hosted bot that is built, preflighted and rated, and a connected
bot's token that a running bot plays with.

The operator's part comes first and is all there is: an arena (engine, two workers, a bot host, the web
server), sign-up opened, and an open standing ladder (``--format standing --admit accounts``) with one house
bot, its feeder running. Everything after is the stranger's: in Chromium through the pages alone, and with
``tablanette login`` / ``tablanette remote`` alone. A bot is *rated* once the ladder the public reads counts a
finished game of it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from arena_harness import ROOT, new_arena, readable_folder
from web_kit import DESKTOP, Site, open_tab

from cli.local import CLI, free_port
from programs.sandbox import unavailable
from store.accounts import Accounts

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}"),
]

LADDER = "open"
PASSWORD = "correct horse battery"
JSONLINES = ROOT / "bots" / "jsonlines"
NO_REDIS = "redis://127.0.0.1:1/0"
"""Where the remote CLI is told its Redis is: nothing listens there, so any use of Redis would fail."""
RATED_WITHIN = 240.0
"""Seconds from a bot's first upload or connection to its first rated game: a build, a preflight of a few
games, the feeder's next look for newcomers (every 5 s) and a pair of games, on a loaded 2-core machine."""


@dataclass
class Arena:
    site: Site
    engine_port: int


@pytest.fixture(scope="module")
def arena() -> Iterator[Arena]:
    with readable_folder("stranger") as work:
        lab = new_arena("stranger", work / "arena")
        lab.extra_env["TABLANETTE_SIGNUPS_PER_HOUR"] = "100"  # both strangers sign up from 127.0.0.1
        try:
            _, port = lab.start_engine()
            lab.start_workers(2)
            lab.start_python_bot("greedy", "house", lab.add_bot("house"), port, "--think-ms", "2")
            lab.spawn("host", [*CLI, "host", "--dir", str(work / "hosted"), "--address", f"127.0.0.1:{port}"])
            web_port = free_port()
            site = Site(lab, f"http://127.0.0.1:{web_port}", lab.spawn("web", [*CLI, "web", "--port", str(web_port)]))
            lab.wait_connected("house")
            site.cli("account", "policy", "open")
            site.cli("league", "create", LADDER, "--format", "standing", "--admit", "accounts")
            site.cli("league", "add-bot", LADDER, "house")
            lab.spawn("feeder", [*CLI, "league", "start", LADDER, "--window", "2"])
            site.wait_up()
            yield Arena(site, port)
        finally:
            lab.close()


def ladder_games(site: Site, bot: str) -> int:
    """The games the public ladder's rating of ``bot`` is fitted on (0 while it is not on it)."""
    rows = site.api(f"/leagues/{LADDER}/ladder?limit=1000")["rows"]
    return next((int(r.get("rated_games") or 0) for r in rows if r["bot"] == bot), 0)


def wait_rated(arena: Arena, bot: str) -> None:
    arena.site.arena.wait_until(
        lambda: ladder_games(arena.site, bot) > 0,
        lambda: f"{bot} rated on {LADDER}: the ladder reads {arena.site.api(f'/leagues/{LADDER}/ladder')['rows']}",
        RATED_WITHIN,
    )


def archive_of(folder: Path, into: Path) -> Path:
    archive = into / f"{folder.name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=".")
    return archive


# ------------------------------------------------------------------ in the browser


def test_a_stranger_in_the_browser_gets_a_rated_hosted_bot_and_a_connected_bots_token(
    browser: Any, arena: Arena, tmp_path: Path
) -> None:
    with open_tab(browser, arena.site, DESKTOP) as tab:
        page = tab.open("/")
        tab.testid("signup-link").click()
        page.wait_for_url("**/signup")
        page.wait_for_selector("body[data-ready]")
        tab.testid("signup-name").fill("wanderer")
        tab.testid("signup-password").fill(PASSWORD)
        tab.testid("signup-password2").fill(PASSWORD)
        tab.testid("signup-button").click()
        page.wait_for_url("**/account")
        page.wait_for_selector("body[data-ready]")

        tab.testid("hosted-name").fill("wander-perl")
        tab.testid("archive").set_input_files(str(archive_of(JSONLINES, tmp_path)))
        tab.testid("upload-button").click()
        page.wait_for_selector('[data-testid="upload-result"][data-version="wander-perl@1"]')
        # the account page follows the build and the preflight by itself, to "ready"
        page.wait_for_selector(
            '[data-testid="my-version"][data-version="wander-perl@1"][data-state="ready"]',
            timeout=RATED_WITHIN * 1000,
        )

        tab.testid("connected-name").fill("wander-py")
        tab.testid("connected-button").click()
        page.wait_for_selector('[data-testid="new-token"] [data-testid="secret-value"]')
        command = tab.text("connect-command")
        # the page's own command, with the engine's address the operator would give
        env = dict(re.findall(r"(TABLANETTE_\w+)=(\S+)", command))
        assert env["TABLANETTE_ADDRESS"] == "HOST:PORT" and command.endswith("tablanette bot run greedy --as wander-py")
        env["TABLANETTE_ADDRESS"] = f"127.0.0.1:{arena.engine_port}"
        arena.site.arena.spawn("wander-py", [*CLI, "bot", "run", "greedy", "--as", "wander-py"], env)

        for bot in ("wander-perl@1", "wander-py"):
            wait_rated(arena, bot)
        page = tab.open("/")  # and it is there for everyone to see, from the front page
        page.locator(f'[data-testid="league-row"][data-league="{LADDER}"] a').first.click()
        page.wait_for_url(f"**/leagues/{LADDER}")
        page.wait_for_selector("body[data-ready]")
        assert tab.text("progress-text").endswith("matches played; it plays on, with no end")  # no total, no ETA
        assert tab.testid("progress-eta").count() == 0
        for bot in ("wander-perl@1", "wander-py"):
            row = page.locator(f'[data-testid="ladder-row"][data-bot="{bot}"]')
            row.wait_for()
            assert int(row.locator('[data-col="games"]').inner_text()) > 0
        tab.screenshot("stranger-rated")
    assert Accounts(arena.site.arena.redis, arena.site.arena.prefix).owner_of("wander-perl") == "wanderer"


# ------------------------------------------------------------------ from a terminal


def remote(home: Path, *args: str, stdin: str = "") -> str:
    """``tablanette`` as the stranger's machine runs it: its own home and config, no way to reach Redis."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLANETTE_")}
    env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "TABLANETTE_REDIS_URL": NO_REDIS}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=60, env=env, cwd=home)
    assert done.returncode == 0, f"tablanette {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_a_stranger_at_a_terminal_gets_a_rated_hosted_bot_and_a_connected_bots_token(
    arena: Arena, tmp_path: Path
) -> None:
    base = arena.site.base
    out = remote(tmp_path, "login", base, "--sign-up", "--name", "terminal", "--password-stdin", stdin=PASSWORD + "\n")
    assert f"signed up and logged in to {base} as terminal" in out

    out = remote(tmp_path, "remote", "bot", "submit", "term-perl", str(JSONLINES))
    assert out.startswith("submitted term-perl@1: ")
    arena.site.arena.wait_until(
        lambda: re.search(r"term-perl@1\s+ready\b", remote(tmp_path, "remote", "bot", "status", "term-perl")),
        lambda: remote(tmp_path, "remote", "bot", "status", "term-perl"),
        RATED_WITHIN,
    )

    out = remote(tmp_path, "remote", "bot", "create", "term-py")
    token = out.splitlines()[1]
    assert token.startswith("tbl_"), out
    arena.site.arena.spawn(
        "term-py",
        [*CLI, "bot", "run", "greedy", "--as", "term-py", "--address", f"127.0.0.1:{arena.engine_port}"],
        {"TABLANETTE_TOKEN": token},
    )

    for bot in ("term-perl@1", "term-py"):
        wait_rated(arena, bot)
    shown = remote(tmp_path, "remote", "ladder", LADDER)
    for bot in ("term-perl@1", "term-py"):
        row = next(line for line in shown.splitlines() if f" {bot} " in f" {line} ")
        games = int(re.split(r"\s{2,}", row.strip())[4])
        assert games > 0, shown
    status = remote(tmp_path, "remote", "bot", "status", "term-perl")
    assert re.search(rf"league {LADDER}: term-perl@1 rating \d+, [1-9]\d* games", status), status


# ------------------------------------------------------------------ the operator's seasons, as spectators see them

HOSTILE_LABEL = '<img src=x onerror="window.__pwned=1">'


def test_seasons_kept_are_listed_on_the_ladders_page_and_each_shows_the_ladder_it_kept(
    browser: Any, arena: Arena
) -> None:
    lab = arena.site.arena
    lab.start_python_bot("random", "visitor", lab.add_bot("visitor"), arena.engine_port, "--think-ms", "2")
    lab.wait_connected("visitor")
    arena.site.cli("league", "add-bot", LADDER, "visitor")
    wait_rated(arena, "visitor")
    out = arena.site.cli("league", "season", LADDER, "--label", HOSTILE_LABEL)
    assert "season 1" in out.lower(), out
    kept = arena.site.api(f"/leagues/{LADDER}/seasons/1")
    assert kept["rows"] and kept["label"] == HOSTILE_LABEL
    arena.site.cli("league", "season", LADDER, "--label", "second", "--new")
    assert arena.site.api(f"/leagues/{LADDER}/ladder")["season_from"] >= kept["results"]

    with open_tab(browser, arena.site, DESKTOP) as tab:
        page = tab.open(f"/leagues/{LADDER}")
        page.wait_for_selector("#seasons-panel:not([hidden])")
        seasons = page.locator('[data-testid="season"]')
        assert seasons.count() == 2 and seasons.first.inner_text().startswith("Season 2: second")
        seasons.nth(1).locator("a").click()
        page.wait_for_url(f"**/leagues/{LADDER}/seasons/1")
        page.wait_for_selector("body[data-ready]")
        assert HOSTILE_LABEL in page.locator("#season-name").inner_text()  # the label, as text
        shown = page.locator('[data-testid="season-row"]').evaluate_all("rs => rs.map(r => r.dataset.bot)")
        assert shown == [r["bot"] for r in kept["rows"]]
        assert page.evaluate("window.__pwned") is None and page.locator("img[src=x]").count() == 0
        tab.screenshot("season-kept")
