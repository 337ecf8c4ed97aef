"""``tablanette up``: the engine service, workers and web ladder on this machine, in the foreground."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Annotated

import typer

from cli.local import LocalArena

from .common import arena_settings, console, fail


def up(
    workers: Annotated[int, typer.Option(min=0, help="Celery worker processes.")] = 2,
    port: Annotated[int, typer.Option(help="Engine service port.")] = 50051,
    web_port: Annotated[int, typer.Option(help="Web ladder port (0: no web ladder).")] = 8080,
    workdir: Annotated[Path, typer.Option(help="Logs and private Redis data.")] = Path("var/up"),
) -> None:
    """Run the engine service and workers until Ctrl-C (then stop everything cleanly)."""
    settings = arena_settings()
    arena = LocalArena(workdir, redis_url=settings.redis_url, prefix=settings.prefix)
    try:
        url = arena.ensure_redis()
        _, engine_port = arena.start_engine(TABLANETTE_PORT=str(port))
        arena.start_workers(workers)
        web = arena.start_web(web_port)[1] if web_port else None
    except RuntimeError as exc:
        arena.stop()
        fail(str(exc))
    console.print(
        f"engine service on 127.0.0.1:{engine_port}; {workers} worker(s); redis {url}; prefix {arena.prefix!r}",
        highlight=False,
    )
    if web:
        console.print(f"web ladder on http://127.0.0.1:{web}/", highlight=False)
    console.print(f"logs in {arena.logs}; Ctrl-C stops everything", highlight=False)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        while not stop["now"]:
            dead = arena.check()
            if dead:
                console.print(f"[red]stopped unexpectedly:[/] {', '.join(dead)} (see {arena.logs})")
                break
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    console.print("stopping ...")
    arena.stop()
