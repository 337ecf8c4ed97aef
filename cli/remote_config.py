"""Where ``tablanette login`` keeps its login: one small JSON file only its owner may read.

The file (``$XDG_CONFIG_HOME/tablanette/remote.json``, by default ``~/.config/tablanette/remote.json``)
holds the arena's URL, a personal API key (``tbk_...``: it acts as the account until revoked) and the
account's name. A key is as good as a password for everything but the password itself, so the file is
created with mode 0600 from its first byte (``os.open`` with the mode, never a chmod after the write:
another user could open it in between), in a folder of mode 0700, and replaced whole (a half-written
login is never read). A login file that anyone but its owner can read is refused, not silently used: its
key may already have leaked, and the person should know.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path


class ConfigError(Exception):
    """A login file that is missing, unsafe or unreadable: the message says which and what to do."""


@dataclass(frozen=True)
class Login:
    url: str
    """The arena's base URL, without a trailing slash: ``https://arena.example.org``."""
    key: str
    """The personal API key, ``tbk_...``."""
    account: str


def config_path() -> Path:
    """``$XDG_CONFIG_HOME/tablanette/remote.json`` (``~/.config`` when the variable is unset or empty)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tablanette" / "remote.json"


def check_private(path: Path) -> None:
    """Refuse a login file that is not a regular file of ours, or that others may read or write."""
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path} is not a regular file: remove it and log in again")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise ConfigError(f"{path} belongs to another user: remove it and log in again")
    if info.st_mode & 0o077:
        mode = stat.S_IMODE(info.st_mode)
        raise ConfigError(
            f"{path} can be read or written by others (mode {mode:04o}), so its API key may have leaked: "
            "revoke that key (`tablanette remote key list`, then `revoke`) after `chmod 600` on the file, "
            "or remove the file and log in again"
        )


def load(path: Path | None = None) -> Login:
    """The saved login, checked to be private; :class:`ConfigError` if there is none or it is unsafe."""
    if path is None and os.environ.get("TABLANETTE_REMOTE_KEY"):  # CI: a key from its secret store, no file
        url, key = os.environ.get("TABLANETTE_REMOTE_URL", ""), os.environ["TABLANETTE_REMOTE_KEY"]
        if not url:
            raise ConfigError("TABLANETTE_REMOTE_KEY is set but TABLANETTE_REMOTE_URL, the arena's address, is not")
        if not key.startswith("tbk_"):
            raise ConfigError("TABLANETTE_REMOTE_KEY is not a personal API key (tbk_...)")
        return Login(url.rstrip("/"), key, "")
    path = path or config_path()
    if not path.exists():
        raise ConfigError("not logged in: `tablanette login URL` first")
    check_private(path)
    try:
        data = json.loads(path.read_text())
        login = Login(str(data["url"]), str(data["key"]), str(data.get("account", "")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a login file ({exc}): remove it and log in again") from None
    if not login.key.startswith("tbk_"):
        raise ConfigError(f"{path} holds no personal API key: log in again")
    return login


def save(login: Login, path: Path | None = None) -> Path:
    """Write the login, private from the start: a fresh file of mode 0600 renamed over the old one."""
    path = path or config_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.exists():
        check_private(path)  # an unsafe file is not silently replaced: its old key may have leaked
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump({"url": login.url, "key": login.key, "account": login.account}, fh, indent=2)
            fh.write("\n")
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    return path


def forget(path: Path | None = None) -> bool:
    """Remove the login file; whether there was one."""
    path = path or config_path()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
