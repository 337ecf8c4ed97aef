"""The front door's JSON API: sign up, log in and out, personal API keys, and an account's own bots.

Thin routes over :mod:`store.accounts` and :mod:`store.credentials`; who is asking is
:mod:`web.callers`. Guessing and floods are slowed by :mod:`store.rate_limits`: sign-ups per address
an hour, logins per address a window, and an account name's failed logins back off (1 s, 2 s, 4 s ...
after :data:`FREE_FAILURES`), whether or not the name exists, so a refusal tells nothing about who
has an account.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from store.accounts import MAX_PASSWORD, AccountError
from store.credentials import SESSION_TTL, CredentialError
from store.rate_limits import AttemptLimits, Limited
from store.tokens import NAME_RE, BotTokens
from store.versions import Quota, Versions
from web.callers import COOKIE, Caller, accounts_of, acting, caller, signed_in

LOGINS_PER_WINDOW = 30
LOGIN_WINDOW = 300.0
"""Seconds: at most :data:`LOGINS_PER_WINDOW` login attempts from one address in this long."""
FREE_FAILURES = 5
"""Failed logins in a row on one account name before each further one locks it (doubling) for a while."""

router = APIRouter(prefix="/api", tags=["accounts"])
Acting = Annotated[Caller, Depends(acting)]
SignedIn = Annotated[Caller, Depends(signed_in)]


def _limits(request: Request) -> AttemptLimits:
    limits: AttemptLimits = request.app.state.limits
    return limits


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class SignUp(BaseModel):
    name: str = Field(min_length=1, max_length=64, description="3-32 letters, digits, '_' or '-'")
    password: str = Field(min_length=1, max_length=MAX_PASSWORD, description="10-256 characters")
    invite: str = Field("", max_length=64, description="The operator's invite code, when sign-up is by invite")


class Login(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=MAX_PASSWORD)


class NewKey(BaseModel):
    label: str = Field("", max_length=64, description="What the key is for (shown in the list)")


class NewBot(BaseModel):
    name: str = Field(min_length=1, max_length=64, description="1-64 letters, digits, '_', '.' or '-'")


class NewPassword(BaseModel):
    current: str = Field(min_length=1, max_length=MAX_PASSWORD)
    new: str = Field(min_length=1, max_length=MAX_PASSWORD)


class Confirm(BaseModel):
    password: str = Field(min_length=1, max_length=MAX_PASSWORD, description="The account's password, again")


def _logged_in(request: Request, name: str, status: int = 200) -> JSONResponse:
    """A fresh session for ``name`` (any session the browser brought is ended, never adopted)."""
    accounts = accounts_of(request)
    if old := request.cookies.get(COOKIE):
        accounts.credentials.end_session(old)
    account = accounts.require(name)
    sid, session = accounts.credentials.open_session(account.key)
    res = JSONResponse({"account": account.to_json(), "csrf": session.csrf}, status_code=status)
    secure = request.url.scheme == "https"
    res.set_cookie(COOKIE, sid, max_age=SESSION_TTL, httponly=True, samesite="strict", secure=secure, path="/")
    return res


@router.get("/signup-policy", summary="Who may sign up here: open, invite (a code from the operator) or closed")
def api_policy(request: Request) -> dict[str, str]:
    return {"policy": accounts_of(request).policy()}


@router.post("/accounts", status_code=201, summary="Sign up (and log in): name, password, invite code if asked")
def api_sign_up(request: Request, body: SignUp) -> JSONResponse:
    settings = request.app.state.settings
    _limits(request).spend("signup", _address(request), settings.signups_per_hour, 3600, "sign-ups")
    account = accounts_of(request).sign_up(body.name, body.password, body.invite)
    return _logged_in(request, account.name, 201)


@router.post("/session", summary="Log in: sets the session cookie and answers the CSRF token")
def api_login(request: Request, body: Login) -> JSONResponse:
    limits, accounts = _limits(request), accounts_of(request)
    limits.spend("login", _address(request), LOGINS_PER_WINDOW, LOGIN_WINDOW, "login attempts")
    who = body.name.lower()
    if (wait := limits.locked_for("login-fail", who)) > 0:
        raise Limited(f"too many failed logins for this name: try again in {round(wait) or 1} s", wait)
    account = accounts.authenticate(body.name, body.password)
    if account is None:
        limits.failed("login-fail", who, FREE_FAILURES)
        accounts.audit.record("account_login_refused", account=body.name, address=_address(request))
        raise HTTPException(401, "wrong name or password")
    limits.clear("login-fail", who)
    accounts.audit.record("account_login", account=account.name, address=_address(request))
    return _logged_in(request, account.name)


@router.delete("/session", summary="Log out (this session only)")
def api_logout(request: Request, who: Acting) -> JSONResponse:
    accounts_of(request).credentials.end_session(who.session_id)
    res = JSONResponse({"logged_out": who.account.name})
    res.delete_cookie(COOKIE, path="/")
    return res


@router.get("/session", summary="Who is logged in here, if anyone (null): answers 200 either way, so any page may ask")
def api_session(request: Request) -> JSONResponse:
    who = caller(request)
    if who is None or who.via != "session":
        return JSONResponse({"account": None})
    return JSONResponse({"account": who.account.to_json(), "csrf": who.csrf})


@router.get(
    "/me",
    summary="The account asking: its bots, its API keys, and the CSRF token (by a session) or the id of the key asking",
)
def api_me(request: Request, who: SignedIn) -> JSONResponse:
    accounts = accounts_of(request)
    keys = [k.to_json() for k in accounts.credentials.api_keys(who.account.key)]
    out: dict[str, Any] = {"account": who.account.to_json(), "bots": _bots(request, who), "keys": keys}
    if who.via == "session":
        out["csrf"] = who.csrf
    else:
        out["key_id"] = who.key_id  # the key asking: a script can revoke its own key exactly
    return JSONResponse(out)


@router.post("/me/keys", status_code=201, summary="A new personal API key: answered once, kept only hashed")
def api_new_key(request: Request, who: Acting, body: NewKey) -> JSONResponse:
    accounts = accounts_of(request)
    try:
        key, info = accounts.credentials.create_key(who.account.key, body.label.strip())
    except CredentialError as exc:
        raise HTTPException(409, str(exc)) from None
    accounts.audit.record("api_key_created", account=who.account.name, key_prefix=info.prefix)
    return JSONResponse({"key": key, **info.to_json()}, status_code=201)


@router.delete("/me/keys/{key_id}", summary="Revoke one of the account's API keys")
def api_revoke_key(request: Request, who: Acting, key_id: str) -> JSONResponse:
    accounts = accounts_of(request)
    try:
        info = accounts.credentials.revoke_key(who.account.key, key_id)
    except CredentialError as exc:
        raise HTTPException(404, str(exc)) from None
    accounts.audit.record("api_key_revoked", account=who.account.name, key_prefix=info.prefix)
    return JSONResponse({"revoked": info.to_json()})


@router.post("/me/password", summary="Change the password (every session ends: log in again)")
def api_password(request: Request, who: Acting, body: NewPassword) -> JSONResponse:
    accounts_of(request).change_password(who.account.name, body.current, body.new)
    return JSONResponse({"changed": True})


@router.post("/me/delete", summary="Delete this account (password again): its keys and tokens die, results stay")
def api_delete_me(request: Request, who: Acting, body: Confirm) -> JSONResponse:
    accounts = accounts_of(request)
    if accounts.authenticate(who.account.name, body.password) is None:
        raise HTTPException(403, "the password is wrong")
    accounts.delete(who.account.name, by=who.account.name)
    res = JSONResponse({"deleted": who.account.name})
    res.delete_cookie(COOKIE, path="/")
    return res


@router.get("/me/bots", summary="The account's bots: connected (token state) and hosted (versions)")
def api_my_bots(request: Request, who: SignedIn) -> JSONResponse:
    return JSONResponse(_bots(request, who))


@router.post("/me/bots", status_code=201, summary="Create a connected bot: answers its token, once")
def api_new_bot(request: Request, who: Acting, body: NewBot) -> JSONResponse:
    name = body.name
    claim(request, who, name)
    token = BotTokens(accounts_of(request).r, accounts_of(request).prefix).add(name)
    accounts_of(request).audit.record("bot_created", account=who.account.name, bot=name, bot_kind="connected")
    return JSONResponse({"bot": name, "kind": "connected", "token": token}, status_code=201)


@router.post("/me/bots/{bot}/token", summary="A new token for one of the account's connected bots (the old one dies)")
def api_rotate(request: Request, who: Acting, bot: str) -> JSONResponse:
    tokens = _own_connected(request, who, bot)
    token = tokens.reissue(bot)
    accounts_of(request).audit.record("token_rotated", account=who.account.name, bot=bot)
    return JSONResponse({"bot": bot, "token": token})


@router.delete("/me/bots/{bot}/token", summary="Revoke a connected bot's token (it goes offline; results stay)")
def api_revoke_token(request: Request, who: Acting, bot: str) -> JSONResponse:
    tokens = _own_connected(request, who, bot)
    info = tokens.info(bot)
    if info is not None and not info.revoked:
        tokens.revoke(bot)
    return JSONResponse({"bot": bot, "revoked": True})


def claim(request: Request, who: Caller, bot: str) -> None:
    """Make a new bot name the caller's, within its quota: 409 if any bot, connected or hosted, has it."""
    if not NAME_RE.match(bot):
        raise HTTPException(422, "a bot name is 1-64 letters, digits, '_', '.' or '-', starting with one of the first")
    accounts = accounts_of(request)
    owned = accounts.bots_of(who.account.key)
    limit = request.app.state.settings.bots_per_account
    if len(owned) >= limit:
        raise HTTPException(409, f"an account owns at most {limit} bots")
    tokens, versions = BotTokens(accounts.r, accounts.prefix), Versions(accounts.r, accounts.prefix)
    if (
        tokens.info(bot) is not None
        or versions.of(bot)
        or versions.has_owner(bot)
        or not accounts.claim_bot(who.account.key, bot)
    ):
        raise HTTPException(409, f"the bot name {bot!r} is taken")


