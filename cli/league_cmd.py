"""``tablanette league create | add-bot | start | status | cancel | ladder`` and ``records export``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from engine_service.rules import write_records
from scheduler.league import TASK_NAME, feed
from store.leagues import FORMATS, League, LeagueError, LeagueStatus, LeagueStore
from store.results import LadderRow, LeagueResults

from .common import PlayersOpt, PresetOpt, RuleOpt, build_rules, console, fail, redis_client

app = typer.Typer(help="Leagues: round-robin tournaments played by the workers, rated by Elo.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def store() -> LeagueStore:
    client, settings = redis_client()
    return LeagueStore(client, settings.prefix)


def results() -> LeagueResults:
    client, settings = redis_client()
    return LeagueResults(client, settings.prefix)


@app.command()
def create(
    name: str,
    preset: PresetOpt = "tablic",
    players: PlayersOpt = 2,
    rule: RuleOpt = None,
    format: Annotated[str, typer.Option(help=f"One of: {', '.join(FORMATS)}.")] = "round-robin",
    games: Annotated[int, typer.Option(min=1, help="Games per pairing (seats alternate).")] = 2,
    mirrored: Annotated[bool, typer.Option(help="Games of a pairing share deals with seats swapped.")] = True,
    champion: Annotated[str | None, typer.Option(help="The bot that runs the gauntlet.")] = None,
    k: Annotated[float, typer.Option(help="Elo K factor.")] = 24.0,
    initial: Annotated[float, typer.Option(help="Initial Elo rating.")] = 1500.0,
    seed: Annotated[str, typer.Option(help="Seed of every deal (default: the league name).")] = "",
) -> None:
    """Create a league (add bots next, then start it)."""
    rules = build_rules(preset, players, rule)
    try:
        store().create(League(name, rules, format, games, mirrored, champion, k, initial, seed))
    except LeagueError as exc:
        fail(str(exc))
    console.print(f"league [bold]{name}[/] created ({rules.preset_name}, {players} players, {format})")


@app.command("add-bot")
def add_bot(name: str, bots: Annotated[list[str], typer.Argument(help="Registered bot names.")]) -> None:
    """Add participants (before the league starts)."""
    try:
        league = store().add_bots(name, bots)
    except LeagueError as exc:
        fail(str(exc))
    console.print(f"league {name}: {len(league.bots)} bots ({', '.join(league.bots)})", highlight=False)


def progress_bar() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[extra]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def run_feed(league_id: str, window: int, quiet: bool = False) -> LeagueStatus:
    """Feed the league to the workers with a live progress bar until it ends."""
    from worker.celery_app import app as celery_app
    from worker.celery_app import settings as worker_settings

    st = store()

    def enqueue(league: str, match_id: str) -> None:
        celery_app.send_task(TASK_NAME, args=[league, match_id], queue=worker_settings.queue)

    if quiet:
        return feed(st, league_id, enqueue, window)
    if not console.is_terminal:  # a log, not a bar: one line every few seconds and at the end
        last = {"at": 0.0}

        def log_line(s: LeagueStatus) -> None:
            if time.monotonic() - last["at"] >= 5 or s.remaining == 0:
                last["at"] = time.monotonic()
                eta = f", eta {s.eta_seconds:.0f} s" if s.eta_seconds and s.remaining else ""
                console.print(
                    f"{league_id}: {s.done + s.failed}/{s.total} done, {s.running} running, "
                    f"{s.queued} queued, {s.failed} failed{eta}",
                    highlight=False,
                )

        return feed(st, league_id, enqueue, window, on_progress=log_line)
    with progress_bar() as bar:
        task = bar.add_task(league_id, total=None, extra="")

        def show(s: LeagueStatus) -> None:
            extra = f"running {s.running}, queued {s.queued}" + (f", [red]failed {s.failed}[/]" if s.failed else "")
            bar.update(task, total=s.total, completed=s.done + s.failed, extra=extra)

        return feed(st, league_id, enqueue, window, on_progress=show)


@app.command()
def start(
    name: str,
    window: Annotated[int, typer.Option(help="Matches kept in flight (0: enqueue all at once).")] = 8,
) -> None:
    """Start (or resume) a league and feed it to the workers until it finishes.

    Stopping this command loses nothing: run it again to resume.
    """
    try:
        status = run_feed(name, window)
    except LeagueError as exc:
        fail(str(exc))
    console.print(
        f"league {name}: {status.status}, {status.done} of {status.total} matches done"
        + (f", {status.failed} failed" if status.failed else ""),
        highlight=False,
    )


@app.command()
def status(name: str, as_json: JsonOpt = False) -> None:
    """Progress of a league."""
    try:
        s = store().status(name)
    except LeagueError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(s.to_json()))
        return
    eta = f", about {s.eta_seconds:.0f} s left" if s.eta_seconds and s.remaining else ""
    console.print(
        f"league {name}: {s.status}; {s.done}/{s.total} done, {s.running} running, {s.queued} queued, "
        f"{s.failed} failed{eta}",
        highlight=False,
    )


@app.command()
def cancel(name: str) -> None:
    """Cancel a league: queued matches are skipped, finished results stay."""
    try:
        store().cancel(name)
    except LeagueError as exc:
        fail(str(exc))
    console.print(f"league {name}: cancelled")


@app.command()
def ladder(name: str, as_json: JsonOpt = False) -> None:
    """The Elo ladder of a league."""
    try:
        rows = results().ladder(name)
    except LeagueError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps([r.to_json() for r in rows]))
        return
    print_ladder(name, rows)


def print_ladder(name: str, rows: list[LadderRow]) -> None:
    table = Table(title=f"ladder: {name}")
    for col in ("#", "bot", "rating", "games", "W", "D", "L", "points/game", "timeouts", "illegal", "last played"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for i, r in enumerate(rows, 1):
        last = time.strftime("%H:%M:%S", time.localtime(r.last_played)) if r.last_played else "-"
        table.add_row(
            str(i),
            r.bot,
            f"{r.rating:.0f}",
            str(r.games),
            str(r.wins),
            str(r.draws),
            str(r.losses),
            f"{r.points_per_game:.1f}",
            str(r.timeouts),
            str(r.illegal),
            last,
        )
    console.print(table)


def export(
    league: Annotated[str, typer.Option(help="The league whose records to export.")],
    out: Annotated[Path, typer.Option(help="Output file (JSON Lines).")],
) -> None:
    """Export a league's game records as JSON Lines (verify with `tablanette records verify`)."""
    try:
        records = results().records(league)
        with out.open("w", encoding="utf-8") as fh:
            n = write_records(records, fh)
    except LeagueError as exc:
        fail(str(exc))
    console.print(f"{n} record(s) written to {out}", highlight=False)
