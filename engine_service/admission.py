"""Who may open a bot stream: the Hello checked, rate-limited, and the takeover policy.

A Hello is refused, with a status the bot can act on, when:

- its peer address says Hello too often (``TABLANETTE_HELLO_RATE``) or holds too
  many live streams (``TABLANETTE_MAX_STREAMS_PER_ADDRESS``), or its token is
  tried too often (``TABLANETTE_TOKEN_HELLO_RATE``): RESOURCE_EXHAUSTED, with a
  ``retry-after-ms`` hint;
- it is malformed: INVALID_ARGUMENT; its token is unknown or revoked:
  UNAUTHENTICATED; it names another bot than its token's: PERMISSION_DENIED;
- **the bot is connected already**, and that session is live: ALREADY_EXISTS.

The takeover policy: a bot has one session at a time. A second Hello with the
same token replaces the first only if the first has gone quiet (nothing heard
for ``TABLANETTE_KEEPALIVE_MS``, while every SDK sends a keepalive at half of
it) or its replica no longer answers; otherwise the newer one is refused, so a
stolen token cannot push a playing bot off its games. A session on another
replica is asked about through that replica's Dispatch service. The refused
side is told ALREADY_EXISTS and every SDK retries later; a replaced session is
told ABORTED and may reconnect. Every login, refusal and takeover goes to the
audit log.

The check, the takeover and the registration are one step: on this replica a
lock per bot is held from the look at the bot's current session until the new
one is registered and seated, and across replicas the registration is a
compare-and-set in Redis (:meth:`SessionRegistry.claim`: the entry is written
only if the bot has none, or has exactly the session this Hello was judged to
replace). So of N Hellos with one token at once, on any replicas, exactly one
opens a session and N-1 are refused with ALREADY_EXISTS (while N is within the
token's Hello burst, ``TABLANETTE_TOKEN_HELLO_BURST``: past it, RESOURCE_EXHAUSTED).
A refusal is audited after the lock is let go, so the refused do not queue behind
each other's audit writes.

A client that goes away while its claim is in flight (its stream's task is
cancelled) cannot leave the entry behind: the claim runs on, shielded, and once it
is over the entry is released (if it is still this session's), in a task the
holder keeps. Once ``seat`` has run, the stream's own clean-up releases it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import NoReturn, Protocol, TypeVar

import grpc

from config import ArenaSettings
from engine_service.limits import RateLimit, abort_busy
from store import printable
from store.audit import Audit
from store.sessions import SessionEntry, Sessions
from tablanette.v1 import arena_pb2 as apb

log = logging.getLogger("tablanette.admission")
NAME_CHARS = 64
TOKEN_CHARS = 256
T = TypeVar("T")


class Holder(Protocol):
    """What admission needs to know of the live connections of this replica."""

    def local_session(self, bot: str) -> tuple[str, bool] | None:
        """(session id, live?) of the bot's connection here, if any."""
        ...

    def streams_from(self, address: str) -> int: ...

    def release(self, entry: SessionEntry, after: asyncio.Future[str | None] | None = None) -> None:
        """Delete the bot's registry entry if it is still ``entry``'s session, in a task of the holder's
        own, once ``after`` (a claim of it still under way) is over."""
        ...


@dataclass(frozen=True)
class Admitted:
    entry: SessionEntry
    token_digest: str
    replaces: str | None
    """The session id this one takes over (it had gone quiet), if any."""


