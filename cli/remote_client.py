"""The arena's JSON API over HTTP, as ``tablanette remote`` calls it: standard library only, no Redis.

Every failure becomes one :class:`RemoteError` whose message is one printable line: the server's
``detail`` with its status (``401 log in first ...``), or why the arena could not be reached. The line
goes through :func:`store.printable.line`: a server, or a proxy in front of it, is not trusted with the
terminal either.

Redirects are not followed: urllib would send the API key on to wherever a redirect points (another host
included), and would turn an upload into a GET. The error names the new place, to log in there instead.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from store import printable

USER_AGENT = "tablanette-cli/1"
TIMEOUT = 30.0
"""Seconds to wait for an answer (an upload waits :data:`UPLOAD_TIMEOUT`)."""
UPLOAD_TIMEOUT = 300.0
SESSION_COOKIE = "tablanette_session"


class RemoteError(Exception):
    """One line saying what went wrong (the server's status and ``detail``, or why it was unreachable)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(printable.line(message))
        self.status = status


def normalise_url(raw: str) -> str:
    """An arena's base URL: ``http`` or ``https``, with a host, no query or fragment, no trailing slash."""
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("http", "https"):
        raise RemoteError(f"the arena's URL must start with http:// or https://, not {printable.line(raw)!r}")
    if not parts.hostname:
        raise RemoteError(f"the arena's URL names no host: {printable.line(raw)!r}")
    if parts.username or parts.password:
        raise RemoteError("the arena's URL may not hold a user name or password: log in with --name instead")
    if parts.query or parts.fragment:
        raise RemoteError("the arena's URL may not hold a query (?...) or a fragment (#...)")
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError as exc:
        raise RemoteError(f"the arena's URL has a bad port: {exc}") from None
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cleartext_warning(url: str) -> str | None:
    """A warning when secrets would cross a network in clear: plain http to a host not this machine."""
    parts = urlsplit(url)
    if parts.scheme == "http" and not is_loopback(parts.hostname or ""):
        return (
            f"warning: {parts.hostname} is reached over plain http: your password and API key cross the "
            "network unencrypted (use https:// if the arena has it)"
        )
    return None


def segment(value: str) -> str:
    """``value`` as one path segment (a bot name or key id never reaches another route)."""
    return quote(value, safe="")


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx answer is then raised as an HTTPError, reported below


_opener = urllib.request.build_opener(_NoRedirects)


@dataclass
class Remote:
    """Calls to one arena, as the holder of ``key`` (a personal API key), or of a web session at login."""

    url: str
    key: str = ""
    session: str = ""
    """The session cookie's value, between a login and the key it makes."""
    csrf: str = ""

    def get(self, path: str) -> Any:
        return self.call("GET", path)

    def post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        return self.call("POST", path, body)

    def delete(self, path: str) -> Any:
        return self.call("DELETE", path)

    def upload(self, path: str, data: bytes) -> Any:
        """POST raw bytes (a bot's packed folder)."""
        return self.call("POST", path, raw=data, content_type="application/gzip", timeout=UPLOAD_TIMEOUT)

    def call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
        timeout: float = TIMEOUT,
    ) -> Any:
        """The answer's JSON; :class:`RemoteError` (one line) for any refusal or failure."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=self._headers(content_type))
        try:
            with _opener.open(req, timeout=timeout) as res:
                self._keep_session(res.headers.get_all("Set-Cookie") or [])
                return _json(res.read(), res.status, res.reason)
        except urllib.error.HTTPError as err:
            raise _refusal(err) from None
        except urllib.error.URLError as err:
            raise RemoteError(f"cannot reach {self.url}: {err.reason}") from None
        except TimeoutError:
            raise RemoteError(f"{self.url} did not answer within {timeout:.0f} s") from None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise RemoteError(f"cannot talk to {self.url}: {exc or type(exc).__name__}") from None

    def _headers(self, content_type: str) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json", "Content-Type": content_type}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        elif self.session:
            headers["Cookie"] = f"{SESSION_COOKIE}={self.session}"
            if self.csrf:
                headers["X-CSRF-Token"] = self.csrf
        return headers

    def _keep_session(self, set_cookies: list[str]) -> None:
        for header in set_cookies:
            jar: SimpleCookie = SimpleCookie()
            jar.load(header)
            if SESSION_COOKIE in jar:
                self.session = jar[SESSION_COOKIE].value


def _json(raw: bytes, status: int, reason: str) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        raise RemoteError(f"{status} {reason}: the answer is not JSON (is this URL an arena?)", status) from None


def _refusal(err: urllib.error.HTTPError) -> RemoteError:
    """The server's refusal as one line: its status and its ``detail`` (FastAPI's field errors joined)."""
    status = err.code
    if 300 <= status < 400:
        where = err.headers.get("Location", "elsewhere")
        return RemoteError(f"{status} the arena's URL redirects to {where}: log in with that URL instead", status)
    try:
        detail = json.loads(err.read()).get("detail")
    except (ValueError, AttributeError, OSError):
        detail = None
    if isinstance(detail, list):  # a request the API's schema refused: each field and why
        detail = "; ".join(_field_error(d) for d in detail)
    message = str(detail) if detail else (err.reason or "no reason given")
    if retry := err.headers.get("Retry-After"):
        message += f" (retry after {retry} s)"
    return RemoteError(f"{status} {message}", status)


def _field_error(d: Any) -> str:
    if not isinstance(d, dict):
        return str(d)
    where = ".".join(str(part) for part in d.get("loc", [])[1:])
    return f"{where}: {d.get('msg', '')}" if where else str(d.get("msg", ""))
