"""A hosted bot's own words: shown to its owner, to the public only by the owner's choice, and always printable.

A real ``tablanette web`` and the real CLI on a private Redis prefix. The version's
reports are written through the store exactly as a host writes them (its
program's latest output, a fault with its last lines, a build log, a note), each
laden with what a hostile program prints: the clipboard set by OSC 52, a window
title, the cursor moved back by CSI and a carriage return to forge "preflight
passed". A second record is written raw, as one kept before texts were cleaned.
Then, as an outsider: the JSON and the HTML page without the key show none of
it; with the owner key (a header, never in a URL) they show it cleaned; after
the owner opts in, everyone sees it; the operator's CLI prints it all, cleaned.

A fault's reason is served to everyone, so it must hold the arena's words only:
"leaky" is a real JSON-lines program run by the host's own bridge
(:class:`hosting.runners.HostedProgram`, its faults kept as a host keeps them),
which writes a canary on its standard error and then fails a turn: an answer that
is not JSON, a play that cannot be read (each with a canary of its own), an exit.
The public sees the reasons without a canary; its owner and the operator see
every canary, cleaned.
"""

from __future__ import annotations

import json
import sys
import time
import unicodedata
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from arena_harness import new_arena
from web_kit import DESKTOP, Site, open_tab

from bots.sdk import Clock
from cli.local import CLI, free_port
from engine_service.rules import Match, Rules
from hosting.runners import HostedProgram
from programs.bridge import BridgeError
from programs.child import Plain
from store.keys import Keys
from store.versions import Version, Versions
from web.queries import HIDDEN_REASON

ESC = "\x1b"
OUTPUT = [
    "thinking about turn 3",
    f"{ESC}]52;c;Y3VybCBldmlsLnNofHNo\x07clipboard-payload-line",
    f"{ESC}]0;ARENA-OWNED\x07secret-output-line",
    f"preflight: failed\r{ESC}[2K{ESC}[1Apreflight passed",
]
BUILD_LOG = f"compiling\n{ESC}[31msecret-build-line{ESC}[0m\n\u202etxt.exe\u202c\n"
FAULT = [f"Traceback{ESC}[8m hidden", "secret-fault-line\x08\x08\x08"]
SECRETS = ("clipboard-payload-line", "secret-output-line", "secret-build-line", "secret-fault-line", "thinking")


def printable(text: str) -> bool:
    return not any(ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in text)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, str]]:
    work = tmp_path_factory.mktemp("privacy")
    arena = new_arena("privacy", work)
    try:
        port = free_port()
        site = Site(arena, f"http://127.0.0.1:{port}", arena.spawn("web", [*CLI, "web", "--port", str(port)]))
        bot = work / "noisy"
        bot.mkdir()
        (bot / "bot.toml").write_text('language = "python"\nprotocol = "jsonlines"\nrun = ["python3", "bot.py"]\n')
        (bot / "bot.py").write_text("print('hi')\n")
        out = site.cli("bot", "submit", str(bot), "--name", "noisy")
        key = next(line for line in out.splitlines() if line.startswith("tbo_"))
        site.cli("bot", "submit", str(bot), "--name", "noisy")  # noisy@2: a record kept before cleaning

        versions = Versions(arena.redis, arena.prefix)  # what a host writes, through the store as it does

        def built(v: Version) -> None:
            v.build_log, v.build_seconds, v.state = BUILD_LOG, 1.5, "preflight"

        versions.update("noisy@1", built)
        versions.set_state("noisy@1", "ready", f"ok{ESC}]2;title\x07")
        versions.set_output("noisy@1", OUTPUT)
        versions.add_evidence("noisy@1", f"it exited with status 1{ESC}[5A", FAULT)
        old = versions.require("noisy@2")
        old.output, old.build_log, old.note = OUTPUT, BUILD_LOG, f"old note{ESC}]0;x\x07"
        old.evidence = [{"at": 1.0, "reason": "it exited", "output": FAULT}]
        arena.redis.hset(Keys(arena.prefix).versions("noisy"), "2", json.dumps(old.to_json()))  # never cleaned
        site.wait_up()
        yield site, key
    finally:
        arena.close()


