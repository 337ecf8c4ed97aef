"""``tablanette rules``: the presets, and what a card can capture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from engine_service.rules import (
    PRESETS,
    Card,
    Rules,
    TablanetteError,
    card_names,
    mask_of,
    parameter_names,
    parse_cards,
)

from .capture_batch import capture_answer, run_batch
from .common import PlayersOpt, PresetOpt, RuleOpt, build_rules, console, fail

app = typer.Typer(help="Rule presets and capture questions.", no_args_is_help=True)


@app.command()
def presets(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Show the five presets and every parameter (for 2 players; per-count changes noted)."""
    resolved = {name: Rules.preset(name, players=spec.players[0]).to_dict() for name, spec in PRESETS.items()}
    if as_json:
        out = {
            name: {**params, "allowed_players": list(PRESETS[name].players), "source": PRESETS[name].source}
            for name, params in resolved.items()
        }
        print(json.dumps(out, indent=2))
        return
    table = Table(title="Tablanette rule presets", show_lines=False)
    table.add_column("parameter", style="bold", no_wrap=True)
    for name in PRESETS:
        table.add_column(name + (" (default)" if name == "tablic" else ""))
    table.add_row("players", *(_players(name) for name in PRESETS))
    for param in parameter_names():
        if param == "players":
            continue
        table.add_row(param, *(_fmt(resolved[name][param]) for name in PRESETS))
    console.print(table)
    for name, spec in PRESETS.items():
        console.print(f"[bold]{name}[/]: {spec.source}", highlight=False)


def _players(name: str) -> str:
    spec = PRESETS[name]
    text = " or ".join(str(p) for p in spec.players)
    extras = [
        f"{n}p: " + ", ".join(f"{k}={_fmt(v)}" for k, v in changes.items()) for n, changes in spec.per_players.items()
    ]
    return text + (f" ({'; '.join(extras)})" if extras else "")


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return _fmt_points(value) or "–"
    if isinstance(value, list):
        return "[" + ",".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _fmt_points(points: dict[str, int]) -> str:
    """``{"AC": 1, "AD": 1, "AH": 1, "AS": 1, "TD": 3}`` as ``each A 1, TD 3``."""
    parts: list[str] = []
    done: set[str] = set()
    for card, pts in points.items():
        if card in done:
            continue
        rank_cards = [card[0] + s for s in "CDHS"]
        if len(card) == 2 and all(points.get(c) == pts for c in rank_cards):
            parts.append(f"each {card[0]} {pts}")
            done.update(rank_cards)
        else:
            parts.append(f"{card} {pts}")
    return ", ".join(parts)


@app.command()
def captures(
    preset: PresetOpt = "tablic",
    table: Annotated[str | None, typer.Option(help='Table cards, e.g. "AH 3S 6D".')] = None,
    card: Annotated[str | None, typer.Option(help="The card played, e.g. 9C.")] = None,
    batch: Annotated[
        Path | None,
        typer.Option(help='JSON Lines in ({"table": [...], "card": "9C"} per line), JSON Lines out.'),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    players: PlayersOpt = 2,
    rule: RuleOpt = None,
) -> None:
    """Every legal capture set for a card on a table (or a whole batch of questions)."""
    rules = build_rules(preset, players, rule)
    if batch is not None:
        try:
            run_batch(rules, str(batch))
        except OSError as exc:
            fail(f"cannot read --batch {batch}: {exc.strerror or exc}")
        return
    if card is None:
        fail("give --card (and --table), or --batch FILE")
    try:
        answer = capture_answer(rules, table or "", card)
    except TablanetteError as exc:
        fail(str(exc))
    if as_json:
        print(
            json.dumps(
                {
                    "table": card_names(mask_of(parse_cards(table or ""))),
                    "card": str(Card.parse(card)),
                    **answer,
                }
            )
        )
        return
    caps = answer["captures"]
    console.print(
        f"{Card.parse(card)} on [{' '.join(card_names(mask_of(parse_cards(table or ''))))}] "
        f"under {rules.preset_name}: {len(caps)} capture set(s)",
        highlight=False,
    )
    for cap in caps:
        console.print("  " + " ".join(cap), highlight=False)
    console.print("  trail allowed" if answer["trail_allowed"] else "  trail not allowed", highlight=False)
