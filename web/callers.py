"""Who is asking: an account by its web session (cookie + CSRF token) or by a personal API key.

A request names its account one of two ways (:mod:`store.credentials`):

- ``Authorization: Bearer tbk_...``: a personal API key (scripts, CI, ``tablanette remote``);
- the ``tablanette_session`` cookie set at login; every request that changes something must then also
  send the session's CSRF token as ``X-CSRF-Token`` (a page from another site can make the browser send
  the cookie, never the header), and if it says where it comes from (``Origin``), from this site.

A suspended or deleted account is nobody: its keys answer 401 while it lasts.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import HTTPException, Request

from store.accounts import Account, Accounts

COOKIE = "tablanette_session"


@dataclass(frozen=True)
class Caller:
    account: Account
    via: str
    """``key`` or ``session``."""
    session_id: str = ""
    csrf: str = ""
    key_id: str = ""


def accounts_of(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


def bearer(request: Request) -> str:
    return request.headers.get("authorization", "").removeprefix("Bearer ").strip()


def caller(request: Request) -> Caller | None:
    """The active account behind the request, or None (no credentials, or dead ones)."""
    accounts = accounts_of(request)
    key = bearer(request)
    if key.startswith("tbk_"):
        found = accounts.credentials.key_owner(key)
        account = accounts.get(found[0]) if found else None
        if found and account and account.state == "active":
            return Caller(account, "key", key_id=found[1])
        return None
    sid = request.cookies.get(COOKIE, "")
    session = accounts.credentials.session(sid) if sid else None
    account = accounts.get(session.account) if session else None
    if session and account and account.state == "active":
        return Caller(account, "session", session_id=sid, csrf=session.csrf)
    return None


def signed_in(request: Request) -> Caller:
    """The caller of a request that only reads: 401 if it names no live account."""
    who = caller(request)
    if who is None:
        raise HTTPException(401, "log in first (the session cookie), or send a personal API key as Bearer")
    return who


def acting(request: Request) -> Caller:
    """The caller of a request that changes something: :func:`signed_in`, and by a session, with its CSRF
    token and from this site."""
    who = signed_in(request)
    if who.via == "session":
        sent = request.headers.get("x-csrf-token", "")
        if not sent or not secrets.compare_digest(sent, who.csrf):
            raise HTTPException(403, "missing or wrong CSRF token: send the X-CSRF-Token header /api/me gave")
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != request.headers.get("host", ""):
            raise HTTPException(403, "a request from another site (its Origin is not this arena's host)")
    return who
