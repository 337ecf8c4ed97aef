"""``tablanette login`` and ``tablanette remote``: an author's whole round against a real arena's web server,
from a CLI that is given no way to reach Redis (its ``TABLANETTE_REDIS_URL`` points where nothing listens).

One web server for the module; each test signs up its own account (sign-up is opened on the arena) and
keeps its login in its own config folder. What the CLI made is checked on the arena's side: tokens in
:class:`store.tokens.BotTokens`, versions through the public API, keys by calling ``/api/me`` with them.
"""

from __future__ import annotations

import http.server
import json
import os
import secrets
import stat
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from arena_harness import ROOT, new_arena
from web_kit import Site

from cli.local import CLI, free_port
from cli.remote_bots import show_version
from cli.remote_client import Remote, RemoteError, cleartext_warning, normalise_url
from cli.remote_config import Login, load, save
from engine_service.rules import Rules
from hosting.source import pack
from store.accounts import Accounts
from store.leagues import League, LeagueStore
from store.tokens import BotTokens

NO_REDIS = "redis://127.0.0.1:1/0"
"""Where the CLI is told its Redis is: nothing listens there, so any use of Redis would fail."""
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    arena = new_arena("remote", tmp_path_factory.mktemp("remote"))
    arena.extra_env["TABLANETTE_SIGNUPS_PER_HOUR"] = "100"  # every test signs up from 127.0.0.1
    try:
        port = free_port()
        site = Site(arena, f"http://127.0.0.1:{port}", arena.spawn("web", [*CLI, "web", "--port", str(port)]))
        site.wait_up()
        Accounts(arena.redis, arena.prefix).set_policy("open")
        yield site
    finally:
        arena.close()


@dataclass
class Author:
    """One account's person at their own machine: a config folder of their own, and the CLI."""

    site: Site
    home: Path
    name: str

    @property
    def config(self) -> Path:
        return self.home / "config" / "tablanette" / "remote.json"

    def run(self, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TABLANETTE_")}
        env |= {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / "config"), "TABLANETTE_REDIS_URL": NO_REDIS}
        env |= extra
        env["PYTHONPATH"] = str(ROOT)
        return subprocess.run(
            [*CLI, *args], input=stdin, capture_output=True, text=True, timeout=60, env=env, cwd=self.home
        )

    def ok(self, *args: str, stdin: str = "") -> str:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, f"tablanette {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        return done.stdout

    def fails(self, *args: str, stdin: str = "") -> str:
        """The one line a refused command prints (exit status 1, nothing else on stderr, no traceback)."""
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 1, f"tablanette {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
        return lines[0]

    def saved(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.config.read_text())
        return data


