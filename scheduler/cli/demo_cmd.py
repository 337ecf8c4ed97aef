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

import redis
import typer

from engine_service.config import redis_url
from engine_service.rules import read_records, verify_record
from engine_service.sessions import session_key
from scheduler.local import LocalArena, clear_prefix

from .common import console, fail

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
    arena = LocalArena(workdir)
    try:
        url = arena.ensure_redis(redis_url())
        prefix = "demo"
        with redis.Redis.from_url(url) as client:
            clear_prefix(client, prefix)
        env = dict(
            TABLANETTE_REDIS_URL=url,
            TABLANETTE_PREFIX=prefix,
            TABLANETTE_GRACE_MS="5000",
            TABLANETTE_VISIBILITY_TIMEOUT="600",
            TABLANETTE_LEASE_MS="10000",
        )
        arena.env.update(env)
        os.environ.update(env)  # this process feeds the league through the same settings
        console.print(
            f"[bold]Tablanette Arena demo[/] (redis {url}, key prefix {prefix!r}, logs in {workdir / 'logs'})",
            highlight=False,
        )
        port = arena.start_engine()
        address = f"127.0.0.1:{port}"
        arena.start_workers(workers, f"{prefix}.matches")
        names = _start_bots(arena, url, prefix, address)
        _wait_connected(url, prefix, names, arena)
        web = arena.start_web(_port_or_free(web_port))
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


def _start_bots(arena: LocalArena, url: str, prefix: str, address: str) -> list[str]:
    from engine_service.tokens import BotTokens

    tokens = BotTokens(redis.Redis.from_url(url), prefix)
    names = []
    for kind, name in BOTS:
        arena.start_python_bot(kind, name, tokens.add(name), address)
        names.append(name)
    if arena.start_node_bot("node-greedy", tokens.add("node-greedy"), address) is not None:
        names.append("node-greedy")
    else:
        console.print("(Node.js bot skipped: run `npm ci` in bots/node to include it)")
    return names


def _wait_connected(url: str, prefix: str, names: list[str], arena: LocalArena) -> None:
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all(client.exists(session_key(prefix, n)) for n in names):
            return
        if arena.check():
            break
        time.sleep(0.1)
    missing = [n for n in names if not client.exists(session_key(prefix, n))]
    raise RuntimeError(f"bots did not connect: {', '.join(missing)} (dead: {', '.join(arena.check()) or 'none'})")


def _run_league(names: list[str], games: int, workdir: Path) -> None:
    from engine_service.rules import Rules, dumps
    from scheduler.league import League

    from .league_cmd import print_ladder, run_feed, store

    st = store()
    st.create(League("demo", Rules.preset("tablic"), "double-round-robin", games, seed="demo"))
    st.add_bots("demo", names)
    status = run_feed("demo", window=0)
    console.print(f"{status.done} matches played" + (f", {status.failed} failed" if status.failed else ""))
    print_ladder("demo", st.ladder("demo"))
    out = workdir / "records.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        for record in st.records("demo"):
            fh.write(dumps(record) + "\n")
    verified = sum(1 for _, rec in read_records(out) if verify_record(rec).is_over)
    console.print(f"{verified} records exported to {out} and re-verified.", highlight=False)
    console.print(
        "Next: `tablanette records verify " + str(out) + "`, `tablanette rules presets`, "
        "and bots/node/README.md or bots/cpp/README.md to write your own bot.",
        highlight=False,
    )
