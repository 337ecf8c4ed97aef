"""Accounts: the people who sign up on the web and own bots.

An account has a name (3-32 letters, digits, ``_`` or ``-``; unique whatever its case) and a password
kept only as an argon2id hash (argon2-cffi's defaults: RFC 9106's low-memory choice). The operator sets
who may sign up (:data:`POLICIES`): ``open``, ``invite`` (a code the operator issued, used once) or
``closed`` (the default of an arena that never chose: nobody signs up until the operator opens it).

An account owns bots (:meth:`Accounts.claim_bot`): the connected bots it created (their tokens) and the
hosted bots it submitted. A bot name is claimed once, by one account, for good: a deleted account's bots
keep their names and results on the ladders, and no one else can take those names.

Suspending an account ends its web sessions, refuses its API keys while it lasts, and revokes its
connected bots' tokens (a new token after the lift); every league holds its bots' matches back, as for
a bot in quarantine (:meth:`Accounts.suspended_among`), until the lift; nothing it played is lost.
Deleting it does the same for good, and removes its password and keys; its name stays reserved (a
tombstone), so no one can sign up as it and claim its history.

Its keys are in :mod:`store.keys`.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import redis
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from .audit import AuditLog
from .codec import text
from .credentials import Credentials, digest
from .keys import Keys
from .tokens import BotTokens

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{2,31}$")
MIN_PASSWORD = 10
MAX_PASSWORD = 256
"""Characters: a longer password is refused before it is hashed (hashing is the expensive part)."""
POLICIES = ("open", "invite", "closed")
INVITE_TTL = 30 * 86_400
"""Seconds an invite code stays good."""

Policy = Literal["open", "invite", "closed"]
_hasher = PasswordHasher()


@functools.cache
def _dummy() -> str:
    """Verified against when no account has the name, so a refusal takes as long either way (made on first
    use: a hash costs a tenth of a second of CPU, which every process importing this module would pay)."""
    return _hasher.hash("not anyone's password")


class AccountError(ValueError):
    """A refused sign-up or change; ``status`` is the HTTP status that says why."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Account:
    name: str
    """As the person typed it at sign-up."""
    created: float
    state: str
    """``active``, ``suspended`` or ``deleted`` (a tombstone)."""
    invited_by: str = ""

    @property
    def key(self) -> str:
        return self.name.lower()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "created": self.created, "state": self.state}


