"""``tablanette demo``: the README's main job, a whole league on this machine.

It starts what it needs (Redis from ``REDIS_URL`` if reachable, otherwise a
private server), the engine service (on ``--port``, ``TABLANETTE_PORT``, or a
free port), two Celery workers and the bots (the built-in Python bots and,
when Node.js is set up, the Node.js bot), plays a double round-robin with live
progress, prints the Elo ladder, exports and re-verifies every record, and
stops everything.

The demo's league is the arena's own: league ``demo`` under the arena's key
prefix (``TABLANETTE_PREFIX``), so ``tablanette up``, ``web`` and ``league``
see it afterwards. A new demo replaces the previous demo league and re-issues
the tokens of its own bots (``demo-*``); nothing else of the arena is touched.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Annotated

import typer

from cli.local import LocalArena, Stopped
from engine_service.rules import read_records, verify_record
from store.leagues import League, LeagueStore
from store.tokens import BotTokens

from .common import arena_settings, console, fail

BOTS = (("strong", "demo-strong"), ("greedy", "demo-greedy"), ("random", "demo-random"))
NODE_BOT = "demo-node"
LEAGUE = "demo"


def demo(
    workdir: Annotated[Path, typer.Option(help="Logs, records and private Redis data.")] = Path("var/demo"),
    games: Annotated[int, typer.Option(min=1, help="Games per pairing.")] = 2,
    workers: Annotated[int, typer.Option(min=1, help="Celery worker processes.")] = 2,
    port: Annotated[int, typer.Option(envvar="TABLANETTE_PORT", help="Engine service port (0 picks a free one).")] = 0,
    web_port: Annotated[int, typer.Option(help="Web ladder port (0 picks a free one).")] = 8080,
    keep_serving: Annotated[
        bool | None, typer.Option(help="Keep the web ladder up at the end until Ctrl-C (default: on a terminal).")
    ] = None,
) -> None:
    """Run a demo league end to end and print the ladder."""
    started = time.monotonic()
    settings = arena_settings()
    arena = LocalArena(workdir, redis_url=settings.redis_url, prefix=settings.prefix)
    try:
        with arena.supervised():
            _demo(arena, games, workers, (port, web_port), keep_serving, started)
    except (RuntimeError, TimeoutError) as exc:
        fail(str(exc))
    except (KeyboardInterrupt, Stopped):
        with contextlib.suppress(BrokenPipeError):
            console.print("demo stopped")
        raise typer.Exit(130) from None


def _demo(
    arena: LocalArena, games: int, workers: int, ports: tuple[int, int], keep_serving: bool | None, started: float
) -> None:
    engine_port, web_port = ports
    url = arena.ensure_redis()
    LeagueStore(arena.redis, arena.prefix).delete(LEAGUE)  # the previous demo, and nothing else
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
    _, port = arena.start_engine(TABLANETTE_PORT=str(engine_port))
    address = f"127.0.0.1:{port}"
    arena.start_workers(workers)
    names = _start_bots(arena, address)
    arena.wait_connected(*names)
    _, web = arena.start_web(_port_or_free(web_port))
    console.print(f"engine service on {address}; {workers} workers; bots: {', '.join(names)}", highlight=False)
    console.print(f"watch it live: http://127.0.0.1:{web}/leagues/{LEAGUE}", highlight=False)
    _run_league(names, games, arena.workdir)
    console.print(f"demo finished in {time.monotonic() - started:.0f} s", highlight=False)
    if console.is_terminal if keep_serving is None else keep_serving:
        console.print(
            f"The web ladder stays up at http://127.0.0.1:{web}/leagues/{LEAGUE} (Ctrl-C to stop).", highlight=False
        )
        _serve_until_interrupted(arena)


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
    with contextlib.suppress(KeyboardInterrupt):  # the normal end of a finished demo
        while not arena.check():
            time.sleep(0.5)


def _token(arena: LocalArena, name: str) -> str:
    """A fresh token for one of the demo's own bots (revoking the previous demo's)."""
    tokens = BotTokens(arena.redis, arena.prefix)
    info = tokens.info(name)
    if info is not None and not info.revoked:
        tokens.revoke(name)
    return tokens.add(name)


def _start_bots(arena: LocalArena, address: str) -> list[str]:
    names = []
    for kind, name in BOTS:
        arena.start_python_bot(kind, name, _token(arena, name), address)
        names.append(name)
    if arena.start_node_bot(NODE_BOT, _token(arena, NODE_BOT), address) is not None:
        names.append(NODE_BOT)
    else:
        console.print("(Node.js bot skipped: run `npm ci` in bots/node to include it)")
    return names


def _run_league(names: list[str], games: int, workdir: Path) -> None:
    from engine_service.rules import Rules, write_records
    from scheduler.ladder import ladder

    from .ladder_cmd import print_ladder
    from .league_cmd import results, run_feed, store

    st = store()
    st.create(League(LEAGUE, Rules.preset("tablic"), "double-round-robin", games))
    st.add_bots(LEAGUE, names)
    status = run_feed(LEAGUE, window=0)
    console.print(f"{status.done} matches played" + (f", {status.failed} failed" if status.failed else ""))
    print_ladder(ladder(results(), st.load(LEAGUE)))
    out = workdir / "records.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        write_records(results().records(LEAGUE), fh)
    verified = sum(1 for _, rec in read_records(out) if verify_record(rec).is_over)
    console.print(f"{verified} records exported to {out} and re-verified.", highlight=False)
    console.print(
        "Next: write your own bot in any language from docs/jsonlines.md (a line of JSON a turn), and play it "
        'here in one command, with no arena: `tablanette match --bot "python3 mybot.py" --bot strong`. '
        f"(`tablanette records verify {out}` re-checks the demo's games; bots/README.md has the gRPC SDKs.)",
        highlight=False,
    )
