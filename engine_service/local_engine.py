"""An engine service inside one process, with no Redis: where gRPC bots connect for ``tablanette match``.

It is the arena's own gateway (:mod:`engine_service.gateway`: the Hello and its
checks, the limits, the clocks and the latency credit, keepalives, the grace
period of a bot that drops) and the Rules API (an SDK's look-ahead helpers ask
it), on a free loopback port. What the arena keeps in Redis is kept here: the
bots' sessions in memory (:class:`store.sessions.LocalSessions`), the tokens
this engine issued for the programs the command starts (nothing else can log
in), and the audit of logins in the log (:class:`store.audit.LogAudit`).

A match asks a seat's bot through :meth:`LocalEngine.ask`, as a replica asks the
bots of a match it plays itself (:mod:`engine_service.local_match`), and tells
each bot the game is over with :meth:`LocalEngine.game_over`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import Sequence

import grpc

from config import ArenaSettings, load_settings
from engine_service.admission import Admission
from engine_service.gateway import Gateway
from engine_service.local_match import announce
from engine_service.rules import Match
from engine_service.rules_api import RulesServicer
from engine_service.server import BotGatewayServicer, server_options
from engine_service.time_control import TimeControl
from store.audit import LogAudit
from store.sessions import LocalSessions, SessionEntry
from tablanette.v1 import arena_pb2 as apb
from tablanette.v1 import arena_pb2_grpc, rules_pb2_grpc
from tablanette.v1 import dispatch_pb2 as dpb

log = logging.getLogger("tablanette.local_engine")

TOKEN_PREFIX = "tbl_local_"
"""Tokens this engine issues (they are good for this engine, in this process, only)."""


class LocalEngine:
    """The engine of one ``tablanette match``: :meth:`start` it, issue a token per program, :meth:`stop` it."""

    def __init__(self, settings: ArenaSettings | None = None) -> None:
        base = settings if settings is not None else load_settings()
        self.settings = base.model_copy(update={"host": "127.0.0.1", "port": 0, "advertise": "local"})
        self.sessions = LocalSessions()
        self._tokens: dict[str, str] = {}
        """sha256 of each token issued -> the bot it is for."""
        admission = Admission(self.settings, self.sessions, self._lookup_token, LogAudit(), self._elsewhere)
        self.gateway = Gateway(self.settings, self.sessions, admission, self._tokens_exist)
        self.server = grpc.aio.server(options=server_options(self.settings))
        self.rules: RulesServicer | None = None
        self._upkeep: asyncio.Task[None] | None = None
        self.address = ""

    def issue(self, bot: str) -> str:
        """A new token for ``bot`` (its program logs in with it)."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(24)
        self._tokens[_digest(token)] = bot
        return token

    def revoke(self, bot: str) -> None:
        """Every token issued for ``bot`` stops working, and its session here ends."""
        self._tokens = {d: name for d, name in self._tokens.items() if name != bot}
        self.gateway.upkeep.revoked(bot, "the command that started it")

    async def _lookup_token(self, token: str) -> str | None:
        return self._tokens.get(_digest(token))

    async def _tokens_exist(self, digests: list[str]) -> list[bool]:
        return [d in self._tokens for d in digests]

    async def _elsewhere(self, entry: SessionEntry) -> bool:
        return False  # one engine: a session that is not live here is live nowhere

    async def start(self) -> str:
        """Listen on a free loopback port; the address its bots dial (``127.0.0.1:PORT``)."""
        arena_pb2_grpc.add_BotGatewayServicer_to_server(BotGatewayServicer(self.gateway), self.server)
        self.rules = RulesServicer(self.settings, self.gateway.relayed.key)
        rules_pb2_grpc.add_RulesServiceServicer_to_server(self.rules, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        if port == 0:
            raise OSError("the local engine cannot listen on a loopback port")
        self.address = f"127.0.0.1:{port}"
        self.settings = self.settings.model_copy(update={"port": port, "advertise": self.address})
        self.gateway.settings = self.gateway.admission.settings = self.gateway.upkeep.settings = self.settings
        await self.server.start()
        self._upkeep = asyncio.create_task(self.gateway.upkeep.run())  # keepalives, stalled streams
        return self.address

    async def stop(self) -> None:
        self.gateway.drain()
        await self.server.stop(1.0)
        if self._upkeep is not None:
            self._upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._upkeep
        await self.gateway.released(1.0)
        if self.rules is not None:
            self.rules.close()

    def connected(self, bot: str) -> SessionEntry | None:
        """The bot's session, if it is connected now."""
        conn = self.gateway.connections.get(bot)
        return conn.entry if conn is not None and not conn.closed.is_set() else None

    async def ask(self, bot: str, game: apb.GameStarted, turn: apb.Turn, control: TimeControl) -> dpb.PlayResponse:
        """The bot's answer to ``turn`` (``game`` names its seat; sent before its first turn of the game), with
        the engine's grace period if it is not connected (then DISCONNECTED)."""
        return await self.gateway.ask(bot, game, turn, 0, control)

    async def game_over(self, match: Match, game_id: str, seats: Sequence[tuple[int, str]]) -> None:
        """Tell each ``(seat, bot)`` the game is over, as a replica tells the bots of a match it played."""
        await announce(self.gateway, match, game_id, seats)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
