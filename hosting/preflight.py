"""A version's preflight: a few games against the reference bots before it may join a rated league.

The preflight is a small league of the arena itself (so it plays through the
same engine service, workers and ledger as rated play): the version and the
reference bots (:data:`REFERENCE`, built-in bots the hosts run), a round robin
of ``GAMES`` games a pairing on secret deals, marked with the version it checks
(``League.preflight``), which is the only league a version that is not ready may
join. The version passes if it plays every game to the end without an illegal
play, a timeout, a forfeit, or an answer its program failed to give (a crash,
garbage). :func:`judge` writes the report the bot's page shows.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from engine_service.rules import Rules
from scheduler.league import Feeder
from store.deal_policy import REFERENCE_BOTS
from store.league_status import LeagueStatus
from store.leagues import League, LeagueStore
from store.results import LeagueResults
from store.tokens import NAME_RE

REFERENCE = REFERENCE_BOTS
"""The reference bots' names in the arena -> the built-in bot each is (:data:`store.deal_policy.REFERENCE_BOTS`:
the arena runs them, a fresh bot each game, so a JSON-lines version's preflight may mirror its deals)."""
GAMES = 2
"""Games a pairing (seats swapped; on one deal when no bot may remember it, :mod:`store.deal_policy`)."""
EXPECTED = GAMES * len(REFERENCE)
"""Games the version plays in its preflight: a round robin with the reference bots."""
DEADLINE_S = 300.0
"""The most a preflight may take; a version that has not finished its games by then fails."""


def league_id(version: str) -> str:
    """The preflight league's name: ``preflight-<bot>-<n>`` (hashed if that would be too long).

    >>> league_id("perly@3")
    'preflight-perly-3'
    """
    name = "preflight-" + version.replace("@", "-")
    return name if NAME_RE.match(name) else "preflight-" + hashlib.sha256(version.encode()).hexdigest()[:16]


def create(store: LeagueStore, version: str, rules: Rules | None = None) -> League:
    """The version's preflight league, created if it does not exist yet (a host may restart midway)."""
    lid = league_id(version)
    if store.exists(lid):
        league = store.load(lid)
        missing = [bot for bot in [version, *REFERENCE] if bot not in league.bots]
        return store.add_bots(lid, missing) if missing and league.status == "created" else league
    league = League(
        lid,
        rules or Rules.preset(),
        format="round-robin",
        games=GAMES,
        absent_timeout=DEADLINE_S,
        quarantine_illegal=0,  # the preflight counts them itself; a quarantine would only hold its games
        quarantine_timeouts=0,
        quarantine_forfeits=0,
        preflight=version,
    )
    store.create(league)
    return store.add_bots(lid, [version, *REFERENCE])


def play(
    store: LeagueStore,
    version: str,
    enqueue: Callable[[str, str], None],
    should_stop: Callable[[], bool] = lambda: False,
    deadline_s: float = DEADLINE_S,
) -> LeagueStatus:
    """Feed the version's preflight league until its games are over, the deadline passes, or ``should_stop``."""
    lid = create(store, version).league_id
    ends = time.monotonic() + deadline_s
    return Feeder(store, lid, enqueue, window=4, should_stop=lambda: should_stop() or time.monotonic() > ends).run()


def judge(
    store: LeagueStore, version: str, status: LeagueStatus, program_faults: int, endings: int = 0
) -> tuple[bool, dict[str, Any]]:
    """Whether the version passed, and the report: its games and conduct, and why it failed if it did.

    ``program_faults``: faults kept on the version since the preflight started (a
    JSON-lines program's first failed answer of a game, a gRPC program's end, from
    any host that ran it); ``endings``: times its program ended on the judging host.
    """
    lid = league_id(version)
    rows = LeagueResults(store.r, store.prefix).standings_of(lid, [version, *REFERENCE])
    mine = rows.get(version)
    planned = sum(1 for seats in store.seats(lid).values() if version in seats)
    played = mine.games if mine else 0
    problems = []
    if planned < EXPECTED:
        problems.append(f"its preflight planned {planned} games of the {EXPECTED} it must play")
    if endings:
        problems.append(f"its program ended {endings} time(s) (the reasons and its last output are on its page)")
    if played < planned:
        problems.append(
            f"it finished {played} of its {planned} games"
            + (f" ({status.waiting_note()})" if status.waiting_note() else "")
        )
    if status.failed:
        problems.append(f"{status.failed} preflight match(es) failed (see `tablanette league status {lid}`)")
    for what, count in (
        ("illegal play(s)", mine.illegal if mine else 0),
        ("timeout(s)", mine.timeouts if mine else 0),
        ("forfeit(s)", mine.forfeits if mine else 0),
        ("fault(s) of its program (a crash, or an answer it failed to give; see its page)", program_faults),
    ):
        if count:
            problems.append(f"{count} {what}")
    report = {
        "league": lid,
        "planned": planned,
        "games": played,
        "opponents": list(REFERENCE),
        "bots": {bot: row.to_json() for bot, row in rows.items()},
        "program_faults": program_faults,
        "program_endings": endings,
        "passed": not problems,
        "problems": problems,
        "at": time.time(),
    }
    return not problems, report
