"""The hosted bots' pages in a real browser: a version's state, preflight, build log, faults and quarantine.

A real arena with a host (`tablanette host`): "sleepy" is a Python gRPC bot that
ignores the clock and takes a second a move: it passes its preflight (2 s a
move, the default), and a rated league with 300 ms a move quarantines it; "crasher" dies on
start, so its preflight fails, after printing what a hostile program prints (a
window title, a carriage return and an erased line to forge "preflight passed").
Their pages must say so, with the evidence: the quarantine's reason, the
program's own last output (to its owner, made printable), the sandbox's reason
for each end.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_harness import new_arena, readable_folder
from web_kit import DESKTOP, Site, open_tab

from cli.local import CLI, free_port
from programs.sandbox import unavailable
from store.leagues import LeagueStore
from store.versions import Versions

pytestmark = pytest.mark.skipif(bool(unavailable()), reason=f"no sandbox here: {unavailable()}")

SLEEPY = """\
import logging, os, sys, time
from bots import Bot
from bots.sdk import BotClient


class Sleepy(Bot):
    name, version = "sleepy", "1"

    def new_match(self, rules, seat):
        self.rules = rules

    def choose(self, observation):
        if self.rules.move_time_ms < 1000:  # it ignores the clock: 1 s a move is fine only under the default 2 s
            print(f"thinking hard about turn {observation.turn}", file=sys.stderr, flush=True)
            time.sleep(1.0)
        return max(observation.legal_plays, key=lambda play: len(play.captured))


BotClient(Sleepy, os.environ["TABLANETTE_ADDRESS"], os.environ["TABLANETTE_TOKEN"],
          name=os.environ["TABLANETTE_BOT_NAME"], max_games=2).run_forever()
"""
CRASHER = (
    "import sys\n"
    'print("loading the opening book\\x1b]0;arena owned\\x07\\r\\x1b[2Kpreflight passed", flush=True)\n'
    'sys.exit("RuntimeError: book.bin is corrupt")\n'
)


def bot_folder(into: Path, name: str, program: str) -> Path:
    folder = into / name
    folder.mkdir()
    (folder / "bot.toml").write_text('language = "python"\nprotocol = "grpc"\nrun = ["python3", "bot.py"]\n')
    (folder / "bot.py").write_text(program)
    return folder


OWNER_KEYS: dict[str, str] = {}
"""Each hosted bot's owner key, as `tablanette bot submit` printed it."""


def as_owner(tab: Any, bot: str) -> None:
    """Read the page as the bot's owner (its program's own words are shown to it only)."""
    tab.testid("owner-view-key").fill(OWNER_KEYS[bot])
    tab.testid("owner-view-button").click()
    tab.page.wait_for_selector('[data-testid="visibility-button"]')


@pytest.fixture(scope="module")
def hosted_site() -> Iterator[Site]:
    with readable_folder("hosted-web") as work:
        yield from _hosted_site(work)


def _hosted_site(work: Path) -> Iterator[Site]:
    arena = new_arena("hostedweb", work / "arena")
    try:
        _, port = arena.start_engine()
        arena.start_workers(2)
        arena.start_python_bot("greedy", "rival", arena.add_bot("rival"), port)
        arena.spawn("host", [*CLI, "host", "--dir", str(work / "hosted"), "--address", f"127.0.0.1:{port}"])
        web_port = free_port()
        site = Site(arena, f"http://127.0.0.1:{web_port}", arena.spawn("web", [*CLI, "web", "--port", str(web_port)]))
        for name, program in (("sleepy", SLEEPY), ("crasher", CRASHER)):
            out = site.cli("bot", "submit", str(bot_folder(work, name, program)), "--name", name)
            OWNER_KEYS[name] = next(line for line in out.splitlines() if line.startswith("tbo_"))
        versions, leagues = Versions(arena.redis, arena.prefix), LeagueStore(arena.redis, arena.prefix)
        arena.wait_until(
            lambda: (
                {versions.require(n).state for n in ("sleepy@1", "crasher@1")}
                <= {"ready", "preflight-failed", "build-failed"}
            ),
            "the preflights",
            300,
        )
        assert versions.require("sleepy@1").state == "ready", versions.require("sleepy@1")
        site.cli(
            "league", "create", "rated", "--games", "4", "--rule", "move_time_ms=300", "--quarantine-timeouts", "2"
        )
        site.cli("league", "add-bot", "rated", "sleepy@latest", "rival")
        arena.spawn("league", [*CLI, "league", "start", "rated"])  # holds sleepy's matches once quarantined
        arena.wait_until(lambda: "sleepy@1" in leagues.quarantined("rated"), "the quarantine", 300)
        arena.wait_until(
            lambda: any("thinking hard" in line for line in versions.require("sleepy@1").output),
            "its output on its page",
            300,
        )
        site.wait_up()
        yield site
    finally:
        arena.close()