class Accounts:
    """Every account under ``prefix`` (blocking client: the web app's threads, the CLI, tests)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self.keys = Keys(prefix)
        self.credentials = Credentials(client, prefix)
        self.audit = AuditLog(client, prefix)

    def _account(self, key: str) -> str:
        return self.keys.account(key)

    def _bots_of(self, key: str) -> str:
        return self.keys.account_bots(key)

    @property
    def _bot_account(self) -> str:
        return self.keys.bot_account

    # ------------------------------------------------------------ who may sign up

    def policy(self) -> Policy:
        raw = self.r.get(self.keys.signup_policy)
        value = "closed" if raw is None else text(raw)
        return value if value in POLICIES else "closed"  # type: ignore[return-value]

    def set_policy(self, policy: str) -> None:
        if policy not in POLICIES:
            raise AccountError(f"sign-up policy must be one of {', '.join(POLICIES)}, not {policy!r}")
        self.r.set(self.keys.signup_policy, policy)
        self.audit.record("signup_policy", policy=policy)

    def issue_invite(self, by: str = "operator") -> str:
        """A new invite code (shown once, good for one sign-up within :data:`INVITE_TTL`)."""
        code = "tbi_" + secrets.token_urlsafe(12)
        self.r.set(self.keys.invite(digest(code)), json.dumps({"by": by, "at": time.time()}), ex=INVITE_TTL)
        self.audit.record("invite_issued", by=by, invite_prefix=code[:8])
        return code

    # ------------------------------------------------------------ sign-up and login

    def sign_up(self, name: str, password: str, invite: str = "") -> Account:
        """A new active account, or :class:`AccountError` saying why not."""
        policy = self.policy()
        if policy == "closed":
            raise AccountError("sign-up is closed on this arena: ask its operator", 403)
        if not NAME_RE.match(name):
            raise AccountError("a name is 3-32 letters, digits, '_' or '-', starting with a letter or digit")
        check_password(name, password)
        if self.r.exists(self._account(name.lower())):
            raise AccountError(f"the name {name!r} is taken", 409)
        invited_by = ""
        if policy == "invite":
            raw = self.r.getdel(self.keys.invite(digest(invite))) if invite else None
            if raw is None:
                raise AccountError("sign-up needs an invite code from the operator (unknown, used or expired)", 403)
            invited_by = str(json.loads(raw)["by"])
        account = Account(name, time.time(), "active", invited_by)
        data = {**account.__dict__, "hash": _hasher.hash(password)}
        if not self.r.set(self._account(account.key), json.dumps(data), nx=True):
            if invited_by:  # lost a race for the name: the code is not used up by a refused sign-up
                again = json.dumps({"by": invited_by, "at": time.time()})
                self.r.set(self.keys.invite(digest(invite)), again, ex=INVITE_TTL)
            raise AccountError(f"the name {name!r} is taken", 409)
        self.r.sadd(self.keys.accounts, account.key)
        self.audit.record("signed_up", account=name, policy=policy, invited_by=invited_by)
        return account

    def authenticate(self, name: str, password: str) -> Account | None:
        """The active account whose name and password these are; None otherwise (which of the two was wrong,
        or that the account is suspended, is not said: it takes as long either way)."""
        dummy = _dummy()  # made before the look-up, so a process's first refusal is not the slower one
        raw = self.r.get(self._account(name.lower())) if NAME_RE.match(name) else None
        data = json.loads(raw) if raw is not None else {}
        try:
            _hasher.verify(data.get("hash", dummy), password[:MAX_PASSWORD])
        except (VerificationError, InvalidHashError):
            return None
        if not data or data["state"] != "active":
            return None
        if _hasher.check_needs_rehash(data["hash"]):
            data["hash"] = _hasher.hash(password)
            self.r.set(self._account(name.lower()), json.dumps(data))
        return _account(data)

    def get(self, name: str) -> Account | None:
        raw = self.r.get(self._account(name.lower())) if NAME_RE.match(name) else None
        return None if raw is None else _account(json.loads(raw))

    def require(self, name: str) -> Account:
        account = self.get(name)
        if account is None or account.state == "deleted":
            raise AccountError(f"no account named {name!r}", 404)
        return account

    def all(self) -> list[Account]:
        names = sorted(text(n) for n in self.r.smembers(self.keys.accounts))
        return [a for a in (self.get(n) for n in names) if a is not None]

    def change_password(self, name: str, old: str, new: str) -> None:
        account = self.authenticate(name, old)
        if account is None:
            raise AccountError("the current password is wrong", 403)
        check_password(account.name, new)
        self._set(account.key, hash=_hasher.hash(new))
        self.credentials.end_sessions(account.key)  # every other browser logs in again
        self.audit.record("password_changed", account=account.name)

    # ------------------------------------------------------------ bots

    def claim_bot(self, account: str, bot: str) -> bool:
        """Make ``bot`` the account's; False if the name was already claimed (by anyone)."""
        if not self.r.hsetnx(self._bot_account, bot, account.lower()):
            return False
        self.r.sadd(self._bots_of(account.lower()), bot)
        return True

    def release_bot(self, account: str, bot: str) -> bool:
        """Give back a name ``account`` claimed for a hosted bot whose first version was refused: only while
        the bot has no version and no token (nothing of it kept). Whether it was given back."""
        key = account.lower()
        released: list[bool] = []

        def undo(pipe: redis.client.Pipeline) -> None:
            owner = pipe.hget(self._bot_account, bot)
            kept = (
                pipe.exists(self.keys.versions(bot))
                or pipe.hexists(self.keys.hosted, bot)
                or pipe.hexists(self.keys.hosted_owner, bot)
                or pipe.hexists(self.keys.bots, bot)  # a connected bot's token
            )
            if owner is None or text(owner) != key or kept:
                released[:] = [False]
                return
            pipe.multi()
            pipe.hdel(self._bot_account, bot)
            pipe.srem(self._bots_of(key), bot)
            released[:] = [True]

        watched = (self._bot_account, self.keys.versions(bot), self.keys.hosted, self.keys.hosted_owner, self.keys.bots)
        self.r.transaction(undo, *watched)
        return released[0]

    def owner_of(self, bot: str) -> str | None:
        raw = self.r.hget(self._bot_account, bot)
        return None if raw is None else text(raw)

    def suspended_among(self, bots: Sequence[str]) -> set[str]:
        """The bots of ``bots`` (names, or hosted versions ``bot@n``) whose owning account is suspended:
        two reads, whatever the number of bots (the scheduler asks every few seconds)."""
        if not bots:
            return set()
        owners = [
            None if o is None else text(o) for o in self.r.hmget(self._bot_account, [b.split("@")[0] for b in bots])
        ]
        named = sorted({o for o in owners if o is not None})
        if not named:
            return set()
        kept = self.r.mget([self._account(n) for n in named])
        states = {n: json.loads(raw)["state"] for n, raw in zip(named, kept, strict=True) if raw}
        return {b for b, o in zip(bots, owners, strict=True) if o is not None and states.get(o) == "suspended"}

    def bots_of(self, account: str) -> list[str]:
        return sorted(text(b) for b in self.r.smembers(self._bots_of(account.lower())))

    # ------------------------------------------------------------ the operator's and the account's own acts

    def suspend(self, name: str, reason: str = "") -> Account:
        account = self.require(name)
        self._set(account.key, state="suspended")
        sessions, revoked = self._shut(account)
        self.audit.record("suspended", account=account.name, reason=reason, sessions=sessions, tokens=revoked)
        return self.require(name)

    def unsuspend(self, name: str) -> Account:
        account = self.require(name)
        self._set(account.key, state="active")
        self.audit.record("unsuspended", account=account.name)
        return self.require(name)

    def delete(self, name: str, by: str) -> None:
        """Delete the account: sessions, keys, password and bot tokens go; its bots' names and results stay."""
        account = self.require(name)
        sessions, revoked = self._shut(account)
        keys = self.credentials.revoke_keys(account.key)
        tomb = {"name": account.name, "created": account.created, "state": "deleted", "deleted": time.time()}
        self.r.set(self._account(account.key), json.dumps(tomb))
        self.audit.record("account_deleted", account=account.name, by=by, sessions=sessions, tokens=revoked, keys=keys)

    def _shut(self, account: Account) -> tuple[int, int]:
        """End the account's sessions and revoke its connected bots' live tokens."""
        sessions = self.credentials.end_sessions(account.key)
        tokens = BotTokens(self.r, self.prefix)
        revoked = 0
        for bot in self.bots_of(account.key):
            info = tokens.info(bot)
            if info is not None and not info.revoked:
                tokens.revoke(bot)
                revoked += 1
        return sessions, revoked

    def _set(self, key: str, **fields: object) -> None:
        raw = self.r.get(self._account(key))
        if raw is None:
            raise AccountError(f"no account named {key!r}", 404)
        self.r.set(self._account(key), json.dumps({**json.loads(raw), **fields}))


def check_password(name: str, password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(f"a password is {MIN_PASSWORD}-{MAX_PASSWORD} characters")
    if name.lower() in password.lower():
        raise AccountError("a password may not contain the account's name")


def _account(data: dict[str, Any]) -> Account:
    return Account(data["name"], data["created"], data["state"], data.get("invited_by", ""))
