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

An account has at most ``TABLANETTE_HOSTED_VERSIONS_ACTIVE_PER_ACCOUNT`` hosted bots in service at once: a
hosted bot is in service while a version of it is a participant of a league not over (any league: those
are the versions hosts run), preflights aside. A newer version of a bot in service always joins (it takes
its older version's place); a ready version of a bot not yet in service joins while its account has room,
oldest submission first. One over the bound is never dropped in silence: its note (on its page, in
``remote bot status``) says it is held back and why, and it joins by itself once a place frees (the
operator takes a bot out, a league ends); its note is cleared as it joins.
"""

from __future__ import annotations

import json
import logging

import redis

from config import load_settings
from store.accounts import Accounts
from store.audit import AuditLog
from store.codec import text
from store.keys import Keys
from store.league_settings import League, LeagueError
from store.leagues import LeagueStore
from store.tokens import BotTokens
from store.versions import Version, Versions, split_version

log = logging.getLogger("tablanette.scheduler")

ADMIT_EVERY = 5.0
"""Seconds between two looks for newcomers (each reads every account-owned bot once)."""
NOT_OVER = ("created", "running", "waiting", "paused")
"""League statuses in which its hosted participants are in service (run by a host)."""
HELD = "ready, not playing: "
"""How a held-back version's note begins (:func:`admit` writes it, and clears it as the version joins)."""


def newcomers(client: redis.Redis, prefix: str, league: League, active: int | None = None) -> list[str]:
    """The accounts' bots (names, or hosted versions ``bot@n``) that should be in ``league`` and are not,
    within ``active`` hosted bots in service per account (None: no bound)."""
    return sort_out(client, prefix, league, active)[0]


def sort_out(client: redis.Redis, prefix: str, league: League, active: int | None) -> tuple[list[str], dict[str, str]]:
    """:func:`newcomers`, and the ready versions its account's bound holds back, each with why."""
    candidates = _candidates(client, prefix, league)
    serving = _in_service(client, prefix)
    joining, held = [], {}
    hosted = sorted((v for v in candidates.values() if v is not None), key=lambda v: (v.submitted, v.name))
    owners = {text(b): text(a) for b, a in client.hgetall(Keys(prefix).bot_account).items()}
    for v in hosted:
        account = owners.get(v.bot, "")
        mine = {b for b in serving if owners.get(b) == account}
        if active is None or v.bot in mine or len(mine) < active:
            serving.add(v.bot)
            continue
        held[v.name] = (
            f"{HELD}account {account} has {len(mine)} hosted bots in service ({', '.join(sorted(mine))}), the most "
            f"an account may have at once (TABLANETTE_HOSTED_VERSIONS_ACTIVE_PER_ACCOUNT={active}); it joins "
            "league " + league.league_id + " by itself once one of them leaves (the arena's operator can take one "
            "out), or submit it as a new version of one of them"
        )
    joining = [name for name in candidates if name not in held]
    return joining, held


def _in_service(client: redis.Redis, prefix: str) -> set[str]:
    """The hosted bots with a version in a league not over (preflight leagues aside)."""
    ids = sorted(text(m) for m in client.smembers(Keys(prefix).leagues))
    reads = client.pipeline(transaction=False)
    for lid in ids:
        reads.hmget(Keys(prefix).league(lid).meta, ["status", "preflight", "bots"])
    out: set[str] = set()
    for status, preflight, bots in reads.execute() if ids else []:
        if status is None or text(status) not in NOT_OVER or preflight or not bots:
            continue
        out.update(v[0] for b in json.loads(bots) if (v := split_version(b)))
    return out


def _candidates(client: redis.Redis, prefix: str, league: League) -> dict[str, Version | None]:
    """The accounts' bots that should be in ``league`` and are not: a name -> its hosted version (None for
    a connected bot), in the order of their names."""
    accounts = Accounts(client, prefix)
    owners = {text(b): text(a) for b, a in client.hgetall(accounts.keys.bot_account).items()}
    if not owners:
        return {}
    names = sorted(set(owners.values()))
    kept = client.mget([accounts.keys.account(n) for n in names])
    active = {n for n, raw in zip(names, kept, strict=True) if raw and json.loads(raw)["state"] == "active"}
    tokens, versions = BotTokens(client, prefix), Versions(client, prefix)
    out: dict[str, Version | None] = {}
    for bot in sorted(b for b, a in owners.items() if a in active):
        info = tokens.info(bot)
        newest: Version | None = None
        if info is not None:
            entry = None if info.revoked else bot
        else:
            ready = [v for v in versions.of(bot) if v.state == "ready"]
            newest = ready[-1] if ready else None
            entry = newest.name if newest else None
        if entry is not None and entry not in league.bots and entry not in league.retired:
            out[entry] = newest
    return out


def admit(store: LeagueStore, league: League, active: int | None = None) -> list[str]:
    """Bring ``league``'s newcomers in, one at a time (one refused, a version no longer ready say, leaves the
    others to join), within ``active`` hosted bots in service per account (None: the settings'
    ``TABLANETTE_HOSTED_VERSIONS_ACTIVE_PER_ACCOUNT``); the bots that joined. A version held back says why
    in its note."""
    joined = []
    audit = AuditLog(store.r, store.prefix)
    if active is None:
        active = load_settings().hosted_versions_active_per_account
    coming, held = sort_out(store.r, store.prefix, league, active)
    versions = Versions(store.r, store.prefix)
    for name, why in held.items():
        _note(versions, name, why)
    for bot in coming:
        if split_version(bot):
            _note(versions, bot, "")
        try:
            store.add_bots(league.league_id, [bot])
        except LeagueError as exc:
            log.warning("league %s: %s could not join: %s", league.league_id, bot, exc)
            continue
        audit.record("admitted", league=league.league_id, bot=bot)
        log.info("league %s: %s joined (its owner's account)", league.league_id, bot)
        joined.append(bot)
    return joined


def _note(versions: Versions, name: str, why: str) -> None:
    """Say why a ready version is held back (``why``), or clear that (an empty ``why``); written only when
    it changes, and never over a note of another kind."""
    v = versions.get(name)
    if v is None or v.state != "ready" or v.note == why or (v.note and not v.note.startswith(HELD)):
        return

    def change(v: Version) -> None:
        if v.state == "ready" and (not v.note or v.note.startswith(HELD)):
            v.note = why

    versions.update(name, change)
