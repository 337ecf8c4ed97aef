"""What a league's operator and spectators are told of its deals: secret or public, mirrored or not, and the
second-sight check (:mod:`scheduler.second_sight`).

``league status``, the league's API and its page all show :func:`deals_report`.
"""

from __future__ import annotations

from typing import Any

from scheduler.outcomes import Outcome
from scheduler.second_sight import second_sight
from store import deal_policy
from store.leagues import League, LeagueStore
from store.results import LeagueResults

PUBLIC_SEED = "its deals follow from the public seed it was created with (--seed): anyone can compute every hand"
PUBLIC_OLD = (
    "it was created before deals were secret and deals from its name: anyone can compute every hand "
    "(create a new league for secret deals)"
)


def deals_report(store: LeagueStore, results: LeagueResults, league: League) -> dict[str, Any]:
    """How the league deals (``dealt``: mirrored or independent; before it starts, how it would), whether its
    deals are ``secret`` (and if not, ``public`` says why), the bots that may remember a deal between games
    (``may_remember``; not looked up for a league that deals independently), the operator's ``warning`` if any,
    and each bot's ``second_sight`` advantage where deals are shared."""
    seeds = store.deal_seeds(league)
    # who may remember matters while the league is to decide, and where it mirrors (a page a league: cheap then)
    remembering = store.who_may_remember(league) if league.dealt != "independent" else {}
    dealt = league.dealt or deal_policy.decide(league.deals, remembering)
    public = "" if not seeds.is_public else PUBLIC_SEED if league.seed else PUBLIC_OLD
    report: dict[str, Any] = {
        "setting": league.deals,
        "dealt": dealt,
        "decided": bool(league.dealt),
        "secret": not seeds.is_public,
        "public": public,
        "may_remember": remembering,
        "warning": deal_policy.warning(dealt, remembering),
        "second_sight": [],
    }
    if dealt == "mirrored":
        outcomes = [Outcome.from_json(o) for o in results.outcomes(league.league_id)]
        report["second_sight"] = [s.to_json() for s in second_sight(outcomes)]
    return report


def report_lines(report: dict[str, Any]) -> list[str]:
    """The report as ``league status`` prints it."""
    decided = "" if report["decided"] else " (decided when the league starts)"
    lines = [f"deals: {report['dealt']}{decided}, {'secret' if report['secret'] else 'PUBLIC'}"]
    if report["public"]:
        lines.append(f"  public: {report['public']}")
    if report["warning"]:
        lines.append(f"  warning: {report['warning']}")
    for s in report["second_sight"]:
        interval = s["interval"]
        shown = f"[{interval[0]:+.1f}, {interval[1]:+.1f}]" if interval else "(too few deals for an interval)"
        flag = "  FLAGGED: better on a deal it has seen before" if s["flagged"] else ""
        lines.append(
            f"  second sight: {s['bot']} {s['advantage']:+.1f} points a deal {shown} over {s['deals']} deal(s){flag}"
        )
    return lines