def me(site: Site, key: str) -> int:
    """The status ``GET /api/me`` answers with ``key``."""
    req = urllib.request.Request(site.url("/api/me"), headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return int(res.status)
    except urllib.error.HTTPError as err:
        return err.code


@pytest.fixture
def author(site: Site, tmp_path: Path) -> Author:
    """A new account, signed up and logged in from the command line."""
    person = Author(site, tmp_path, f"ada-{secrets.token_hex(3)}")
    out = person.ok("login", site.base, "--sign-up", "--name", person.name, "--password-stdin", stdin=PASSWORD + "\n")
    assert f"signed up and logged in to {site.base} as {person.name}" in out
    return person


def test_login_keeps_a_private_key_that_works_and_ends_its_web_session(site: Site, author: Author) -> None:
    assert stat.S_IMODE(author.config.stat().st_mode) == 0o600
    assert stat.S_IMODE(author.config.parent.stat().st_mode) == 0o700
    saved = author.saved()
    assert saved["url"] == site.base and saved["account"] == author.name and saved["key"].startswith("tbk_")
    assert me(site, saved["key"]) == 200
    arena = site.arena
    credentials = Accounts(arena.redis, arena.prefix).credentials
    assert credentials.api_keys(author.name.lower())[0].label.startswith("tablanette CLI on ")
    assert credentials.end_sessions(author.name.lower()) == 0  # the login's web session was ended at once
    out = author.ok("remote", "whoami")
    assert out.startswith(f"{author.name} at {site.base} (active") and "bots: none yet" in out

    again = Author(site, author.home / "elsewhere", author.name)  # the same account from another machine
    again.home.mkdir()
    assert "logged in to" in again.ok("login", site.base, "--name", author.name, stdin=PASSWORD + "\n")
    assert again.saved()["key"] != saved["key"]
    assert "API keys: 2" in again.ok("remote", "whoami")

    out = author.ok("login", site.base, "--name", author.name, stdin=PASSWORD + "\n")  # again, on this machine
    assert f"the earlier login's key {saved['key'][:10]}... is revoked" in out
    assert me(site, saved["key"]) == 401 and me(site, author.saved()["key"]) == 200
    assert "API keys: 2" in author.ok("remote", "whoami")  # one a machine


def test_a_connected_bot_gets_a_token_that_rotates_and_revokes(site: Site, author: Author) -> None:
    tokens = BotTokens(site.arena.redis, site.arena.prefix)
    bot = f"{author.name}-bot"
    out = author.ok("remote", "bot", "create", bot)
    first = out.splitlines()[1]
    assert tokens.lookup(first) == bot and "tablanette bot run" in out
    assert "is taken" in author.fails("remote", "bot", "create", bot)

    second = author.ok("remote", "bot", "token", bot).splitlines()[1]
    assert tokens.lookup(second) == bot and tokens.lookup(first) is None
    assert "token is revoked" in author.ok("remote", "bot", "token", bot, "--revoke")
    assert tokens.lookup(second) is None

    assert f"{bot}  connected  token revoked" in author.ok("remote", "bots")
    assert f"{bot}: a connected bot, yours; token revoked" in author.ok("remote", "bot", "status", bot)
    assert "404 you own no connected bot" in author.fails("remote", "bot", "token", "someone-elses")


def test_a_submitted_folder_becomes_a_version_its_owner_follows(site: Site, author: Author) -> None:
    bot = f"{author.name}-hosted"
    folder = ROOT / "bots/jsonlines"
    out = author.ok("remote", "bot", "submit", bot, str(folder))
    assert out.startswith(f"submitted {bot}@1: submitted (") and f"source {pack(folder)[1][:12]}" in out
    assert f"/bots/{bot}/versions/1" in out
    assert [v["name"] for v in site.api(f"/bots/{bot}")["versions"]] == [f"{bot}@1"]
    assert f"submitted {bot}@2" in author.ok("remote", "bot", "submit", bot, str(folder))

    status = author.ok("remote", "bot", "status", bot)
    assert f"{bot}: a hosted bot, yours" in status
    rows = [line.split()[:2] for line in status.splitlines()[2:]]
    assert rows == [[f"{bot}@2", "submitted"], [f"{bot}@1", "submitted"]], status
    assert f"{bot}  hosted  2 versions; latest {bot}@2: submitted" in author.ok("remote", "bots")

    logs = author.ok("remote", "bot", "logs", bot)
    assert logs.startswith(f"{bot}@2: submitted") and "owner only" not in logs
    assert author.ok("remote", "bot", "logs", bot, "1").startswith(f"{bot}@1: submitted")
    assert "404" in author.fails("remote", "bot", "logs", bot, "9")

    other = Author(site, author.home / "other", f"bo-{secrets.token_hex(3)}")
    other.home.mkdir()
    other.ok("login", site.base, "--sign-up", "--name", other.name, stdin=PASSWORD + "\n")
    assert "shown to its owner only" in other.ok("remote", "bot", "logs", bot)
    assert f"401 not {bot}'s owner" in other.fails("remote", "bot", "submit", bot, str(folder))
    assert "is not a folder" in other.fails("remote", "bot", "submit", "x", str(author.home / "nothing"))


def test_keys_are_listed_made_and_revoked_and_logout_kills_this_machines(site: Site, author: Author) -> None:
    mine = author.saved()["key"]
    made = author.ok("remote", "key", "create", "--label", "ci")
    ci = made.splitlines()[1]
    assert ci.startswith("tbk_") and me(site, ci) == 200
    listed = author.ok("remote", "key", "list").splitlines()
    assert len(listed) == 3
    ours = next(line for line in listed if line.startswith("*"))
    assert mine[:10] in ours and "tablanette CLI on" in ours
    ci_id = next(line.split()[0] for line in listed[1:] if ci[:10] in line)
    assert "revoked API key" in author.ok("remote", "key", "revoke", ci_id)
    assert me(site, ci) == 401 and me(site, mine) == 200
    assert "404 no API key" in author.fails("remote", "key", "revoke", ci_id)

    out = author.ok("logout")
    assert "is revoked" in out and not author.config.exists()
    assert me(site, mine) == 401
    assert "not logged in" in author.fails("remote", "whoami")

    assert f"as {author.name}" in author.ok("login", site.base, "--key", "-", stdin=_key(author))
    assert author.saved()["account"] == author.name


def test_ci_passes_its_key_in_the_environment_with_no_login_file(site: Site, author: Author, tmp_path: Path) -> None:
    ci = author.ok("remote", "key", "create", "--label", "ci").splitlines()[1]
    runner = Author(site, tmp_path / "ci-runner", author.name)
    runner.home.mkdir()
    done = runner.run("remote", "whoami", TABLANETTE_REMOTE_URL=site.base, TABLANETTE_REMOTE_KEY=ci)
    assert done.returncode == 0 and done.stdout.startswith(f"{author.name} at {site.base}"), done.stderr
    assert not runner.config.exists()
    no_url = runner.run("remote", "whoami", TABLANETTE_REMOTE_KEY=ci)
    assert no_url.returncode == 1 and "TABLANETTE_REMOTE_URL" in no_url.stderr
    bad_url = runner.run("remote", "whoami", TABLANETTE_REMOTE_URL="ftp://x", TABLANETTE_REMOTE_KEY=ci)
    assert bad_url.returncode == 1 and "http:// or https://" in bad_url.stderr


def _key(author: Author) -> str:
    """A fresh key for ``author``, made by logging in on another machine."""
    other = Author(author.site, author.home / "key-maker", author.name)
    other.home.mkdir(exist_ok=True)
    other.ok("login", author.site.base, "--name", author.name, stdin=PASSWORD + "\n")
    return str(other.saved()["key"])


def test_refusals_are_one_line_each(site: Site, author: Author) -> None:
    assert "must start with http:// or https://" in author.fails("login", "ftp://127.0.0.1/")
    port = free_port()
    assert f"cannot reach http://127.0.0.1:{port}" in author.fails(
        "login", f"http://127.0.0.1:{port}", "--key", "tbk_x"
    )
    assert "401 wrong name or password" in author.fails(
        "login", site.base, "--name", author.name, stdin="not the password\n"
    )
    assert "401 log in first" in author.fails("login", site.base, "--key", "tbk_" + "x" * 40)
    assert "starts with tbk_" in author.fails("login", site.base, "--key", "tbl_a-bot-token")
    assert "404" in author.fails("remote", "ladder", "no-such-league")
    assert "no bot named" in author.fails("remote", "bot", "status", "nobody-at-all")
    assert "422" in author.fails("remote", "bot", "create", "bad name!")
    too_long = author.fails("remote", "key", "create", "--label", "x" * 65)  # the API's schema refuses it
    assert too_long.startswith("error: 422 label: String should have at most 64 characters"), too_long
    assert author.saved()["key"] != ""  # a refused login keeps the earlier one


def test_a_login_file_others_can_read_is_refused(author: Author) -> None:
    author.config.chmod(0o644)
    line = author.fails("remote", "whoami")
    assert "can be read or written by others (mode 0644)" in line
    assert "can be read" in author.fails("login", author.site.base, "--key", "tbk_whatever")
    author.config.chmod(0o600)
    assert author.name in author.ok("remote", "whoami")


def test_the_public_ladder(site: Site, author: Author) -> None:
    league = f"open-{secrets.token_hex(3)}"
    bots = [f"{author.name}-{i}" for i in (1, 2)]
    for bot in bots:
        author.ok("remote", "bot", "create", bot)
    leagues = LeagueStore(site.arena.redis, site.arena.prefix)
    leagues.create(League(league, Rules.preset("tablic", deals=1), games=1, seed="s"))
    leagues.add_bots(league, bots)
    out = author.ok("remote", "ladder", league).splitlines()
    assert out[0] == f"ladder: {league} (0 results; 2 bots)"
    assert sorted(line.split()[1] for line in out[2:]) == sorted(bots)


def test_plain_http_to_another_host_is_warned_about_and_urls_are_checked() -> None:
    assert cleartext_warning("http://arena.example.org") is not None
    for url in ("https://arena.example.org", "http://localhost:8080", "http://127.0.0.9", "http://[::1]:8080"):
        assert cleartext_warning(url) is None, url
    assert normalise_url(" https://arena.example.org/sub/ ") == "https://arena.example.org/sub"
    for bad in ("arena.example.org", "file:///etc/passwd", "https://", "https://u:p@h/", "https://h/?q=1"):
        with pytest.raises(RemoteError):
            normalise_url(bad)


def test_what_a_bot_wrote_reaches_the_terminal_printable(capsys: pytest.CaptureFixture[str]) -> None:
    """Even an arena (or a proxy) that sent escape sequences: the CLI cleans every text it prints."""
    hostile = "\x1b]0;owned\x07\x1b[2Kpreflight \x1b[32mpassed\x1b[0m\rforged line\u202e"
    show_version(
        {
            "name": "x@1",
            "state": "ready",
            "note": hostile,
            "manifest": {"language": hostile, "protocol": "jsonlines"},
            "build_log": f"step 1\n{hostile}\n",
            "output": [hostile],
            "evidence": [{"at": 1.0, "reason": hostile, "output": [hostile]}],
            "preflight": {"passed": False, "problems": [hostile], "games": 1, "planned": 2, "league": "pf"},
        }
    )
    out = capsys.readouterr().out
    assert "forged line" in out and "passed" in out
    assert not any(ch in out for ch in "\x1b\x07\r\u202e"), repr(out)


class Misleading(http.server.BaseHTTPRequestHandler):
    """Not an arena: it redirects ``/moved/...`` to ``/elsewhere/...`` and answers HTML under ``/html/``."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        if self.path.startswith("/moved/"):
            self.send_response(302)
            self.send_header("Location", self.path.replace("/moved/", "/elsewhere/"))
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>a login page</html>")

    def log_message(self, *args: object) -> None:
        pass


def test_no_redirect_is_followed_with_the_key_and_a_page_that_is_not_json_is_an_error() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Misleading)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(RemoteError, match="302 the arena's URL redirects to /elsewhere/api/me"):
            Remote(base + "/moved", "tbk_secret").get("/api/me")
        with pytest.raises(RemoteError, match="200 OK: the answer is not JSON"):
            Remote(base + "/html", "tbk_secret").get("/api/me")
    finally:
        server.shutdown()
        server.server_close()
    assert Misleading.seen == [("/moved/api/me", "Bearer tbk_secret"), ("/html/api/me", "Bearer tbk_secret")]


def test_the_login_file_is_private_from_its_first_byte_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "tablanette" / "remote.json"
    old = os.umask(0)
    try:
        save(Login("https://arena.example.org", "tbk_abc", "ada"), path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load(path) == Login("https://arena.example.org", "tbk_abc", "ada")
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_an_accounts_quota_refusal_is_one_line_and_keeps_nothing(site: Site, author: Author) -> None:
    """The arena's default: two versions of an account building at once; a third waits for one of them."""
    folder = str(ROOT / "bots/jsonlines")
    for bot in ("a", "b"):
        author.ok("remote", "bot", "submit", f"{author.name}-{bot}", folder)
    said = author.fails("remote", "bot", "submit", f"{author.name}-c", folder)
    assert said.startswith(f"error: 429 account {author.name} has 2 versions building or in preflight"), said
    assert "TABLANETTE_HOSTED_VERSIONS_BUILDING_PER_ACCOUNT=2" in said and said.endswith("(retry after 60 s)"), said
    assert f"{author.name}-c" not in author.ok("remote", "bots")
