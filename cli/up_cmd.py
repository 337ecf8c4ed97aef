"""``tablanette up``: the engine service, workers and web ladder on this machine, in the foreground.

It runs until Ctrl-C, SIGTERM or SIGHUP, until a child dies, or until nobody
reads its output any more (``tablanette up | head``), and always stops every
child it started.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from cli.local import LocalArena, Stopped, output_closed

from .common import arena_settings, console, fail


def up(
    workers: Annotated[int, typer.Option(min=0, help="Celery worker processes.")] = 2,
    port: Annotated[
        int, typer.Option(envvar="TABLANETTE_PORT", help="Engine service port (0 picks a free one).")
    ] = 50051,
    web_port: Annotated[int, typer.Option(help="Web ladder port (0: no web ladder).")] = 8080,
    workdir: Annotated[Path, typer.Option(help="Logs and private Redis data.")] = Path("var/up"),
    host: Annotated[
        bool, typer.Option(help="Also host submitted bots (`tablanette host`), where sandboxes can be made.")
    ] = True,
) -> None:
    """Run the engine service, workers, web ladder and bot host until Ctrl-C (then stop everything cleanly)."""
    from programs.sandbox import unavailable

    settings = arena_settings()
    arena = LocalArena(workdir, redis_url=settings.redis_url, prefix=settings.prefix)
    try:
        with arena.supervised():
            try:
                url = arena.ensure_redis()
                _, engine_port = arena.start_engine(TABLANETTE_PORT=str(port))
                arena.start_workers(workers)
                web = arena.start_web(web_port)[1] if web_port else None
                no_host = unavailable() if host else "--no-host"
                if not no_host:
                    arena.start_host(engine_port)
            except RuntimeError as exc:
                fail(str(exc))
            console.print(
                f"engine service on 127.0.0.1:{engine_port}; {workers} worker(s); redis {url}; prefix {arena.prefix!r}",
                highlight=False,
            )
            if web:
                console.print(f"web ladder on http://127.0.0.1:{web}/", highlight=False)
            if no_host:
                console.print(f"hosted bots: not hosted here ({no_host})", highlight=False)
            else:
                console.print("hosted bots: built and run here (`tablanette bot submit DIR --name NAME`)")
            console.print(f"logs in {arena.logs}; Ctrl-C stops everything", highlight=False)
            _watch(arena)
            console.print("stopping ...")
    except (KeyboardInterrupt, Stopped):
        _say("stopping ...")
    except BrokenPipeError:
        _silence_stdout()


def _watch(arena: LocalArena) -> None:
    """Until a child dies or nobody reads our output any more."""
    while True:
        dead = arena.check()
        if dead:
            console.print(f"[red]stopped unexpectedly:[/] {', '.join(dead)} (see {arena.logs})")
            return
        if output_closed():
            _silence_stdout()
            return
        time.sleep(0.5)


def _say(text: str) -> None:
    with contextlib.suppress(BrokenPipeError):
        console.print(text)


def _silence_stdout() -> None:
    """Nobody reads our output: send what is left to /dev/null (no BrokenPipeError at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
