"""Hosted bots' versions: every submission is a new immutable version ``NAME@N``.

A version keeps its source archive and its hash, the manifest it was submitted
with, and where it stands:

    submitted -> building -> build-failed
                          -> preflight -> preflight-failed
                                       -> ready  (may join rated leagues)

with, for each step, what the owner needs to see: the build log, the preflight
report, and the evidence of what went wrong while it was hosted (its last output
and the sandbox's reason). A league's quarantine holds a version like any bot
(:meth:`store.leagues.LeagueStore.quarantine`); its page shows it beside this
evidence. A version's source and manifest never change; only its state and
these reports do, written by the one host that holds its lease (:meth:`Versions.claim`).

Every text in those reports comes from a stranger's program or build, so every
write goes through :meth:`Versions.update`, which makes them printable
(:mod:`store.printable`): no writer can keep an escape sequence. Who may read
a version's output is its owner's choice (:meth:`Versions.set_output_public`);
the store keeps the choice, the web enforces it.

A bot submits within its :class:`Quota`: so many versions an hour, and so many
bytes of source kept (every archive lives in Redis, in its RAM: this bound is
what keeps the arena's store from filling). A hosted bot has one owner key, so
these are also the quotas of its owner (the key's holder). A bot an account owns is also
within its account's :class:`~store.account_quotas.AccountQuota` (all the account's bots together).

Keys (:class:`store.keys.Keys`): ``hosted``, ``hosted-owner``, ``hosted-public-output``,
``versions:<bot>``, ``source:<bot>@<n>``, ``host-lease:<bot>@<n>``.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import math
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import redis
from redis.exceptions import LockError

from config import ArenaSettings

from . import account_quotas, printable
from .account_quotas import FAILED, AccountQuota
from .account_quotas import QuotaError as QuotaError
from .codec import text
from .keys import Keys
from .tokens import NAME_RE, VERSION_RE, token_hash

STATES = ("submitted", "building", "build-failed", "preflight", "preflight-failed", "ready")
MAX_LOG = 64 << 10
"""Most of a build log kept (its end: where a build says why it failed)."""
MAX_EVIDENCE = 10
MAX_OUTPUT = 40
"""Lines of a program's output kept (with each piece of evidence, and as its latest output)."""
MAX_LINE = 1000
"""Characters kept of one line of output, a note or a reason."""
HOUR = 3600.0


class VersionError(ValueError):
    """An unknown bot or version, or a bad name."""


@dataclass(frozen=True)
class Quota:
    """What one hosted bot (so its owner key's holder) may submit: ``versions_per_hour`` versions in any
    hour, and ``source_bytes`` bytes of source archives kept in Redis, all its versions together."""

    versions_per_hour: int
    source_bytes: int
    account: AccountQuota | None = None
    """What all the bots of the account that owns the bot may hold together, if an account owns it."""

    @classmethod
    def of(cls, settings: ArenaSettings) -> Quota:
        """The quota the settings give (``TABLANETTE_VERSIONS_PER_HOUR``, ``TABLANETTE_SOURCE_BYTES_PER_BOT``,
        and the account's: :mod:`store.account_quotas`)."""
        return cls(settings.versions_per_hour, settings.source_bytes_per_bot, AccountQuota.of(settings))


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


def split_version(name: str) -> tuple[str, int] | None:
    """``("bot", 3)`` for ``"bot@3"``; None for a name that is not a version.

    >>> split_version("perly@12"), split_version("perly"), split_version("perly@0")
    (('perly', 12), None, None)
    """
    m = VERSION_RE.match(name)
    return (m["bot"], int(m["number"])) if m else None


