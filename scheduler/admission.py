"""An open standing ladder: accounts' bots join it by themselves (``league create --format standing --admit
accounts``), so a stranger goes from sign-up to rated games with no operator command.

Who joins (:func:`newcomers`), among the bots accounts own (:mod:`store.accounts`), whose account is active:

- a connected bot, once it has a live token (its owner created it; it is paired once it connects, and
  skipped without penalty while it is away);
- a hosted bot's newest version that passed its preflight (state ``ready``): a newer one retires the older
  one from pairing (:mod:`store.membership`), its games staying on the ladder.

A bot the operator took out (``league remove-bot``) or that a newer version retired is in the league's
``retired`` list, and is not brought back: the operator's word stands. Each joining bot is in the audit log
(``admitted``).
"""

from __future__ import annotations

import json
import logging

import redis

from store.accounts import Accounts
from store.audit import AuditLog
from store.codec import text
from store.league_settings import League, LeagueError
from store.leagues import LeagueStore
from store.tokens import BotTokens
from store.versions import Versions

log = logging.getLogger("tablanette.scheduler")

ADMIT_EVERY = 5.0
"""Seconds between two looks for newcomers (each reads every account-owned bot once)."""


def newcomers(client: redis.Redis, prefix: str, league: League) -> list[str]:
    """The accounts' bots (names, or hosted versions ``bot@n``) that should be in ``league`` and are not."""
    accounts = Accounts(client, prefix)
    owners = {text(b): text(a) for b, a in client.hgetall(accounts.keys.bot_account).items()}
    if not owners:
        return []
    names = sorted(set(owners.values()))
    kept = client.mget([accounts.keys.account(n) for n in names])
    active = {n for n, raw in zip(names, kept, strict=True) if raw and json.loads(raw)["state"] == "active"}
    tokens, versions = BotTokens(client, prefix), Versions(client, prefix)
    out = []
    for bot in sorted(b for b, a in owners.items() if a in active):
        info = tokens.info(bot)
        if info is not None:
            entry = None if info.revoked else bot
        else:
            ready = [v for v in versions.of(bot) if v.state == "ready"]
            entry = ready[-1].name if ready else None
        if entry is not None and entry not in league.bots and entry not in league.retired:
            out.append(entry)
    return out


def admit(store: LeagueStore, league: League) -> list[str]:
    """Bring ``league``'s newcomers in, one at a time (one refused, a version no longer ready say, leaves the
    others to join); the bots that joined."""
    joined = []
    audit = AuditLog(store.r, store.prefix)
    for bot in newcomers(store.r, store.prefix, league):
        try:
            store.add_bots(league.league_id, [bot])
        except LeagueError as exc:
            log.warning("league %s: %s could not join: %s", league.league_id, bot, exc)
            continue
        audit.record("admitted", league=league.league_id, bot=bot)
        log.info("league %s: %s joined (its owner's account)", league.league_id, bot)
        joined.append(bot)
    return joined
