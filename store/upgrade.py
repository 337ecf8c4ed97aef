"""Leagues written by an older arena, brought up to date where a process first touches them.

There is no upgrade step to run by hand: whichever process reads or writes a
league first (the scheduler planning it, a worker committing a match, the web or
the CLI reading it) upgrades it, atomically, and a league already up to date is
left alone, so any number of processes may do it at once.

What has changed so far:

- **The form's key.** A league's incremental Elo (its *form*: bot -> rating,
  updated as each match finishes) was the sorted set ``...:ladder`` until
  December 2026, while "the ladder" everywhere else means the ratings fitted from
  every outcome. It is ``...:form`` now (:attr:`store.keys.LeagueKeys.form`). The
  old key is renamed when it exists and the new one does not: a league that a
  new process has already written to is never overwritten by an old key, and
  renaming twice does nothing.

  An arena must not run old and new processes on the same leagues at once (an
  old worker would write the form under its old name again).
"""

from __future__ import annotations

import weakref

import redis

from .keys import LeagueKeys

FORM_LUA = """
local function upgrade_form(legacy, form)
  if redis.call('EXISTS', form) == 0 and redis.call('EXISTS', legacy) == 1 then
    redis.call('RENAME', legacy, form)
  end
end
"""
"""The form's rename as a Lua function, for every script that touches the form (the ledger's commit)."""

_UPGRADE = FORM_LUA + "upgrade_form(KEYS[1], KEYS[2]) return 1"


_DONE: weakref.WeakKeyDictionary[redis.Redis, set[str]] = weakref.WeakKeyDictionary()
"""Per Redis client, the leagues upgraded (or found up to date) through it."""


class LeagueUpgrades:
    """Upgrades each league once per Redis client (then it remembers: only an old process could undo it).

    What is remembered belongs to the client, not to this object: the scheduler, the worker and the
    preflight make a reader per use, and each would otherwise ask Redis again."""

    def __init__(self, client: redis.Redis) -> None:
        self._script = client.register_script(_UPGRADE)
        self._done = _DONE.setdefault(client, set())

    def upgrade(self, keys: LeagueKeys) -> None:
        if keys.base in self._done:
            return
        self._script(keys=[keys.legacy_form, keys.form])
        self._done.add(keys.base)
