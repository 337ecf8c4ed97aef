"""The front door in a real browser: a stranger signs up, makes a connected bot and a hosted one, and manages
its keys and password, with no operator in between but the one who opened sign-up.

A light arena: ``tablanette web`` on a fresh prefix of its own (no engine, worker or host: a token is checked
in the store, and an uploaded version waits, "submitted", for a host that this test does not need). Hostile
text (names, labels) must come back as text and run nothing, and one account must see and touch nothing of
another's.
"""

from __future__ import annotations

import json
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_harness import ROOT, new_arena
from web_kit import DESKTOP, PHONE, Site, Tab, open_tab

from cli.local import CLI, free_port
from hosting.source import pack
from store.accounts import Accounts
from store.tokens import BotTokens
from store.versions import Versions

PASSWORD = "correct horse battery"
JSONLINES = ROOT / "bots" / "jsonlines"
HOSTILE = [
    '<img src=x onerror="window.__pwned=1;alert(document.domain)">',
    "<script>window.__pwned=2;alert(1)</script>",
]


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    arena = new_arena("door", tmp_path_factory.mktemp("door"))
    try:
        port = free_port()
        env = {"TABLANETTE_SIGNUPS_PER_HOUR": "100"}  # every account here signs up from 127.0.0.1
        site = Site(arena, f"http://127.0.0.1:{port}", arena.spawn("web", [*CLI, "web", "--port", str(port)], env))
        site.wait_up()
        accounts(site).set_policy("open")  # the operator's one act; the policy test closes it for a while
        yield site
    finally:
        arena.close()


@pytest.fixture
def tab(browser: Any, door: Site) -> Iterator[Tab]:
    """A desktop tab that also refuses any dialog a script would open (and remembers it)."""
    with open_tab(browser, door, DESKTOP) as t:
        t.page.on("dialog", lambda d: (t.page_errors.append(f"dialog: {d.message}"), d.dismiss()))
        yield t


def accounts(site: Site) -> Accounts:
    return Accounts(site.arena.redis, site.arena.prefix)


def sign_up(tab: Tab, name: str, password: str = PASSWORD) -> None:
    page = tab.open("/signup")
    tab.testid("signup-name").fill(name)
    tab.testid("signup-password").fill(password)
    tab.testid("signup-password2").fill(password)
    tab.testid("signup-button").click()
    page.wait_for_url("**/account")
    page.wait_for_selector("body[data-ready]")
    assert tab.text("account-name") == name


def result_of(tab: Tab, testid: str, starts: str) -> str:
    """The text of a result line once it says how the call went (it starts with ``starts``)."""
    tab.page.wait_for_function(
        "([id, s]) => (document.querySelector(`[data-testid=${id}]`).textContent || '').startsWith(s)",
        arg=[testid, starts],
    )
    return tab.text(testid)