def get(site: Site, path: str, key: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    req = urllib.request.Request(site.url(path), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def flip(site: Site, public: bool, key: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
    req = urllib.request.Request(
        site.url("/api/bots/noisy/output-visibility"),
        data=json.dumps({"public": public}).encode(),
        headers=headers,
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.mark.parametrize("number", [1, 2])
def test_the_public_json_holds_none_of_the_programs_words(site: tuple[Site, str], number: int) -> None:
    s, _ = site
    for key in (None, "tbo_not-the-key"):
        status, v = get(s, f"/api/bots/noisy/versions/{number}", key)
        raw = json.dumps(v)
        assert status == 200 and (v["output_shown"], v["owner"], v["output_public"]) == (False, False, False)
        assert v["output"] == [] and v["build_log"] == "" and all(e["output"] == [] for e in v["evidence"])
        assert not any(secret in raw for secret in SECRETS), raw
        assert printable("".join([v["note"], *(e["reason"] for e in v["evidence"])]))
        assert "\\u001b" not in raw and "\\u0007" not in raw


@pytest.mark.parametrize("number", [1, 2])
def test_the_owner_reads_it_all_cleaned_stored_before_or_after(site: tuple[Site, str], number: int) -> None:
    s, key = site
    status, v = get(s, f"/api/bots/noisy/versions/{number}", key)
    assert status == 200 and v["output_shown"] and v["owner"] and not v["output_public"]
    raw = json.dumps(v)
    assert "\\u001b" not in raw and "\\u0007" not in raw and "\\r" not in raw and "\\b" not in raw
    assert v["output"] == [
        "thinking about turn 3",
        "clipboard-payload-line",
        "secret-output-line",
        "preflight: failed preflight passed",  # both, on one line: nothing overwritten
    ]
    assert v["build_log"] == "compiling\nsecret-build-line\ntxt.exe\n"
    assert v["evidence"][0]["output"] == ["Traceback hidden", "secret-fault-line"]
    assert v["note"] in ("ok", "old note") and printable(v["evidence"][0]["reason"])


def test_the_owner_opts_in_and_out_and_only_the_owner_may(site: tuple[Site, str]) -> None:
    s, key = site
    for wrong in (None, "tbo_not-the-key"):
        status, body = flip(s, True, wrong)
        assert status == 401 and "owner key" in body["detail"], body
    assert get(s, "/api/bots/noisy/versions/1")[1]["output"] == []
    try:
        assert flip(s, True, key) == (200, {"bot": "noisy", "output_public": True})
        status, v = get(s, "/api/bots/noisy/versions/1")
        assert v["output_shown"] and not v["owner"] and v["output"][1] == "clipboard-payload-line"
        assert v["build_log"].startswith("compiling\n")
    finally:
        assert flip(s, False, key) == (200, {"bot": "noisy", "output_public": False})
    assert get(s, "/api/bots/noisy/versions/1")[1]["output"] == []


def test_the_operators_cli_prints_everything_and_nothing_a_terminal_obeys(site: tuple[Site, str]) -> None:
    s, _ = site
    for number in (1, 2):
        shown = s.cli("bot", "version", f"noisy@{number}", "--log")
        assert printable(shown), repr(shown)
        for line in ("clipboard-payload-line", "secret-build-line", "secret-fault-line", "failed preflight passed"):
            assert line in shown, shown
        as_json = s.cli("bot", "version", f"noisy@{number}", "--json")
        assert "\\u001b" not in as_json and "\\u0007" not in as_json and "secret-output-line" in as_json
    listed = s.cli("bot", "versions", "noisy")
    assert printable(listed) and "old note" in listed
    assert "its owner only" in s.cli("bot", "output", "noisy")
    try:
        assert "everyone" in s.cli("bot", "output", "noisy", "--public")
        assert get(s, "/api/bots/noisy/versions/1")[1]["output_shown"]
    finally:
        assert "its owner only" in s.cli("bot", "output", "noisy", "--private")
    done = s.arena.tablanette("bot", "output", "nobody-here")
    assert done.returncode != 0 and "no hosted bot named 'nobody-here'" in done.stderr


def test_a_lift_request_is_kept_printable(site: tuple[Site, str]) -> None:
    s, key = site
    s.cli("league", "create", "held-privacy")
    from store.leagues import LeagueStore

    leagues = LeagueStore(s.arena.redis, s.arena.prefix)
    assert leagues.quarantine("held-privacy", "noisy@1", "12 timeouts", "m1")
    body = json.dumps({"league": "held-privacy", "message": f"fixed\r{ESC}[2Klifted by the operator{ESC}]0;t\x07"})
    req = urllib.request.Request(
        s.url("/api/bots/noisy/versions/1/lift-request"),
        data=body.encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as res:
        assert res.status == 201
    kept = leagues.quarantined("held-privacy")["noisy@1"]["lift_request"]["message"]
    assert kept == "fixed lifted by the operator"
    status, only_escapes = 0, json.dumps({"league": "held-privacy", "message": f"{ESC}[2K\x07"})
    req = urllib.request.Request(
        s.url("/api/bots/noisy/versions/1/lift-request"),
        data=only_escapes.encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        method="POST",
    )
    try:
        urllib.request.urlopen(req, timeout=30)
    except urllib.error.HTTPError as err:
        status = err.code
    assert status == 422


def test_the_page_shows_the_programs_words_to_its_owner_only(browser: Any, site: tuple[Site, str]) -> None:
    s, key = site
    with open_tab(browser, s, DESKTOP) as tab:
        page = tab.open("/bots/noisy/versions/1")
        body = page.locator("body").inner_text()
        assert not any(secret in body for secret in SECRETS), body
        assert tab.testid("latest-output-private").count() == 1 and tab.testid("build-log-private").count() == 1
        assert tab.testid("fault-output-private").count() == 1 and tab.testid("fault-reason").count() == 1
        assert "Only this bot's owner" in tab.text("output-visibility")
        tab.testid("owner-view-key").fill("tbo_not-the-key")
        tab.testid("owner-view-button").click()
        page.wait_for_function("document.querySelector('[data-testid=owner-view-result]').textContent.length > 0")
        assert tab.text("owner-view-result") == "Not noisy's owner key."
        tab.testid("owner-view-key").fill(key)
        tab.testid("owner-view-button").click()
        page.wait_for_selector('[data-testid="latest-output"]')
        assert "clipboard-payload-line" in tab.text("latest-output")
        assert "preflight: failed preflight passed" in tab.text("latest-output")
        assert "secret-build-line" in tab.text("build-log") and "secret-fault-line" in tab.text("fault-output")
        assert not any(key in url for url in tab.requests)  # the key travels in a header, never in a URL
        tab.testid("visibility-button").click()  # the owner shows it to everyone
        page.wait_for_function(
            "document.querySelector('[data-testid=output-visibility]').textContent.startsWith('Everyone')"
        )
    try:
        with open_tab(browser, s, DESKTOP) as stranger:
            stranger.open("/bots/noisy/versions/1")
            assert "clipboard-payload-line" in stranger.text("latest-output")
            assert stranger.testid("owner-view-form").count() == 1 and stranger.testid("visibility-button").count() == 0
    finally:
        assert flip(s, False, key)[0] == 200


def test_the_bot_and_league_pages_json_is_printable_too(site: tuple[Site, str]) -> None:
    s, _ = site
    status, bot = get(s, "/api/bots/noisy")
    assert status == 200 and printable(json.dumps(bot, ensure_ascii=False))
    assert {v["note"] for v in bot["versions"]} == {"ok", "old note"}


LEAKY = """\
import json, sys, time
mode = sys.argv[1]
for line in sys.stdin:
    if json.loads(line)["type"] != "turn":
        continue
    print(f"stderr-canary-{mode}\\x1b]0;owned\\x07 Traceback", file=sys.stderr, flush=True)
    time.sleep(0.5)  # its error line is read before its answer fails
    if mode == "exit":
        sys.exit(3)
    if mode == "garbage":
        print("answer-canary-garbage \\x1b[2K{not json", flush=True)
    else:
        print(json.dumps({"play": "answer-canary-play"}), flush=True)
"""
MODES = {
    "garbage": "the answer was not JSON",
    "play": "its play could not be read",
    "exit": "it exited with status 3",
}
CANARIES = ("stderr-canary-", "answer-canary-")


@pytest.fixture(scope="module")
def leaky(site: tuple[Site, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """leaky@1, its faults kept by the host's bridge from a real program's three failed turns; its owner key."""
    s, _ = site
    work = tmp_path_factory.mktemp("leaky")
    (work / "bot.toml").write_text('language = "python"\nprotocol = "jsonlines"\nrun = ["python3", "bot.py"]\n')
    (work / "bot.py").write_text(LEAKY)
    out = s.cli("bot", "submit", str(work), "--name", "leaky")
    key = next(line for line in out.splitlines() if line.startswith("tbo_"))
    versions = Versions(s.arena.redis, s.arena.prefix)
    rules = Rules.preset("tablic-pagat")
    for mode in MODES:  # one game each: a game's first fault is kept
        bot = HostedProgram(
            [sys.executable, str(work / "bot.py"), mode],
            "leaky@1",
            lambda: Plain(work),
            lambda reason, output: versions.add_evidence("leaky@1", reason, output),  # as the host keeps it
        )
        match = Match(rules, f"leaky-{mode}")
        bot.new_match(rules, match.turn)
        with pytest.raises(BridgeError) as err:
            bot.choose(match.observation(match.turn), Clock(5000))
        assert f"-canary-{mode}" in str(err.value)  # its log line (the operator's) quotes the program
        bot.end_match({"winner": None, "reason": "aborted", "score": [0, 0]})
    return key


def test_a_faults_public_reason_holds_the_arenas_words_only(site: tuple[Site, str], leaky: str) -> None:
    s, _ = site
    started = time.monotonic()
    status, public = get(s, "/api/bots/leaky/versions/1")
    raw = json.dumps(public)
    assert status == 200 and not public["output_shown"], public
    assert [e["reason"] for e in public["evidence"]] == list(reversed(MODES.values())), public["evidence"]
    assert not any(canary in raw for canary in CANARIES), raw
    assert all(e["output"] == [] for e in public["evidence"])

    status, mine = get(s, "/api/bots/leaky/versions/1", leaky)
    assert status == 200 and mine["owner"]
    assert [e["reason"] for e in mine["evidence"]] == list(reversed(MODES.values()))
    said = {mode: e["output"] for mode, e in zip(reversed(MODES), mine["evidence"], strict=True)}
    for mode, lines in said.items():
        assert f"stderr-canary-{mode} Traceback" in lines, lines  # its error line, the escape gone
        assert all(printable(line) for line in lines), lines
    assert any("answer-canary-garbage" in line and line.startswith("its answer: ") for line in said["garbage"])
    assert any("answer-canary-play" in line for line in said["play"])
    assert not any("answer-canary" in line for line in said["exit"])

    printed = s.cli("bot", "version", "leaky@1", "--log")  # the operator's
    assert printable(printed) and "the answer was not JSON" in printed, printed
    for canary in ("stderr-canary-garbage", "answer-canary-garbage", "stderr-canary-exit", "answer-canary-play"):
        assert canary in printed, printed

    # a fault kept before reasons were kept apart (its reason may quote the program): its owner's only
    status, old = get(s, "/api/bots/noisy/versions/2")
    assert [e["reason"] for e in old["evidence"]] == [HIDDEN_REASON]
    assert [e["reason"] for e in get(s, "/api/bots/noisy/versions/2", site[1])[1]["evidence"]] == ["it exited"]
    print(f"public and owner views of a leaky program's faults checked in {time.monotonic() - started:.1f} s")


def test_a_faults_page_shows_no_canary_to_the_public(browser: Any, site: tuple[Site, str], leaky: str) -> None:
    s, _ = site
    with open_tab(browser, s, DESKTOP) as tab:
        page = tab.open("/bots/leaky/versions/1")
        page.wait_for_selector('[data-testid="fault-reason"]')
        body = page.locator("body").inner_text()
        assert "the answer was not JSON" in body and "it exited with status 3" in body, body
        assert not any(canary in body for canary in CANARIES), body
        assert not any(canary in page.content() for canary in CANARIES)
        tab.testid("owner-view-key").fill(leaky)
        tab.testid("owner-view-button").click()
        page.wait_for_selector('[data-testid="fault-output"]')
        shown = " ".join(tab.testid("fault-output").all_inner_texts())
        assert "stderr-canary-garbage" in shown and "answer-canary-garbage" in shown, shown