def account_room(request: Request, account: str, quota: Quota) -> None:
    """Refuse (:class:`~store.versions.QuotaError`) a submission to a bot of ``account`` that its account's
    quota has no room for now (versions building at once, source kept): before anything is claimed or counted."""
    if quota.account is not None:
        accounts = accounts_of(request)
        Versions(accounts.r, accounts.prefix).check_account(account, quota.account)


def give_back(request: Request, bot: str, fresh: bool, spent: str | None) -> None:
    """Undo what a refused submission took: the bot name it claimed (``fresh``), the account's hourly count."""
    accounts = accounts_of(request)
    if fresh and (who := caller(request)) is not None:
        accounts.release_bot(who.account.key, bot)
    if spent is not None:
        _limits(request).refund("account-versions", spent)


def owns(request: Request, bot: str) -> Caller | None:
    """The account asking, if it owns ``bot``."""
    who = caller(request)
    return who if who is not None and accounts_of(request).owner_of(bot) == who.account.key else None


def _own_connected(request: Request, who: Caller, bot: str) -> BotTokens:
    accounts = accounts_of(request)
    tokens = BotTokens(accounts.r, accounts.prefix)
    if accounts.owner_of(bot) != who.account.key or tokens.info(bot) is None:
        raise HTTPException(404, f"you own no connected bot named {bot!r}")
    return tokens


def _bots(request: Request, who: Caller) -> list[dict[str, Any]]:
    accounts = accounts_of(request)
    tokens, versions = BotTokens(accounts.r, accounts.prefix), Versions(accounts.r, accounts.prefix)
    out: list[dict[str, Any]] = []
    for bot in accounts.bots_of(who.account.key):
        info = tokens.info(bot)
        if info is not None:
            state = "revoked" if info.revoked else "live"
            out.append({"bot": bot, "kind": "connected", "token": state, "token_prefix": info.token_prefix})
        else:
            hosted = [{"name": v.name, "number": v.number, "state": v.state} for v in versions.of(bot)]
            out.append({"bot": bot, "kind": "hosted", "versions": hosted})
    return out


def account_errors(app: FastAPI) -> None:
    """Answer the store's refusals with their own status and message."""

    @app.exception_handler(AccountError)
    async def refused(request: Request, exc: AccountError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(Limited)
    async def limited(request: Request, exc: Limited) -> JSONResponse:
        headers = {"Retry-After": str(exc.retry_after)}
        return JSONResponse({"detail": str(exc)}, status_code=429, headers=headers)