def api_as(site: Site, path: str, key: str) -> tuple[int, Any]:
    req = urllib.request.Request(site.url("/api" + path), headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return int(res.status), json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def in_page(tab: Tab, method: str, path: str) -> tuple[int, str]:
    """A call made by the page's own session (cookie and CSRF token), as a script of the page would."""
    return tuple(  # type: ignore[return-value]
        tab.page.evaluate(
            """async ([method, path]) => {
                const s = await (await fetch('/api/session')).json();
                const r = await fetch(path, {method, headers: {'X-CSRF-Token': s.csrf || ''}});
                const body = await r.json().catch(() => ({}));
                return [r.status, String(body.detail || '')];
            }""",
            [method, path],
        )
    )


def jsonlines_archive(into: Path) -> Path:
    archive = into / "jsonlines.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(JSONLINES, arcname=".")
    return archive


# ------------------------------------------------------------------ the policy


def test_a_closed_or_invite_only_arena_says_so_and_an_invite_code_lets_one_in(tab: Tab, door: Site) -> None:
    try:
        closed_then_invite(tab, door)
    finally:
        accounts(door).set_policy("open")


def closed_then_invite(tab: Tab, door: Site) -> None:
    accounts(door).set_policy("closed")
    page = tab.open("/signup")
    assert tab.testid("signup-closed").is_visible()
    assert "closed on this arena" in tab.text("signup-closed")
    assert not tab.testid("signup-form").is_visible()
    accounts(door).set_policy("invite")
    page = tab.open("/signup")
    assert tab.testid("signup-invite").is_visible()
    for field in ("signup-name", "signup-password", "signup-password2"):
        tab.testid(field).fill("invitee" if field == "signup-name" else PASSWORD)
    tab.testid("signup-invite").fill("tbi_not-a-code")
    tab.testid("signup-button").click()
    said = result_of(tab, "signup-result", "Not signed up")
    assert said == "Not signed up: sign-up needs an invite code from the operator (unknown, used or expired)"
    tab.testid("signup-invite").fill(accounts(door).issue_invite())
    tab.testid("signup-button").click()
    page.wait_for_url("**/account")
    page.wait_for_selector("body[data-ready]")
    assert tab.text("account-name") == "invitee"


# ------------------------------------------------------------------ a stranger's way in


def test_a_stranger_signs_up_and_runs_a_connected_bot_and_a_hosted_one(tab: Tab, door: Site, tmp_path: Path) -> None:
    page = tab.open("/")
    page.wait_for_selector('[data-testid="site-account"][data-state="out"]')
    tab.testid("signup-link").click()
    page.wait_for_url("**/signup")
    page.wait_for_selector("body[data-ready]")
    assert tab.text("policy-hint") == "open to anyone"
    assert not tab.testid("signup-invite").is_visible()
    tab.screenshot("signup")
    tab.testid("signup-name").fill("stranger")
    tab.testid("signup-password").fill(PASSWORD)
    tab.testid("signup-password2").fill(PASSWORD)
    tab.testid("signup-button").click()
    page.wait_for_url("**/account")
    page.wait_for_selector("body[data-ready]")
    assert tab.text("no-bots").startswith("None yet")

    tokens = BotTokens(door.arena.redis, door.arena.prefix)
    tab.testid("connected-name").fill("stranger-bot")
    tab.testid("connected-button").click()
    assert result_of(tab, "connected-result", "Created") == "Created stranger-bot: its token is shown above, once."
    first = tab.page.locator('[data-testid="new-token"] [data-testid="secret-value"]').inner_text()
    assert tokens.lookup(first) == "stranger-bot"
    assert "--as stranger-bot" in tab.text("connect-command") and first in tab.text("connect-command")
    row = page.locator('[data-testid="my-bot"][data-bot="stranger-bot"]')
    assert row.get_by_test_id("bot-state").inner_text() == f"token live ({first[:8]}…)"
    tab.screenshot("account-connected-token")

    row.get_by_test_id("rotate-button").click()
    page.wait_for_function(
        f"!document.querySelector('[data-testid=new-token] .secret-value').textContent.startsWith('{first}')"
    )
    second = tab.page.locator('[data-testid="new-token"] [data-testid="secret-value"]').inner_text()
    assert (tokens.lookup(first), tokens.lookup(second)) == (None, "stranger-bot")
    row.get_by_test_id("revoke-button").click()
    row.get_by_test_id("bot-state").filter(has_text="token revoked").wait_for()
    assert tokens.lookup(second) is None
    assert tab.testid("new-token").count() == 0  # a revoked token is shown no longer

    tab.testid("hosted-name").fill("stranger-perl")
    tab.testid("archive").set_input_files(str(jsonlines_archive(tmp_path)))
    tab.testid("upload-button").click()
    assert result_of(tab, "upload-result", "Uploaded").startswith("Uploaded stranger-perl@1 (source ")
    page.wait_for_selector('[data-testid="my-version"][data-version="stranger-perl@1"]')
    by_tar = tab.testid("upload-result").get_attribute("data-source")

    tab.testid("folder").set_input_files(str(JSONLINES))  # the folder itself, packed by the page
    tab.testid("upload-button").click()
    page.wait_for_selector('[data-testid="upload-result"][data-version="stranger-perl@2"]')
    page.wait_for_selector('[data-testid="my-version"][data-version="stranger-perl@2"]')
    assert tab.testid("upload-result").get_attribute("data-source") == by_tar  # the same files, the same source
    versions = Versions(door.arena.redis, door.arena.prefix)
    assert [v.name for v in versions.of("stranger-perl")] == ["stranger-perl@1", "stranger-perl@2"]
    assert accounts(door).owner_of("stranger-perl") == "stranger"
    tab.screenshot("account-hosted-uploaded")

    tab.testid("version-link").click()
    page.wait_for_url("**/bots/stranger-perl/versions/2")
    page.wait_for_selector("body[data-ready]")
    assert page.locator("#version-name").inner_text() == "stranger-perl@2"
    assert "You are reading it as its owner." in page.locator("#owner-view").inner_text()
    tab.testid("visibility-button").click()  # by the session: no owner key, its CSRF token
    tab.testid("output-visibility").filter(has_text="Everyone may read").wait_for()
    assert versions.output_public("stranger-perl")
    page.wait_for_selector('[data-testid="site-account"] [data-testid="account-link"]')
    assert tab.text("account-link") == "stranger"


def test_the_account_page_fits_a_phone(browser: Any, door: Site) -> None:
    with open_tab(browser, door, PHONE) as tab:
        sign_up(tab, "pocket")
        width = tab.page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 1, f"the account page is {width} px wide on a phone"
        tab.screenshot("account-phone")


def upload(tab: Tab, bot: str, testid: str, path: Path) -> str:
    """Upload ``path`` through the input ``testid`` as a version of ``bot``: the result line's text."""
    tab.testid("hosted-name").fill(bot)
    tab.testid(testid).set_input_files(str(path))
    tab.page.evaluate("document.querySelector('[data-testid=upload-result]').textContent = ''")
    tab.testid("upload-button").click()
    tab.page.wait_for_function(
        "/^(Uploaded|Not uploaded)/.test(document.querySelector('[data-testid=upload-result]').textContent)"
    )
    return tab.text("upload-result")


def test_a_folder_packed_by_the_browser_or_a_zip_gives_the_folders_own_source(
    tab: Tab, door: Site, tmp_path: Path
) -> None:
    """The page's tar writer against the arena's own packing: long paths, a name in UTF-8, a script kept
    executable, what a checkout leaves behind left out; a .zip of the folder (wrapped in it) alike."""
    folder = tmp_path / "tricky"
    deep = "a-rather-long-folder-name-for-a-package/" * 3 + "and-a-module-whose-own-name-is-long-too.pl"
    files = {
        "bot.toml": (JSONLINES / "bot.toml").read_text(),
        "greedy.pl": (JSONLINES / "greedy.pl").read_text(),
        deep: "1;\n",
        "données/é.txt": "é\n",
        "run.sh": "#!/bin/sh\nexec perl greedy.pl\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        "node_modules/m/index.js": "x\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    for name in ("greedy.pl", "run.sh"):
        (folder / name).chmod(0o755)  # what the page guesses from their "#!"
    assert len(deep.encode()) > 100
    sign_up(tab, "packer")
    said = upload(tab, "tricky", "folder", folder)
    assert said.startswith("Uploaded tricky@1"), said
    assert tab.testid("upload-result").get_attribute("data-source") == pack(folder)[1]

    zipped = tmp_path / "jsonlines.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(JSONLINES.iterdir()):
            info = zipfile.ZipInfo(f"jsonlines/{path.name}")
            info.external_attr = (0o100755 if path.name == "greedy.pl" else 0o100644) << 16
            z.writestr(info, path.read_bytes())
    said = upload(tab, "zipped", "archive", zipped)
    assert said.startswith("Uploaded zipped@1"), said
    assert tab.testid("upload-result").get_attribute("data-source") == pack(JSONLINES)[1]

    (tmp_path / "too-deep" / ("x" * 120) / ("y" * 120)).mkdir(parents=True)
    (tmp_path / "too-deep" / "bot.toml").write_text(files["bot.toml"])
    (tmp_path / "too-deep" / ("x" * 120) / ("y" * 120) / ("z" * 120)).write_text("1;\n")
    said = upload(tab, "too-deep", "folder", tmp_path / "too-deep")
    assert said.startswith("Not uploaded: ") and "its path is too long for the tar format" in said, said
    (tmp_path / "no-manifest").mkdir()
    (tmp_path / "no-manifest" / "x.pl").write_text("1;")
    said = upload(tab, "no-manifest", "folder", tmp_path / "no-manifest")
    assert said.startswith("Not uploaded: the folder has no bot.toml at its top"), said
    assert accounts(door).bots_of("packer") == ["tricky", "zipped"]


# ------------------------------------------------------------------ keys, password, logout, deletion


def test_an_api_key_acts_as_the_account_until_it_is_revoked(tab: Tab, door: Site) -> None:
    sign_up(tab, "keyholder")
    tab.testid("key-label").fill("CI")
    tab.testid("key-button").click()
    result_of(tab, "key-result", "Created")
    key = tab.page.locator('[data-testid="new-key"] [data-testid="secret-value"]').inner_text()
    assert api_as(door, "/me", key)[1]["account"]["name"] == "keyholder"
    row = tab.page.locator('[data-testid="key-row"]')
    assert row.get_by_test_id("key-label-shown").inner_text() == "CI"
    assert key[:10] in row.inner_text() and key not in row.inner_text()  # listed by its prefix only
    row.get_by_test_id("revoke-key-button").click()
    tab.page.wait_for_selector('[data-testid="no-keys"]')
    status, body = api_as(door, "/me", key)
    assert status == 401 and body["detail"].startswith("log in first")


def test_a_new_password_ends_the_session_and_deletion_needs_the_password(tab: Tab, door: Site) -> None:
    page = tab.page
    sign_up(tab, "mover")
    tab.testid("password-current").fill("not the password")
    tab.testid("password-new").fill("a brand new passphrase")
    tab.testid("password-new2").fill("a brand new passphrase")
    tab.testid("password-button").click()
    assert result_of(tab, "password-result", "Not changed") == "Not changed: the current password is wrong"
    tab.testid("password-current").fill(PASSWORD)
    tab.testid("password-button").click()
    page.wait_for_url("**/login?why=password")
    page.wait_for_selector("body[data-ready]")
    assert tab.text("login-notice").startswith("Your password was changed")
    tab.testid("login-name").fill("mover")
    tab.testid("login-password").fill(PASSWORD)
    tab.testid("login-button").click()
    assert result_of(tab, "login-result", "Not logged in") == "Not logged in: wrong name or password"
    tab.testid("login-password").fill("a brand new passphrase")
    tab.testid("login-button").click()
    page.wait_for_url("**/account")
    page.wait_for_selector("body[data-ready]")

    tab.testid("connected-name").fill("mover-bot")
    tab.testid("connected-button").click()
    result_of(tab, "connected-result", "Created")
    token = page.locator('[data-testid="new-token"] [data-testid="secret-value"]').inner_text()
    tab.testid("delete-password").fill(PASSWORD)
    tab.testid("delete-button").click()
    assert result_of(tab, "delete-result", "Not deleted") == "Not deleted: the password is wrong"
    tab.testid("delete-password").fill("a brand new passphrase")
    tab.testid("delete-button").click()
    page.wait_for_selector('[data-testid="account-deleted"]:visible')
    assert tab.text("account-deleted").startswith("The account mover is deleted")
    page.wait_for_selector('[data-testid="site-account"][data-state="out"]')
    assert BotTokens(door.arena.redis, door.arena.prefix).lookup(token) is None
    assert accounts(door).owner_of("mover-bot") == "mover"  # its name stays its own
    tab.open("/account")
    assert tab.testid("logged-out").is_visible()


def test_logging_out_ends_the_session(tab: Tab, door: Site) -> None:
    sign_up(tab, "leaver")
    tab.testid("logout-button").click()
    tab.page.wait_for_url("**/login?why=out")
    tab.page.wait_for_selector("body[data-ready]")
    assert tab.text("login-notice") == "You are logged out."
    assert tab.page.evaluate("fetch('/api/me').then(r => r.status)") == 401
    tab.page.wait_for_selector('[data-testid="site-account"][data-state="out"]')


# ------------------------------------------------------------------ hostile text


def test_hostile_names_and_labels_are_shown_as_text_and_run_nothing(tab: Tab, door: Site, tmp_path: Path) -> None:
    page = tab.open("/signup")
    tab.testid("signup-name").fill(HOSTILE[0])
    tab.testid("signup-password").fill(PASSWORD)
    tab.testid("signup-password2").fill(PASSWORD)
    tab.testid("signup-button").click()
    assert result_of(tab, "signup-result", "Not signed up").startswith("Not signed up: a name is 3-32 letters")
    page = tab.open("/login")
    tab.testid("login-name").fill(HOSTILE[1])
    tab.testid("login-password").fill(PASSWORD)
    tab.testid("login-button").click()
    assert result_of(tab, "login-result", "Not logged in") == "Not logged in: wrong name or password"

    sign_up(tab, "mallory")
    for label in HOSTILE:  # a key's label may hold anything: it must come back as these very characters
        tab.testid("key-label").fill(label)
        tab.testid("key-button").click()
        page.wait_for_selector(f'[data-testid="key-row"] >> nth={HOSTILE.index(label)}')
    shown = page.locator('[data-testid="key-label-shown"]').all_inner_texts()
    assert sorted(shown) == sorted(HOSTILE)
    assert HOSTILE[1] in tab.text("new-key")  # the once-shown box names it too, as text
    tab.open("/account")  # and drawn afresh from the API
    assert sorted(page.locator('[data-testid="key-label-shown"]').all_inner_texts()) == sorted(HOSTILE)
    assert page.locator("main img, main script").count() == 0

    tab.testid("connected-name").fill(HOSTILE[0])
    tab.testid("connected-button").click()
    assert result_of(tab, "connected-result", "Not created").startswith("Not created: a bot name is 1-64 letters")
    tab.testid("hosted-name").fill(HOSTILE[1])
    tab.testid("archive").set_input_files(str(jsonlines_archive(tmp_path)))
    tab.testid("upload-button").click()
    assert result_of(tab, "upload-result", "Not uploaded").startswith("Not uploaded: a bot name is 1-64 letters")
    hostile = "/api/bots/" + urllib.parse.quote(HOSTILE[0], safe="") + "/versions"
    assert in_page(tab, "POST", hostile) == (
        422,
        "a bot name is 1-64 letters, digits, '_', '.' or '-', starting with one of the first",
    )
    assert accounts(door).bots_of("mallory") == []  # a refused name is claimed by no one
    assert page.evaluate("window.__pwned") is None
    tab.screenshot("account-hostile-labels")


# ------------------------------------------------------------------ one account and another's bots


def test_a_second_account_can_neither_see_nor_touch_the_firsts_bots(browser: Any, door: Site, tmp_path: Path) -> None:
    with open_tab(browser, door, DESKTOP) as first:
        sign_up(first, "alice")
        first.testid("connected-name").fill("alice-bot")
        first.testid("connected-button").click()
        result_of(first, "connected-result", "Created")
        token = first.page.locator('[data-testid="new-token"] [data-testid="secret-value"]').inner_text()
        first.testid("hosted-name").fill("alice-perl")
        first.testid("archive").set_input_files(str(jsonlines_archive(tmp_path)))
        first.testid("upload-button").click()
        result_of(first, "upload-result", "Uploaded")
    with open_tab(browser, door, DESKTOP) as second:
        sign_up(second, "bob-the-other")
        text = second.page.locator("main").inner_text()
        assert "alice" not in text and second.text("no-bots").startswith("None yet")
        assert in_page(second, "POST", "/api/me/bots/alice-bot/token") == (
            404,
            "you own no connected bot named 'alice-bot'",
        )
        assert in_page(second, "DELETE", "/api/me/bots/alice-bot/token")[0] == 404
        assert in_page(second, "POST", "/api/bots/alice-perl/versions")[0] == 401
        mine = second.page.evaluate("fetch('/api/me/bots').then(r => r.json())")
        assert mine == []
        second.testid("connected-name").fill("alice-bot")
        second.testid("connected-button").click()
        assert result_of(second, "connected-result", "Not created") == "Not created: the bot name 'alice-bot' is taken"
        second.testid("hosted-name").fill("alice-perl")
        second.testid("archive").set_input_files(str(jsonlines_archive(tmp_path)))
        second.testid("upload-button").click()
        assert result_of(second, "upload-result", "Not uploaded").startswith("Not uploaded: not alice-perl's owner")
        second.open("/bots/alice-perl/versions/1")
        assert "You are reading it as its owner." not in second.page.locator("#owner-view").inner_text()
        second.open("/account")
        assert "alice" not in second.page.locator("main").inner_text()
    assert BotTokens(door.arena.redis, door.arena.prefix).lookup(token) == "alice-bot"
    assert [v.name for v in Versions(door.arena.redis, door.arena.prefix).of("alice-perl")] == ["alice-perl@1"]
