"""``tablanette demo``: the README's main job.

Today it plays the built-in bots against each other in-process (the strength
ladder random < greedy < strong) and writes every game record. The distributed
league (engine service, Celery workers, Elo ladder in Redis) replaces this body
once those parts exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import console
from .selfplay_cmd import selfplay


def demo(
    games: Annotated[int, typer.Option(min=3, help="Matches to play.")] = 60,
    out: Annotated[Path, typer.Option(help="Where the game records go.")] = Path("var/demo-records.jsonl"),
) -> None:
    """Play a short round of the built-in bots and show the results."""
    out.parent.mkdir(parents=True, exist_ok=True)
    console.print("[bold]Tablanette Arena demo[/]: strong, greedy and random bots, preset tablic, 2 players")
    selfplay(preset="tablic", players=2, bots="strong,greedy,random", games=games, seed="demo", records=out)
    console.print(
        "Next: [bold]tablanette rules presets[/], [bold]tablanette rules captures --help[/], "
        f"[bold]tablanette records verify {out}[/]",
        highlight=False,
    )
