"""An open standing ladder takes accounts' bots in by itself: a connected bot with a live token, a hosted
bot's newest ready version (retiring the older), never a suspended account's, never one the operator took out."""

from __future__ import annotations

import pytest
from arena_harness import ROOT, scratch_redis

from engine_service.rules import Rules
from hosting.manifest import Manifest
from hosting.source import pack
from scheduler.admission import admit, newcomers
from store.accounts import Accounts
from store.league_settings import League, LeagueError
from store.leagues import LeagueStore
from store.tokens import BotTokens
from store.versions import Versions


def test_accounts_bots_join_an_open_standing_ladder_and_the_operators_word_stands() -> None:
    with scratch_redis("admission") as (r, prefix):
        accounts, store, versions = Accounts(r, prefix), LeagueStore(r, prefix), Versions(r, prefix)
        accounts.set_policy("open")
        for name in ("ann", "bob"):
            accounts.sign_up(name, "a long enough secret")
        store.create(League("open", Rules.preset("tablic"), format="standing", admit="accounts"))
        assert accounts.claim_bot("ann", "anny") and accounts.claim_bot("bob", "hosty")
        BotTokens(r, prefix).add("anny")
        folder = ROOT / "bots/jsonlines"
        archive, digest = pack(folder)
        data = Manifest.load(folder).to_dict()
        versions.submit("hosty", data, archive, digest)
        assert newcomers(r, prefix, store.load("open")) == ["anny"]  # hosty@1 has not passed its preflight
        versions.set_state("hosty@1", "ready")
        assert admit(store, store.load("open")) == ["anny", "hosty@1"]
        versions.submit("hosty", data, archive, digest)
        versions.set_state("hosty@2", "ready")
        assert admit(store, store.load("open")) == ["hosty@2"]
        league = store.load("open")
        assert league.bots == ["anny", "hosty@2"] and league.retired == ["hosty@1"]  # the older one retired
        store.remove_bots("open", ["anny"])  # the operator's word stands
        accounts.suspend("bob")
        versions.submit("hosty", data, archive, digest)
        versions.set_state("hosty@3", "ready")
        assert newcomers(r, prefix, store.load("open")) == []


def test_only_a_standing_ladder_admits_accounts_bots() -> None:
    with pytest.raises(LeagueError, match="only a standing ladder admits"):
        from store.league_settings import check

        check(League("rr", Rules.preset("tablic"), admit="accounts"))
