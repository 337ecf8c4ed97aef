"""``tablanette selfplay``: built-in bots play in-process, no services needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress
from rich.table import Table

from bots import BUILTIN_BOTS
from bots.registry import parse_spec
from engine_service.rules import GameRecord, dumps
from scheduler.selfplay import SelfPlayStats, run_selfplay

from .common import PlayersOpt, PresetOpt, RuleOpt, build_rules, console, fail


def selfplay(
    preset: PresetOpt = "tablic",
    players: PlayersOpt = 2,
    bots: Annotated[
        str, typer.Option(help="Comma-separated built-in bots (random, greedy, strong), e.g. greedy,greedy:eps=0.1.")
    ] = "greedy,random",
    games: Annotated[int, typer.Option(min=1, help="Number of matches.")] = 100,
    seed: Annotated[str, typer.Option(help="Seed for deals and bots (same seed, same games).")] = "selfplay",
    records: Annotated[Path | None, typer.Option(help="Write one record per game (JSON Lines).")] = None,
    rule: RuleOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Play matches between built-in bots and print a result table."""
    rules = build_rules(preset, players, rule)
    names = [b.strip() for b in bots.split(",") if b.strip()]
    if not names:
        fail(f"name at least one bot; built-in bots: {', '.join(BUILTIN_BOTS)}")
    for name in names:
        try:
            parse_spec(name)
        except ValueError as exc:
            fail(str(exc))
    out = records.open("w", encoding="utf-8") if records else None

    def write(record: GameRecord) -> None:
        assert out is not None
        out.write(dumps(record) + "\n")

    try:
        if as_json:
            stats = run_selfplay(rules, names, games, seed, on_record=write if out else None)
        else:
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task(f"{rules.preset_name}: {' vs '.join(names)}", total=games)
                stats = run_selfplay(
                    rules,
                    names,
                    games,
                    seed,
                    on_record=write if out else None,
                    on_game=lambda _: progress.advance(task),
                )
    finally:
        if out is not None:
            out.close()
    if as_json:
        print(json.dumps(stats.to_json()))
        return
    _print_table(stats, rules.preset_name, rules.players)
    if records:
        console.print(
            f"records written to {records} (check them: tablanette records verify {records})", highlight=False
        )


def _print_table(stats: SelfPlayStats, preset: str, players: int) -> None:
    table = Table(title=f"self-play: {stats.games} games, {preset}, {players} players")
    for col in ("bot", "games", "wins", "draws", "losses", "win %", "points/game", "tablas/game"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for b in sorted(stats.bots, key=lambda b: (-b.wins, -b.points_per_game)):
        table.add_row(
            b.name,
            str(b.games),
            str(b.wins),
            str(b.draws),
            str(b.losses),
            f"{100 * b.wins / b.games:.1f}" if b.games else "-",
            f"{b.points_per_game:.1f}",
            f"{b.tablas_per_game:.2f}",
        )
    console.print(table)
    console.print(
        f"{stats.deals} deals in {stats.seconds:.2f} s: {stats.deals_per_second:,.0f} deals/second",
        highlight=False,
    )
