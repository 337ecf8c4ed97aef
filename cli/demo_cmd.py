"""``tablanette demo``: the README's main job, a whole league on this machine.

It starts what it needs (Redis from ``REDIS_URL`` if reachable, otherwise a
private server), the engine service, two Celery workers and the bots (the
built-in Python bots and, when Node.js is set up, the Node.js bot), plays a
double round-robin with live progress, prints the Elo ladder, exports and
re-verifies every record, and stops everything.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer

from cli.local import LocalArena, clear_prefix
from engine_service.rules import read_records, verify_record

from .common import arena_settings, console, fail

BOTS = (("strong", "strong"), ("greedy", "greedy"), ("random", "random"))


def demo(
    workdir: Annotated[Path, typer.Option(help="Logs, records and private Redis data.")] = Path("var/demo"),
    games: Annotated[int, typer.Option(min=1, help="Games per pairing.")] = 2,
    workers: Annotated[int, typer.Option(min=1, help="Celery worker processes.")] = 2,
    web_port: Annotated[int, typer.Option(help="Web ladder port (0 picks a free one).")] = 8080,
    keep_serving: Annotated[
        bool | None, typer.Option(help="Keep the web ladder up at the end until Ctrl-C (default: on a terminal).")
    ] = None,
) -> None:
    """Run a demo league end to end and print the ladder."""
    started = time.monotonic()
    arena = LocalArena(workdir, redis_url=arena_settings().redis_url, prefix="demo")
    try:
        url = arena.ensure_redis()
        clear_prefix(arena.redis, arena.prefix)
        arena.extra_env.update(
            TABLANETTE_GRACE_MS="5000",
            TABLANETTE_VISIBILITY_TIMEOUT="600",
            TABLANETTE_LEASE_MS="10000",
        )
        # this process feeds the league through the same settings
        os.environ.update({k: v for k, v in arena.child_env().items() if k.startswith("TABLANETTE_")})
        console.print(
            f"[bold]Tablanette Arena demo[/] (redis {url}, key prefix {arena.prefix!r}, logs in {arena.logs})",
            highlight=False,
        )
        _, port = arena.start_engine()
        address = f"127.0.0.1:{port}"
        arena.start_workers(workers)
        names = _start_bots(arena, address)
        arena.wait_connected(*names)
        _, web = arena.start_web(_port_or_free(web_port))
        console.print(f"engine service on {address}; {workers} workers; bots: {', '.join(names)}", highlight=False)
        console.print(f"watch it live: http://127.0.0.1:{web}/leagues/demo", highlight=False)
        _run_league(names, games, workdir)
        console.print(f"demo finished in {time.monotonic() - started:.0f} s", highlight=False)
        if console.is_terminal if keep_serving is None else keep_serving:
            console.print(
                f"The web ladder stays up at http://127.0.0.1:{web}/leagues/demo (Ctrl-C to stop).", highlight=False
            )
            _serve_until_interrupted(arena)
    except (RuntimeError, TimeoutError) as exc:
        fail(str(exc))
    finally:
        arena.stop()


def _port_or_free(port: int) -> int:
    """``port`` if it is free, else 0 (a free one), so a busy 8080 never stops the demo."""
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return 0
    return port


def _serve_until_interrupted(arena: LocalArena) -> None:
    try:
        while not arena.check():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass


def _start_bots(arena: LocalArena, address: str) -> list[str]:
    names = []
    for kind, name in BOTS:
        arena.start_python_bot(kind, name, arena.add_bot(name), address)
        names.append(name)
    if arena.start_node_bot("node-greedy", arena.add_bot("node-greedy"), address) is not None:
        names.append("node-greedy")
    else:
        console.print("(Node.js bot skipped: run `npm ci` in bots/node to include it)")
    return names


def _run_league(names: list[str], games: int, workdir: Path) -> None:
    from engine_service.rules import Rules, write_records
    from store.leagues import League

    from .league_cmd import print_ladder, results, run_feed, store

    st = store()
    st.create(League("demo", Rules.preset("tablic"), "double-round-robin", games, seed="demo"))
    st.add_bots("demo", names)
    status = run_feed("demo", window=0)
    console.print(f"{status.done} matches played" + (f", {status.failed} failed" if status.failed else ""))
    print_ladder("demo", results().ladder("demo"))
    out = workdir / "records.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        write_records(results().records("demo"), fh)
    verified = sum(1 for _, rec in read_records(out) if verify_record(rec).is_over)
    console.print(f"{verified} records exported to {out} and re-verified.", highlight=False)
    console.print(
        "Next: `tablanette records verify " + str(out) + "`, `tablanette rules presets`, "
        "and bots/node/README.md or bots/cpp/README.md to write your own bot.",
        highlight=False,
    )