def test_a_quarantined_versions_page_gives_the_reason_and_its_own_output(browser: Any, hosted_site: Site) -> None:
    with open_tab(browser, hosted_site, DESKTOP) as tab:
        page = tab.open("/bots/sleepy/versions/1")
        flag = tab.testid("quarantine")
        assert flag.count() == 1
        text = flag.inner_text()
        assert "Quarantined in league rated" in text and "timeout" in text, text
        assert "tablanette league lift rated sleepy@1" in text
        assert tab.testid("latest-output-private").count() == 1
        as_owner(tab, "sleepy")
        # its own lines, as the store keeps them: the last 40, which may by now hold only the SDK's notes on
        # its late answers ("play rejected: ..."; the fixture saw "thinking hard" reach the store); CI saw that
        shown = tab.text("latest-output")
        kept = Versions(hosted_site.arena.redis, hosted_site.arena.prefix).require("sleepy@1").output
        assert shown and any(line in shown for line in kept), (shown, kept)
        assert tab.text("preflight-verdict").startswith("Passed: 4 of 4 games")
        row = page.locator('[data-testid="league-row"][data-league="rated"]')
        assert "quarantined" in row.inner_text()
        assert tab.text("status") == "ready"
        tab.screenshot("hosted-version-quarantined")


def test_a_crashed_versions_page_shows_each_end_with_the_sandboxs_reason_and_its_last_output(
    browser: Any, hosted_site: Site
) -> None:
    with open_tab(browser, hosted_site, DESKTOP) as tab:
        tab.open("/bots/crasher/versions/1")
        assert tab.text("status") == "preflight-failed"
        assert "its program ended 3 time(s)" in tab.page.locator("#version-sub").inner_text()
        reasons = tab.testid("fault-reason").all_inner_texts()
        assert len(reasons) >= 3 and all(r == "it exited with status 1" for r in reasons), reasons
        assert "RuntimeError" not in tab.page.locator("body").inner_text()
        as_owner(tab, "crasher")
        shown = tab.testid("fault-output").first.inner_text()
        assert "RuntimeError: book.bin is corrupt" in shown
        assert "loading the opening book preflight passed" in shown and "arena owned" not in shown, shown
        assert tab.testid("quarantine").count() == 0
    printed = hosted_site.cli("bot", "version", "crasher@1", "--log")
    assert "loading the opening book preflight passed" in printed
    assert not any(ch in printed for ch in "\x1b\x07\r\x9b\x9d"), repr(printed)


def test_the_bots_versions_and_the_index_link_to_each_other(browser: Any, hosted_site: Site) -> None:
    with open_tab(browser, hosted_site, DESKTOP) as tab:
        page = tab.open("/")
        assert set(tab.testid("hosted-bot").evaluate_all("els => els.map(e => e.dataset.bot)")) == {"sleepy", "crasher"}
        page.get_by_role("link", name="sleepy", exact=True).click()
        page.wait_for_selector("body[data-ready]")
        row = page.locator('[data-testid="version-row"][data-version="sleepy@1"]')
        assert row.get_attribute("data-state") == "ready"
        assert "quarantined" in row.locator('[data-league="rated"]').inner_text()
        tab.open("/leagues/rated/bots/sleepy@1")
        tab.testid("version-link").click()
        page.wait_for_url("**/bots/sleepy/versions/1")
        page.wait_for_selector("body[data-ready]")
        assert tab.testid("quarantine").count() == 1


