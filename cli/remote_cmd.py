"""``tablanette login | logout`` and ``tablanette remote``: an author's commands against an arena's web API.

A bot author need not reach the arena's Redis, nor run any of its processes: ``tablanette login URL``
logs in with the account's name and password (or signs up, ``--sign-up``), makes a personal API key
for this machine and keeps it in a private file (:mod:`cli.remote_config`); every ``tablanette remote``
command then calls the arena's JSON API with that key (:mod:`cli.remote_client`), and ``tablanette
logout`` revokes the key on the arena and removes the file. The password is never kept, never echoed,
and never on the command line (it is prompted for, or read from standard input). In CI, with no file,
``TABLANETTE_REMOTE_URL`` and ``TABLANETTE_REMOTE_KEY`` (a key from the CI's secret store) stand in for
the login.

Everything the arena answers is printed through :mod:`store.printable` (a bot's output and its build's
log above all: it is a stranger's text), and every failure is one line, ``error: STATUS DETAIL``, with
exit status 1. :mod:`cli.remote_bots` holds the commands about bots and ladders.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, ParamSpec, TypeVar

import typer

from hosting.source import SourceError
from store import printable

from .remote_client import Remote, RemoteError, cleartext_warning, normalise_url, segment
from .remote_config import ConfigError, Login, check_private, config_path, forget, load, save

P = ParamSpec("P")
R = TypeVar("R")
app = typer.Typer(
    help="An arena's web API from your own machine, with the key `tablanette login` saved (no Redis needed).",
    no_args_is_help=True,
)
key_app = typer.Typer(help="Your account's personal API keys: create, list, revoke.", no_args_is_help=True)


# ------------------------------------------------------------ shared by every remote command


def reported(command: Callable[P, R]) -> Callable[P, R]:
    """The command, with any refusal, unreachable arena, unsafe login file or unpackable folder printed as
    one line (``error: ...``, exit status 1), never a traceback."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with one_line_errors():
            return command(*args, **kwargs)

    return run


@contextlib.contextmanager
def one_line_errors() -> Iterator[None]:
    try:
        yield
    except (RemoteError, ConfigError, SourceError) as exc:
        print(f"error: {printable.line(str(exc))}", file=sys.stderr)
        raise typer.Exit(1) from None
    except (KeyError, TypeError, AttributeError) as exc:  # an answer of another shape than this CLI knows
        print(f"error: the arena's answer is not as expected ({exc!r}): is it an arena?", file=sys.stderr)
        raise typer.Exit(1) from None


def say(*parts: object) -> None:
    """Print one line of text that came (in part) from the arena, made printable."""
    print(printable.line(" ".join(str(p) for p in parts), printable.MAX_TEXT))


