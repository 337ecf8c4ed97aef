"""``tablanette up``: the engine service and workers on this machine, in the foreground."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Annotated

import typer

from engine_service.config import redis_url
from scheduler.local import LocalArena

from .common import console, fail


def up(
    workers: Annotated[int, typer.Option(min=0, help="Celery worker processes.")] = 2,
    port: Annotated[int, typer.Option(help="Engine service port.")] = 50051,
    web_port: Annotated[int, typer.Option(help="Web ladder port (0: no web ladder).")] = 8080,
    workdir: Annotated[Path, typer.Option(help="Logs and private Redis data.")] = Path("var/up"),
) -> None:
    """Run the engine service and workers until Ctrl-C (then stop everything cleanly)."""
    arena = LocalArena(workdir)
    try:
        url = arena.ensure_redis(redis_url())
        prefix = os.environ.get("TABLANETTE_PREFIX", "tablanette")
        arena.env.update(TABLANETTE_REDIS_URL=url, TABLANETTE_PREFIX=prefix)
        engine_port = arena.start_engine(port)
        arena.start_workers(workers, f"{prefix}.matches")
        web = arena.start_web(web_port) if web_port else None
    except RuntimeError as exc:
        arena.stop()
        fail(str(exc))
    console.print(
        f"engine service on 127.0.0.1:{engine_port}; {workers} worker(s); redis {url}; prefix {prefix!r}",
        highlight=False,
    )
    if web:
        console.print(f"web ladder on http://127.0.0.1:{web}/", highlight=False)
    console.print(f"logs in {workdir / 'logs'}; Ctrl-C stops everything", highlight=False)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        while not stop["now"]:
            dead = arena.check()
            if dead:
                console.print(f"[red]stopped unexpectedly:[/] {', '.join(dead)} (see {workdir / 'logs'})")
                break
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    console.print("stopping ...")
    arena.stop()