class KeyedLocks:
    """An asyncio lock per key (a bot), kept only while someone holds or waits for it.

    >>> locks = KeyedLocks()
    >>> async def twice():
    ...     async with locks.hold("ann"):
    ...         inside = len(locks)
    ...     return inside, len(locks)
    >>> asyncio.run(twice())
    (1, 0)
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # key -> (lock, holders and waiters)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users > 1:
                self._locks[key] = (lock, users - 1)
            else:
                del self._locks[key]

    def __len__(self) -> int:
        return len(self._locks)


def short(text: str, limit: int = NAME_CHARS) -> str:
    """``text`` as it may be echoed back: never longer than ``limit`` characters.

    >>> short("x" * 100, 10)
    'xxxxxxx...'
    """
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Admission:
    def __init__(
        self,
        settings: ArenaSettings,
        registry: Sessions,
        lookup_token: Callable[[str], Awaitable[str | None]],
        audit: Audit,
        probe: Callable[[SessionEntry], Awaitable[bool]],
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.lookup_token = lookup_token
        self.audit = audit
        self.probe = probe
        self.hellos = RateLimit(settings.hello_rate, settings.hello_burst)
        self.token_hellos = RateLimit(settings.token_hello_rate, settings.token_hello_burst)
        self._limited_audit = RateLimit(1 / 60, 1)  # a refused address is audited once a minute
        self.locks = KeyedLocks()

    async def admit(
        self,
        first: apb.BotMessage,
        context: grpc.aio.ServicerContext,
        peer: str,
        holder: Holder,
        seat: Callable[[Admitted], T],
    ) -> T:
        """Open the session a Hello asks for, or abort with why not.

        Admitted, the session is registered (the compare-and-set claim) and then
        ``seat`` makes it the bot's session on this replica, both with the bot's
        lock held; what ``seat`` returns is returned.
        """
        wait = self.hellos.take(peer)
        if wait:
            await self.refuse_busy(context, peer, f"more than {self.settings.hello_rate:g} Hellos per second", wait)
        if first.WhichOneof("kind") != "hello":
            await self._refuse(context, peer, "", grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a Hello")
        hello = first.hello
        claimed = short(printable.line(hello.bot_name))  # audited and echoed: never a stranger's escape sequence
        if not hello.token or len(hello.token) > TOKEN_CHARS:
            why = "Hello carries no token" if not hello.token else f"a token is at most {TOKEN_CHARS} characters"
            await self._refuse(context, peer, claimed, grpc.StatusCode.UNAUTHENTICATED, why)
        digest = hashlib.sha256(hello.token.encode()).hexdigest()
        wait = self.token_hellos.take(digest)
        if wait:
            await self.refuse_busy(context, peer, "this token says Hello too often", wait)
        name = await self.lookup_token(hello.token)
        if name is None:
            await self._refuse(context, peer, claimed, grpc.StatusCode.UNAUTHENTICATED, "unknown or revoked token")
        assert name is not None
        if hello.bot_name and hello.bot_name != name:
            why = f"this token belongs to bot {name!r}, not {claimed!r}"
            await self._refuse(context, peer, claimed, grpc.StatusCode.PERMISSION_DENIED, why)
        if hello.max_games < 0 or len(hello.version) > 64 or printable.line(hello.version) != hello.version:
            why = "max_games must be >= 0, and version at most 64 printable characters (no control or escape codes)"
            await self._refuse(context, peer, name, grpc.StatusCode.INVALID_ARGUMENT, why)
        if holder.streams_from(peer) >= self.settings.max_streams_per_address:
            why = f"{self.settings.max_streams_per_address} bot streams from {peer} already"
            await self.refuse_busy(context, peer, why, 5.0)
        entry = SessionEntry(
            name, self.settings.advertise, secrets.token_hex(8), hello.version, max(1, hello.max_games)
        )
        async with self.locks.hold(name):
            held, replaces = await self._takeover(name, holder)
            if held is None:  # a claim that loses names the session another replica registered since we looked
                held = await self._claim(entry, replaces, holder)
            if held is None:
                seated = seat(Admitted(entry, digest, replaces))
        if held is not None:  # refused with the lock let go: the other Hellos of the bot need not wait for the audit
            await self._already(context, peer, name, held)
        fields = {"peer": peer, "bot": name, "version": hello.version, "session": entry.session_id}
        await self.audit.record("takeover" if replaces else "login", **fields, replaces=replaces)
        return seated

    async def _takeover(self, bot: str, holder: Holder) -> tuple[str | None, str | None]:
        """(the bot's live session, which refuses this Hello; the quiet session this Hello may replace): at most
        one of them, or neither when the bot has no session."""
        here = holder.local_session(bot)
        if here is not None:
            session, live = here
            return (session, None) if live else (None, session)
        entry = await self.registry.lookup(bot)
        if entry is None or entry.replica == self.settings.advertise:
            return None, entry.session_id if entry else None  # ours, and gone: a replica restarted on this address
        if await self.probe(entry):
            return entry.session_id, None
        return None, entry.session_id

    async def _claim(self, entry: SessionEntry, replaces: str | None, holder: Holder) -> str | None:
        """:meth:`SessionRegistry.claim`, whose outcome no cancellation can lose: if the Hello's task is
        cancelled (its client went away) or the claim fails, Redis may have written the entry all the same,
        so the holder releases it once the claim is over."""
        claim = asyncio.ensure_future(self.registry.claim(entry, replaces))
        try:
            return await asyncio.shield(claim)
        except BaseException as exc:
            why = "its client left" if isinstance(exc, asyncio.CancelledError) else f"it failed ({exc})"
            log.info("bot %s: session %s is released, %s while it was being claimed", entry.bot, entry.session_id, why)
            holder.release(entry, after=claim)
            raise

    async def _already(self, context: grpc.aio.ServicerContext, peer: str, bot: str, session: str) -> NoReturn:
        why = (
            f"bot {bot!r} is connected already (session {session}) and still sending keepalives; "
            "a second session is refused until that one ends or goes quiet"
        )
        await self._refuse(context, peer, bot, grpc.StatusCode.ALREADY_EXISTS, why, retry_ms=5000)

    async def _refuse(
        self,
        context: grpc.aio.ServicerContext,
        peer: str,
        bot: str,
        code: grpc.StatusCode,
        why: str,
        retry_ms: int | None = None,
    ) -> NoReturn:
        await self.audit.record("login_refused", peer=peer, bot=bot, code=code.name, reason=why)
        if retry_ms is not None:
            context.set_trailing_metadata((("retry-after-ms", str(retry_ms)),))
        await context.abort(code, why)
        raise AssertionError("unreachable")  # context.abort raises

    async def refuse_busy(self, context: grpc.aio.ServicerContext, peer: str, why: str, wait: float) -> NoReturn:
        """Refuse a stream because a limit was reached (RESOURCE_EXHAUSTED, ``wait`` as the hint); a refused
        address is audited once a minute."""
        if not self._limited_audit.take(peer):
            await self.audit.record("rate_limited", peer=peer, reason=why)
        await abort_busy(context, why, wait)


def is_quiet(last_heard: float, keepalive_ms: int, now: float | None = None) -> bool:
    """Nothing heard from a session for a whole keepalive period (SDKs send one every half period)."""
    return ((time.monotonic() if now is None else now) - last_heard) * 1000 > keepalive_ms