@dataclass
class Version:
    bot: str
    number: int
    source_hash: str
    manifest: dict[str, Any]
    submitted: float
    state: str = "submitted"
    note: str = ""
    """Why it is in its state, in words (a failed build's last line, a failed preflight's reason)."""
    build_log: str = ""
    build_seconds: float | None = None
    preflight: dict[str, Any] = field(default_factory=dict)
    """The preflight's report: its league, games, and per bot games, timeouts, illegal plays, forfeits."""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    """What went wrong while hosted, newest first: ``{at, reason, output, reason_public}``: ``reason`` in
    the arena's own words, ``output`` the program's own (its last lines, the answer it wrote);
    ``reason_public`` marks a reason kept apart from the program's words (a fault kept before they were
    kept apart lacks it: its reason may quote the program, and is its owner's to read only)."""
    output: list[str] = field(default_factory=list)
    """The last lines of its program's own output while hosted (kept fresh by its host every few seconds)."""
    output_at: float | None = None
    updated: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.bot}@{self.number}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **asdict(self)}

    def clean(self) -> None:
        """Make every text it holds printable (:mod:`store.printable`) and bounded: the note, the build
        log (its end), the latest output and each fault's reason and output, the preflight report."""
        self.note = printable.line(self.note, MAX_LINE)
        self.build_log = printable.text(self.build_log, MAX_LOG)
        self.output = printable.lines(self.output[-MAX_OUTPUT:], MAX_LINE)
        self.evidence = [printable.deep(e, MAX_LINE) for e in self.evidence[:MAX_EVIDENCE]]
        self.preflight = printable.deep(self.preflight, MAX_LINE)

    def printable_json(self) -> dict[str, Any]:
        """:meth:`to_json` with every text printable, the manifest's too, whenever it was stored: what
        the CLI prints and the web serves."""
        copy = Version.from_json(json.dumps(self.to_json()))
        copy.clean()
        copy.manifest = printable.deep(copy.manifest, MAX_LINE)
        return copy.to_json() | {"build_error": build_error(copy.build_log) if copy.state == "build-failed" else ""}

    @classmethod
    def from_json(cls, raw: str | bytes) -> Version:
        data = json.loads(raw)
        data.pop("name", None)
        return cls(**data)


def build_error(log: str) -> str:
    r"""The line of a failed build's log that most likely says why: its last line naming an error,
    else its last line of output ('' for none). The build's own words: shown where its log is.

    >>> build_error("$ javac Bot.java\nBot.java:3: error: ';' expected\n  x = 1\n1 error\n[failed: ...]\n")
    "Bot.java:3: error: ';' expected"
    >>> build_error("$ sh build.sh\nsegfault here\n\n[failed: the build exited with status 139 in 0.1 s]\n")
    'segfault here'
    """
    lines = [line.strip() for line in log.splitlines()]
    output = [line for line in lines[1:] if line and not line.startswith("[failed: ") and not line.startswith("[built")]
    named = [line for line in output if ERROR_WORDS.search(line) and not ERROR_COUNT.fullmatch(line)]
    return (named or output or [""])[-1][:MAX_LINE]


ERROR_WORDS = re.compile(r"\b(error|fatal|exception|cannot|undefined reference|not found)\b", re.IGNORECASE)
ERROR_COUNT = re.compile(r"\d+ errors?( generated)?\.?", re.IGNORECASE)
"""A compiler's closing count ("1 error", "2 errors generated."): never the line that says why."""


