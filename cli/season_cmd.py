"""``tablanette league season`` and ``tablanette league seasons``: a standing ladder's seasons."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer
from rich.table import Table

from store.audit import AuditLog
from store.leagues import LeagueError
from store.seasons import Seasons, check_standing

from .common import console, fail
from .league_cmd import results, store

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def season(
    name: str,
    label: Annotated[str, typer.Option(help="What to call this season (e.g. 'spring 2027').")] = "",
    new: Annotated[
        bool,
        typer.Option("--new", help="Then start a new season: the ladder is fitted afresh on the results from now on."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Keep a standing ladder as it stands now (a season: 1, 2, 3..., never changed afterwards), and with --new
    start a new one: its ratings start afresh from now, its older results stay stored."""
    from scheduler.seasons import take_season  # the fit: loaded by this command alone

    st = store()
    try:
        kept = take_season(st, results(), name, label, new)
    except LeagueError as exc:
        fail(str(exc))
    AuditLog(st.r, st.prefix).record(
        "season_taken", league=name, season=kept["season"], label=kept["label"], results=kept["results"], new=new
    )
    if as_json:
        print(json.dumps(kept))
        return
    for line in _said(name, kept):
        console.print(line, highlight=False)


def _said(name: str, kept: dict[str, Any]) -> list[str]:
    """What ``league season`` did, a line each."""
    label = f" ({kept['label']})" if kept["label"] else ""
    leader = f", {kept['leader']} first" if kept["leader"] else ""
    lines = [
        f"league {name}: season {kept['season']}{label} kept: the ladder of {kept['bots']} bots fitted on "
        f"{kept['results']} results{leader} (`tablanette league seasons {name} {kept['season']}` shows it)"
    ]
    if kept["new"]:
        lines += [
            f"league {name}: a new season starts after result {kept['to']}: the ladder is fitted on the results "
            "from then on, every rating afresh",
            f"league {name}: its {kept['to']} older results stay stored (matches, replays, records, bot pages)",
            f"league {name}: newcomers are placed again, and every bot's minimum share counts the new season's games",
            f"league {name}: a running `league start` takes the new season in as the next result lands, "
            "a restarted one too",
        ]
    return lines


def seasons(
    name: str,
    number: Annotated[int | None, typer.Argument(help="Show this season's ladder.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """A standing ladder's seasons, first first; with a number, the ladder that season kept."""
    st = store()
    kept = Seasons(st.r, st.prefix)
    try:
        check_standing(st.load(name))
        data: Any = kept.table(name, number) if number is not None else kept.summaries(name)
    except LeagueError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(data))
    elif number is not None:
        _print_table(name, data)
    else:
        _print_list(name, data)


def _print_list(name: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        console.print(f"league {name}: no season kept yet (`tablanette league season {name}` keeps one)")
        return
    table = Table(title=f"seasons: {name}")
    for col in ("#", "label", "taken", "results", "bots", "first", "then"):
        table.add_column(col, justify="right" if col in ("#", "results", "bots") else "left")
    for s in rows:
        then = "a new season" if s["new"] else "went on"
        counts = (str(s["results"]), str(s["bots"]))
        table.add_row(str(s["season"]), s["label"], _when(s["at"]), *counts, s["leader"] or "-", then)
    console.print(table)


def _print_table(name: str, s: dict[str, Any]) -> None:
    label = f" ({s['label']})" if s["label"] else ""
    title = f"season {s['season']}{label} of {name}: {s['results']} results, kept {_when(s['at'])}"
    table = Table(title=title)
    for col in ("#", "bot", "rating", "95% interval", "games", "W-D-L", "form"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for r in s["rows"]:
        interval = f"[{r['interval'][0]:.0f}, {r['interval'][1]:.0f}]" if r["interval"] else "no games"
        form = f"{r['form']:.0f}" if r["form"] is not None else "-"
        wdl = f"{r['wins']}-{r['draws']}-{r['losses']}"
        table.add_row(str(r["rank"]), r["bot"], f"{r['rating']:.0f}", interval, str(r["games"]), wdl, form)
    console.print(table)


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
