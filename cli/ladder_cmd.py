"""``tablanette league ladder`` and ``tablanette league los``: the fitted ladder and how sure it is.

Every `league` command loads this module; the fit (NumPy, SciPy) is loaded by these two commands alone.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer
from rich.table import Table

from store.leagues import LeagueError

from .common import console, fail
from .league_cmd import results, store

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def ladder(name: str, as_json: JsonOpt = False) -> None:
    """The fitted ladder: each bot's rating with its 95% interval, games, record and point margin.

    A league created with --fit skill is ordered by skill (points a match, the
    cards' luck taken out, with its 95% interval) and shows each bot's mean luck.

    Bots in one bracket are not yet settled: the likelihood that one is stronger
    than the next is below the league's confidence (97.5% unless set). "form" is
    the incremental Elo, a trend that depends on the order results came in.
    """
    from scheduler.ladder import ladder as fitted_ladder

    try:
        data = fitted_ladder(results(), store().load(name))
    except LeagueError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(data))
        return
    print_ladder(data)


def print_ladder(data: dict[str, Any]) -> None:
    group_of = {bot: i for i, group in enumerate(data["groups"]) for bot in group}
    sizes = {i: len(g) for i, g in enumerate(data["groups"])}
    table = Table(title=f"ladder: {data['league']} ({data['results']} results)", caption=_caption(data))
    on_skill = data.get("fit") == "skill"
    columns = ("#", "", "bot", *(("skill", "luck") if on_skill else ()), "rating", "95% interval", "games", "W-D-L")
    columns += ("margin", "form", "conduct", "last played")
    for col in columns:
        table.add_column(col, justify="left" if col in ("bot", "") else "right")
    for r in data["rows"]:
        group = group_of[r["bot"]]
        bracket = "┃" if sizes[group] > 1 else ""
        last = time.strftime("%H:%M:%S", time.localtime(r["last_played"])) if r.get("last_played") else "-"
        margin = f"{r['margin']:+.1f}" + (
            f" [{r['margin_interval'][0]:+.0f}, {r['margin_interval'][1]:+.0f}]" if r["margin_interval"] else ""
        )
        conduct = r.get("timeouts", 0) + r.get("illegal", 0) + r.get("forfeits", 0)
        skill = r.get("skill_interval")
        table.add_row(
            str(r["rank"]),
            bracket,
            r["bot"] + (" (provisional)" if r.get("provisional") else ""),
            *(
                (f"{r['skill']:+.1f}" + (f" [{skill[0]:+.1f}, {skill[1]:+.1f}]" if skill else ""), f"{r['luck']:+.1f}")
                if on_skill
                else ()
            ),
            f"{r['rating']:.0f}",
            f"[{r['interval'][0]:.0f}, {r['interval'][1]:.0f}]" if r["interval"] else "no games yet",
            str(r["games"]),
            f"{r.get('wins', 0)}-{r.get('draws', 0)}-{r.get('losses', 0)}",
            margin,
            f"{r['form']:.0f}" if r.get("form") is not None else "-",
            str(conduct),
            last,
        )
    console.print(table)


COLUMNS_NOTE = (
    "margin: points a game over its opponents' (their mean), with its 95% interval; "
    "form: the incremental Elo, a trend that moves with the order the results came in (the rating is fitted "
    "on them all at once)"
)
"""What the ladder's less obvious columns mean, under the table."""


def _caption(data: dict[str, Any]) -> str:
    unsettled = [g for g in data["groups"] if len(g) > 1]
    if not data["rows"]:
        return "no results yet"
    if data.get("fit") == "skill":
        return _settled(data, unsettled) + (
            "\nordered by skill: points a match over an average bot, the cards' luck taken out"
            + (
                f" ({data['without_luck']} match(es) without luck count at their raw margin)"
                if data["without_luck"]
                else ""
            )
            + "\n"
            + COLUMNS_NOTE
        )
    return _settled(data, unsettled) + "\n" + COLUMNS_NOTE


def _settled(data: dict[str, Any], unsettled: list[list[str]]) -> str:
    if not unsettled:
        return f"every bot is above the next with likelihood of superiority >= {data['threshold']:.1%}"
    return (
        f"┃ not yet settled (LOS < {data['threshold']:.1%}): "
        + "; ".join(", ".join(g) for g in unsettled)
        + " — `tablanette league los` shows how sure"
    )


def los(name: str, as_json: JsonOpt = False) -> None:
    """The likelihood of superiority of every bot over every other (row over column)."""
    from scheduler.ladder import los_matrix

    try:
        data = los_matrix(results(), store().load(name))
    except LeagueError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(data))
        return
    bots = data["bots"]
    table = Table(title=f"likelihood of superiority: {name} (row is stronger than column)")
    table.add_column("")
    for b in bots:
        table.add_column(b, justify="right")
    for b, row in zip(bots, data["los"], strict=True):
        table.add_row(b, *("·" if a == b else f"{p:.1%}" for a, p in zip(bots, row, strict=True)))
    console.print(table)