class Versions:
    """The versions of every hosted bot, with a blocking client (CLI, hosts, web)."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.r = client
        self.keys = Keys(prefix)

    def submit(
        self, bot: str, manifest: dict[str, Any], archive: bytes, source_hash: str, quota: Quota | None = None
    ) -> Version:
        """Keep a new version of ``bot`` (hosted bots are created by their first submission), within
        ``quota`` if given: over it, :class:`QuotaError` and nothing is kept (not even a number taken).

        The quota is checked and the version kept in one optimistic transaction on the bot's versions,
        so two submissions at once cannot both pass the last free place. When the source bytes would
        pass the bound, the sources of the bot's failed versions are given up first (nothing builds or
        runs them again). A bot an account owns is also checked against the account's quota
        (:mod:`store.account_quotas`), in the same transaction, which then watches all the account's bots.
        """
        if not NAME_RE.match(bot):
            raise VersionError(f"bot name {bot!r} must be 1-64 letters, digits, '_', '.' or '-'")
        if self.r.hexists(self.keys.bots, bot) and not self.r.hexists(self.keys.hosted, bot):
            raise VersionError(f"{bot!r} is a bot that connects itself (`tablanette bot add`): choose another name")
        made: list[Version] = []

        def keep(pipe: redis.client.Pipeline) -> None:
            now = time.time()
            drop = self._within(bot, len(archive), quota, now) if quota is not None else []
            if quota is not None and quota.account is not None:
                drop = sorted(set(drop) | set(self._account_room(pipe, bot, len(archive), quota.account)))
            number = int(pipe.hget(self.keys.hosted, bot) or 0) + 1
            version = Version(bot, number, source_hash, manifest, now, updated=now)
            pipe.multi()
            if drop:
                pipe.delete(*(self.keys.source(name) for name in drop))
            pipe.hset(self.keys.hosted, bot, str(number))
            pipe.set(self.keys.source(version.name), archive)
            pipe.hset(self.keys.versions(bot), str(number), json.dumps(version.to_json()))
            made[:] = [version]

        self.r.transaction(keep, self.keys.hosted, self.keys.versions(bot))
        return made[0]

    def check_rate(self, bot: str, quota: Quota) -> None:
        """:class:`QuotaError` (429) if ``bot`` may submit no version now: a cheap early refusal, before
        an upload is read (:meth:`submit` checks again, for good)."""
        self._rate(bot, self.of(bot), quota, time.time())

    def _rate(self, bot: str, versions: list[Version], quota: Quota, now: float) -> None:
        recent = sorted(v.submitted for v in versions if v.submitted > now - HOUR)
        if len(recent) >= quota.versions_per_hour:
            wait = max(1, math.ceil(recent[-quota.versions_per_hour] + HOUR - now))
            raise QuotaError(
                f"{bot} has had {len(recent)} versions in the last hour, the most a hosted bot may have "
                f"(TABLANETTE_VERSIONS_PER_HOUR={quota.versions_per_hour}): submit the next in {wait} s",
                429,
                wait,
            )

    def _within(self, bot: str, size: int, quota: Quota, now: float) -> list[str]:
        """Check a new archive of ``size`` bytes against ``bot``'s quota (:class:`QuotaError` if over);
        the versions whose sources must go to make room for it (failed ones only)."""
        versions = self.of(bot)
        self._rate(bot, versions, quota, now)
        reads = self.r.pipeline(transaction=False)
        for v in versions:
            reads.strlen(self.keys.source(v.name))
        sizes = [int(n) for n in reads.execute()] if versions else []
        kept = sum(sizes)
        if kept + size <= quota.source_bytes:
            return []
        spare = [(v.name, n) for v, n in zip(versions, sizes, strict=True) if v.state in FAILED and n]
        if kept - sum(n for _, n in spare) + size > quota.source_bytes:
            raise QuotaError(
                f"{bot} keeps {_mb(kept)} of source in the arena's store; this archive's {_mb(size)} would pass "
                f"the most a hosted bot may keep, {_mb(quota.source_bytes)} (TABLANETTE_SOURCE_BYTES_PER_BOT): "
                "ask the arena's operator for room",
                413,
            )
        return [name for name, _ in spare]

    def _account_room(self, pipe: redis.client.Pipeline, bot: str, size: int, quota: AccountQuota) -> list[str]:
        """Check a new archive of ``size`` bytes against the quota of the account that owns ``bot``, if one
        does (watching its bots, so a change to any of them makes the submission try again); the versions
        whose sources must go to make room for it."""
        owner = pipe.hget(self.keys.bot_account, bot)
        if owner is None:
            return []
        usage = self.account_usage(text(owner), pipe)
        return account_quotas.check(usage, size, quota)

    def account_usage(self, account: str, watch: redis.client.Pipeline | None = None) -> account_quotas.Usage:
        """What the hosted bots of ``account`` (its lower-case name) hold now; with ``watch``, a pipeline in
        an optimistic transaction, watching the account's bots and their versions first."""
        bots_key = self.keys.account_bots(account)
        if watch is not None:
            watch.watch(bots_key)  # type: ignore[no-untyped-call]
        bots = sorted(text(b) for b in self.r.smembers(bots_key))
        if watch is not None and bots:
            watch.watch(*(self.keys.versions(b) for b in bots))  # type: ignore[no-untyped-call]
        usage = account_quotas.Usage(account)
        for bot in bots:
            versions = self.of(bot)
            reads = self.r.pipeline(transaction=False)
            for v in versions:
                reads.strlen(self.keys.source(v.name))
            for v, size in zip(versions, reads.execute() if versions else [], strict=True):
                usage.add(v.name, v.state, int(size))
        return usage

    def check_account(self, account: str, quota: AccountQuota) -> None:
        """:class:`QuotaError` if ``account`` may submit no version now (too many building at once, or its
        source kept already at the bound): a cheap early refusal, before an upload is read or counted
        (:meth:`submit` checks again, for good, with the upload's size)."""
        account_quotas.check(self.account_usage(account), 0, quota)

    def get(self, name: str) -> Version | None:
        parts = split_version(name)
        if parts is None:
            return None
        raw = self.r.hget(self.keys.versions(parts[0]), str(parts[1]))
        return Version.from_json(raw) if raw else None

    def require(self, name: str) -> Version:
        version = self.get(name)
        if version is None:
            raise VersionError(
                f"no hosted version {name!r} (versions are named like mybot@1; see `tablanette bot versions`)"
            )
        return version

    def of(self, bot: str) -> list[Version]:
        """The bot's versions, oldest first."""
        raw = self.r.hgetall(self.keys.versions(bot))
        return sorted((Version.from_json(v) for v in raw.values()), key=lambda v: v.number)

    def bots(self) -> list[str]:
        return sorted(text(b) for b in self.r.hkeys(self.keys.hosted))

    def all(self) -> list[Version]:
        return [v for bot in self.bots() for v in self.of(bot)]

    def resolve(self, name: str) -> str:
        """``bot@latest`` -> the bot's newest ready version; any other name as it is."""
        bot, _, which = name.partition("@")
        if which != "latest":
            return name
        ready = [v for v in self.of(bot) if v.state == "ready"]
        if not ready:
            raise VersionError(
                f"{bot!r} has no version that passed preflight yet (see `tablanette bot versions {bot}`)"
            )
        return ready[-1].name

    def source(self, name: str) -> bytes:
        data = self.r.get(self.keys.source(name))
        if data is None:
            raise VersionError(f"the source of {name} is missing")
        return data if isinstance(data, bytes) else data.encode()

    def update(self, name: str, change: Callable[[Version], None]) -> Version:
        """Apply ``change`` to the version as it is now and write it back, atomically: a host's loop,
        its jobs and its runners write the same record, and none may undo another's change (an
        optimistic transaction, tried again if the record changed in between)."""
        parts = split_version(name)
        if parts is None:
            raise VersionError(f"{name!r} is not a version's name (bot@n)")
        key, field_name = self.keys.versions(parts[0]), str(parts[1])
        done: list[Version] = []

        def apply(pipe: redis.client.Pipeline) -> None:
            raw = pipe.hget(key, field_name)
            if raw is None:
                raise VersionError(f"no hosted version {name!r}")
            version = Version.from_json(raw)
            change(version)
            version.updated = time.time()
            version.clean()  # whoever wrote them, the texts kept are printable and bounded
            pipe.multi()
            pipe.hset(key, field_name, json.dumps(version.to_json()))
            done[:] = [version]

        self.r.transaction(apply, key)
        return done[0]

    def set_state(self, name: str, state: str, note: str = "") -> Version:
        if state not in STATES:
            raise ValueError(f"unknown version state {state!r}")

        def change(v: Version) -> None:
            v.state, v.note = state, note

        return self.update(name, change)

    def set_output(self, name: str, output: list[str]) -> None:
        def change(v: Version) -> None:
            v.output, v.output_at = list(output), time.time()

        self.update(name, change)

    def add_evidence(self, name: str, reason: str, output: list[str]) -> None:
        """Keep a fault: ``reason`` in the arena's own words only (anyone may read it: never a word of the
        program's), ``output`` the program's own words (its owner's to read)."""

        def change(v: Version) -> None:
            fault = {"at": time.time(), "reason": reason, "output": output[-MAX_OUTPUT:], "reason_public": True}
            v.evidence.insert(0, fault)

        self.update(name, change)

    # ----------------------------------------------------------- owners

    def issue_owner_key(self, bot: str, replace: bool = True) -> str | None:
        """A new owner key for ``bot`` (shown once; only its hash is kept), replacing any earlier one;
        with ``replace=False``, only if it has none yet (else None)."""
        if not self.r.hexists(self.keys.hosted, bot):
            raise VersionError(f"no hosted bot named {bot!r}")
        key = "tbo_" + secrets.token_urlsafe(32)
        if replace:
            self.r.hset(self.keys.hosted_owner, bot, token_hash(key))
        elif not self.r.hsetnx(self.keys.hosted_owner, bot, token_hash(key)):
            return None
        return key

    def set_output_public(self, bot: str, public: bool) -> None:
        """The owner's choice: ``public``, everyone sees the bot's output, faults' output and build logs;
        else (the default) only its owner and the operator do."""
        if not self.r.hexists(self.keys.hosted, bot):
            raise VersionError(f"no hosted bot named {bot!r}")
        if public:
            self.r.hset(self.keys.hosted_public_output, bot, "1")
        else:
            self.r.hdel(self.keys.hosted_public_output, bot)

    def output_public(self, bot: str) -> bool:
        """Whether ``bot``'s owner shows its output to everyone (:meth:`set_output_public`)."""
        return bool(self.r.hexists(self.keys.hosted_public_output, bot))

    def has_owner(self, bot: str) -> bool:
        return bool(self.r.hexists(self.keys.hosted_owner, bot))

    def is_owner(self, bot: str, key: str) -> bool:
        """Whether ``key`` is ``bot``'s owner key (compared in constant time)."""
        kept = self.r.hget(self.keys.hosted_owner, bot)
        return kept is not None and hmac.compare_digest(text(kept), token_hash(key))

    # ----------------------------------------------------------- the hosts' leases

    def claim(self, name: str, host: str, ttl_s: float) -> bool:
        """Take (or keep, if ``host`` holds it) the version's lease for ``ttl_s`` seconds.

        A redis-py lock whose token is the host's name: taken with ``SET NX PX``,
        kept with its compare-and-expire script, so a host never extends a lease
        another host has taken since its own ran out.
        """
        lock = self.r.lock(self.keys.host_lease(name), timeout=ttl_s, blocking=False, thread_local=False)
        if lock.acquire(token=host):
            return True
        lock.local.token = host.encode()
        try:
            return bool(lock.reacquire())
        except LockError:  # held by another host
            return False

    def holder(self, name: str) -> str | None:
        raw = self.r.get(self.keys.host_lease(name))
        return text(raw) if raw else None

    def release(self, name: str, host: str) -> None:
        """Give the lease up if ``host`` holds it (compare-and-delete: never another host's)."""
        lock = self.r.lock(self.keys.host_lease(name), thread_local=False)
        lock.local.token = host.encode()
        with contextlib.suppress(LockError):  # not (or no longer) ours
            lock.release()