def when(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Plain aligned columns (no markup: a bot's name is a stranger's text), each cell made printable."""
    cells = [[printable.line(str(c), 200) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    for row in [list(headers), *cells]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def connect() -> tuple[Remote, Login]:
    """The saved login's client; warns (stderr) when its key is to cross a network in clear."""
    saved = load()
    saved = Login(normalise_url(saved.url), saved.key, saved.account)  # TABLANETTE_REMOTE_URL is checked too
    if warning := cleartext_warning(saved.url):
        print(warning, file=sys.stderr)
    return Remote(saved.url, saved.key), saved


def own_key_id(remote: Remote, key: str) -> str:
    """The id of ``key``, the key asking (the arena says which of the account's keys that is)."""
    me = remote.get("/api/me")
    if me.get("key_id"):
        return str(me["key_id"])
    matches = [k["id"] for k in me["keys"] if key.startswith(k["prefix"])]  # an arena from before key_id
    if len(matches) != 1:
        found = "no key" if not matches else f"{len(matches)} keys"
        raise RemoteError(
            f"the arena lists {found} starting {key[:10]}: revoke it by id (`tablanette remote key list`)"
        )
    return str(matches[0])


# ------------------------------------------------------------ login and logout


def _password(from_stdin: bool, confirm: bool) -> str:
    """The password: one line of standard input when asked or when it is not a terminal, else prompted for
    without echo (twice for a new account)."""
    if from_stdin or not sys.stdin.isatty():
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        try:
            password = getpass.getpass("password: ")
            if confirm and getpass.getpass("password again: ") != password:
                raise RemoteError("the two passwords differ")
        except EOFError:
            password = ""
    if not password:
        raise RemoteError("no password given")
    return password


def _existing() -> Login | None:
    """The login already saved, if any (an unsafe file is refused before anything is made on the arena)."""
    path = config_path()
    if not path.exists():
        return None
    check_private(path)
    try:
        return load(path)
    except ConfigError:
        return None  # unreadable, but ours and private: replaced


def _key_login(base: str, key: str) -> Login:
    if key == "-":
        key = sys.stdin.readline().strip()
    if not key.startswith("tbk_"):
        raise RemoteError("a personal API key starts with tbk_ (make one on the arena's account page)")
    me = Remote(base, key).get("/api/me")
    return Login(base, key, str(me["account"]["name"]))


def _password_login(base: str, name: str, password: str, sign_up: bool, invite: str, label: str) -> Login:
    """Log in (or sign up) with a web session, make an API key with it, and end the session."""
    remote = Remote(base)
    if sign_up:
        answer = remote.post("/api/accounts", {"name": name, "password": password, "invite": invite})
    else:
        answer = remote.post("/api/session", {"name": name, "password": password})
    remote.csrf = str(answer["csrf"])
    try:
        made = remote.post("/api/me/keys", {"label": label[:64]})
    finally:  # the key is what stays (if it was made); the session ends by itself if not here
        with contextlib.suppress(RemoteError):
            remote.delete("/api/session")
    return Login(base, str(made["key"]), str(answer["account"]["name"]))


@reported
def login(
    url: Annotated[str, typer.Argument(help="The arena's address, e.g. https://arena.example.org.")],
    name: Annotated[str | None, typer.Option("--name", help="Your account's name (asked if not given).")] = None,
    key: Annotated[
        str | None,
        typer.Option(
            "--key", help="Log in with a personal API key (tbk_...) you already have; '-' reads it from stdin."
        ),
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input (one line).")
    ] = False,
    sign_up: Annotated[
        bool, typer.Option("--sign-up", help="Create the account first (where the arena lets people sign up).")
    ] = False,
    invite: Annotated[str, typer.Option(help="With --sign-up: the invite code the arena's operator gave you.")] = "",
) -> None:
    """Log in to an arena: make a personal API key for this machine and keep it (mode 0600) for `remote`.

    The password is asked for without echo, or read from standard input (`--password-stdin`, or when
    stdin is not a terminal); it is never kept. Example: `tablanette login https://arena.example.org --name ada`.
    """
    base = normalise_url(url)
    earlier = _existing()
    if warning := cleartext_warning(base):
        print(warning, file=sys.stderr)
    if key is not None:
        if sign_up or password_stdin or invite:
            raise RemoteError("--key logs in with a key alone: no --sign-up, --invite or --password-stdin with it")
        saved = _key_login(base, key)
    else:
        if name is None and not sys.stdin.isatty():
            raise RemoteError("give --name when the password comes from standard input")
        name = name or typer.prompt("account name")
        password = _password(password_stdin, confirm=sign_up)
        label = f"tablanette CLI on {socket.gethostname()}"
        saved = _password_login(base, name, password, sign_up, invite, label)
    path = save(saved)
    verb = "signed up and logged in" if sign_up else "logged in"
    say(f"{verb} to {saved.url} as {saved.account}; its key {saved.key[:10]}... is kept in {path}")
    if earlier is not None and earlier.key != saved.key:
        say(_retire(earlier, saved))


def _retire(earlier: Login, saved: Login) -> str:
    """What became of the login a new one replaced: its key is revoked when it was this arena's and account's
    (one key a machine), and left alone otherwise (it is another account's, or another arena's)."""
    if earlier.url != saved.url or earlier.account.lower() != saved.account.lower():
        return (
            f"it replaces the login to {earlier.url} as {earlier.account}, whose key {earlier.key[:10]}... stays "
            "valid until revoked (`tablanette remote key list` there)"
        )
    remote = Remote(saved.url, earlier.key)  # the earlier key revokes itself
    try:
        remote.delete(f"/api/me/keys/{segment(own_key_id(remote, earlier.key))}")
    except RemoteError as exc:
        return f"the earlier login's key {earlier.key[:10]}... was not revoked: {exc}"
    return f"the earlier login's key {earlier.key[:10]}... is revoked"


@reported
def logout(
    forget_only: Annotated[
        bool,
        typer.Option("--forget", help="Only remove the saved login, without revoking its key (the arena is gone)."),
    ] = False,
) -> None:
    """Log out: revoke this machine's API key on the arena, and remove the saved login."""
    remote, saved = connect()
    revoked = "its key is left as it is on the arena"
    if not forget_only:
        try:
            remote.delete(f"/api/me/keys/{segment(own_key_id(remote, saved.key))}")
            revoked = f"its key {saved.key[:10]}... is revoked"
        except RemoteError as exc:
            if exc.status != 401:
                raise
            revoked = "the arena already refuses its key (revoked, or the account is gone)"
    forget()
    say(f"logged out of {saved.url} ({saved.account}): {revoked}; {config_path()} is removed")


# ------------------------------------------------------------ who am I, and my keys


@app.command()
@reported
def whoami() -> None:
    """The account this machine is logged in as, its bots and its API keys."""
    remote, saved = connect()
    me = remote.get("/api/me")
    account = me["account"]
    say(f"{account['name']} at {saved.url} ({account['state']}, signed up {when(account['created'])})")
    bots = ", ".join(f"{b['bot']} ({b['kind']})" for b in me["bots"]) or "none yet"
    say(f"bots: {bots}")
    say(f"API keys: {len(me['keys'])}, this machine's starting {saved.key[:10]}")


@key_app.command("create")
@reported
def key_create(
    label: Annotated[str, typer.Option(help="What the key is for (shown in the list).")] = "",
) -> None:
    """A new personal API key (for a script or CI): printed once, kept nowhere by this CLI."""
    remote, _ = connect()
    made = remote.post("/api/me/keys", {"label": label})
    say(f"API key {made['id']} ({made['label'] or 'no label'}); shown once, keep it secret:")
    say(made["key"])


@key_app.command("list")
@reported
def key_list() -> None:
    """Your account's API keys: id, first characters, label, creation; `*` marks this machine's."""
    remote, saved = connect()
    keys = remote.get("/api/me")["keys"]
    rows = [
        ("*" if saved.key.startswith(k["prefix"]) else "", k["id"], k["prefix"] + "...", k["label"], when(k["created"]))
        for k in keys
    ]
    table(("", "id", "key", "label", "created"), rows)


@key_app.command("revoke")
@reported
def key_revoke(key_id: Annotated[str, typer.Argument(help="The key's id (`tablanette remote key list`).")]) -> None:
    """Revoke one of your API keys (this machine's too: that logs it out)."""
    remote, saved = connect()
    mine = own_key_id(remote, saved.key) == key_id
    gone = remote.delete(f"/api/me/keys/{segment(key_id)}")["revoked"]
    if mine:
        forget()
    say(f"revoked API key {gone['id']} ({gone['prefix']}...)")
    if mine:
        say(f"that was this machine's key: logged out ({config_path()} is removed)")