def test_a_replay_and_the_bot_page_name_a_hosted_version_as_its_league_does(browser: Any, hosted_site: Site) -> None:
    """The record says what played (a hosted version: ``sleepy@1``); the replay's seats link to the league's
    own page of that version, not to a name with its ``@1`` cut off; ``/bots/sleepy`` shows the league too."""
    leagues = LeagueStore(hosted_site.arena.redis, hosted_site.arena.prefix)
    finished = [m for m in leagues.match_ids("rated") if leagues.match("rated", m).get("status") == "done"]
    assert finished, "the rated league finished no match before the quarantine"
    mid = finished[0]
    data = hosted_site.api(f"/leagues/rated/replays/{mid}")
    assert sorted(data["seats"]) == ["rival", "sleepy@1"]
    assert "sleepy@1" in data["record"]["players"]
    profile = hosted_site.api("/bots/sleepy")
    assert profile["hosted"] and [(s["league"], s["name"]) for s in profile["leagues"] if not s["preflight"]] == [
        ("rated", "sleepy@1")
    ]
    with open_tab(browser, hosted_site, DESKTOP) as tab:
        page = tab.open(f"/leagues/rated/replay/{mid}")
        links = page.locator('[data-testid="seat-link"]').evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert sorted(links) == ["/leagues/rated/bots/rival", "/leagues/rated/bots/sleepy%401"]


def test_the_owner_submits_a_new_version_through_the_form(browser: Any, hosted_site: Site, tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "sleepy-2", SLEEPY.replace("< 1000", "< 0"))  # the fix: it no longer dawdles
    archive = tmp_path / "sleepy-2.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=".")
    with open_tab(browser, hosted_site, DESKTOP) as tab:
        page = tab.open("/bots/sleepy")
        tab.testid("owner-key").fill("tbo_not-the-key")
        tab.testid("archive").set_input_files(str(archive))
        tab.testid("submit-button").click()
        page.wait_for_function("document.querySelector('#submit-result').textContent.startsWith('Not submitted')")
        assert "not sleepy's owner:" in tab.text("submit-result")
        tab.testid("owner-key").fill(OWNER_KEYS["sleepy"])
        tab.testid("submit-button").click()
        page.wait_for_selector('[data-testid="submit-result"][data-version="sleepy@2"]')
        assert tab.text("submit-result").startswith("Submitted sleepy@2")
        page.wait_for_selector(
            '[data-testid="version-row"][data-version="sleepy@2"][data-state="ready"]', timeout=120_000
        )
        tab.screenshot("hosted-bot-submitted")


def test_the_owner_asks_for_the_quarantine_to_be_lifted_from_the_versions_page(browser: Any, hosted_site: Site) -> None:
    arena = hosted_site.arena
    with open_tab(browser, hosted_site, DESKTOP) as tab:
        page = tab.open("/bots/sleepy/versions/1")
        flag = page.locator('[data-testid="quarantine"][data-league="rated"]')
        flag.get_by_test_id("lift-message").fill("sleepy@2 no longer dawdles: it answers at once")
        flag.get_by_test_id("lift-key").fill("tbo_not-the-key")
        flag.get_by_test_id("lift-button").click()
        page.wait_for_function("document.querySelector('[data-testid=lift-result]').textContent.startsWith('Not sent')")
        assert "not sleepy's owner:" in tab.text("lift-result")
        assert "lift_request" not in LeagueStore(arena.redis, arena.prefix).quarantined("rated")["sleepy@1"]
        flag.get_by_test_id("lift-key").fill(OWNER_KEYS["sleepy"])
        flag.get_by_test_id("lift-button").click()
        page.wait_for_selector('[data-testid="lift-request"]')
        shown = tab.text("lift-request")
        assert shown.startswith("Its owner asked for a lift on") and "sleepy@2 no longer dawdles" in shown, shown
        assert tab.testid("lift-form").count() == 0
        tab.screenshot("hosted-version-lift-asked")
    held = LeagueStore(arena.redis, arena.prefix).quarantined("rated")["sleepy@1"]
    assert held["lift_request"]["message"] == "sleepy@2 no longer dawdles: it answers at once"
    assert "its owner asks for a lift" in " ".join(hosted_site.cli("league", "status", "rated").split())
