"""``tablanette match``: games between any bots on this machine, as the arena plays them, in one command.

Each ``--bot`` is one of:

- a built-in bot's spec: ``strong``, ``greedy:eps=0.05`` (``tablanette rules`` has none of these: see
  :mod:`bots.registry`);
- an author's Python bot class (the SDK's :class:`bots.Bot`): ``mybot.py`` (the one ``Bot`` class it
  defines) or ``mybot.py:MyBot``;
- a bot's folder with a ``bot.toml``: built and run in sandboxes as the arena hosts it
  (:mod:`hosting.local`; JSON-lines bots);
- ``grpc:COMMAND``: a program written with a gRPC SDK (or a client made from the ``.proto``), started
  once and connected to an engine inside this command (:mod:`scheduler.connected_programs`: it gets
  ``TABLANETTE_ADDRESS``, ``TABLANETTE_TOKEN`` and ``TABLANETTE_BOT_NAME``): ``"grpc:node bots/node/bot.js"``;
- anything else is a command speaking JSON lines (docs/jsonlines.md): ``"java -cp out Bot"``,
  ``"ruby bot.rb"``, ``./mybot``; run as it is, from this folder, one run a game.

``NAME=BOT`` names it in the results and records (``--bot mine="perl greedy.pl"``).
Every game is played by the arena's match driver (:mod:`scheduler.local_games`), with no Redis
or Celery (and an engine service of its own only for gRPC programs).
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from bots import BUILTIN_BOTS, Bot, make_bot
from bots.registry import parse_spec
from engine_service.rules import Rules, dumps
from engine_service.time_control import TimeControl
from programs.bridge import ProgramBot
from programs.child import ChildError, Running, check_runnable
from scheduler.connected_programs import ProgramError
from scheduler.local_games import Conduct, Entry, Series, play_series, too_few
from store import printable

from .common import PlayersOpt, PresetOpt, RuleOpt, build_rules, console, err_console, fail

NAMED = re.compile(r"^([A-Za-z0-9][\w.-]{0,63})=(.+)$", re.S)
"""``NAME=BOT``: a label before the bot (a built-in spec has a colon before any ``=``)."""
INTERPRETERS = {"java", "python", "python3", "node", "ruby", "perl", "tclsh", "php", "lua", "sh", "bash", "dotnet"}


def match(
    bot: Annotated[
        list[str],
        typer.Option(
            "--bot",
            "-b",
            help="A bot (repeat, at least once): a built-in spec (strong, greedy:eps=0.05), a Python file with a "
            "Bot class (mybot.py or mybot.py:MyBot), a folder with a bot.toml, a gRPC SDK program "
            '("grpc:node bot.js": it connects to an engine inside this command), or a JSON-lines command '
            '("java -cp out Bot"). NAME=BOT names it.',
        ),
    ],
    games: Annotated[
        int, typer.Option("--games", "-g", min=1, help="Games to play (mirrored: a rotation of seats per deal).")
    ] = 10,
    preset: PresetOpt = "tablic",
    players: PlayersOpt = 2,
    rule: RuleOpt = None,
    seed: Annotated[
        str, typer.Option(help="Seed for the deals and the built-in bots (same seed, same deals).")
    ] = "match",
    mirrored: Annotated[
        bool, typer.Option("--mirrored/--independent", help="Mirrored deals (default) or a new deal every game.")
    ] = True,
    time_bank_ms: Annotated[int, typer.Option(min=0, help="Each seat's time bank for a game, in ms.")] = 0,
    records: Annotated[Path | None, typer.Option(help="Write every game's record here (JSON Lines).")] = Path(
        "match-records.jsonl"
    ),
    no_records: Annotated[bool, typer.Option("--no-records", help="Write no records.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Play games between any bots on this machine through the arena's driver, rules and time control.

    No Redis, Celery or engine service: a bot author's inner loop. Prints each bot's results with a
    95% rating interval, its timeouts, illegal plays and faults, and writes the records
    (`tablanette replay FILE` shows one; `tablanette records verify FILE` checks them).
    """
    rules = build_rules(preset, players, rule)
    control = _control(rules, bot, time_bank_ms)
    out_path = None if no_records else records
    with entries_of(bot) as entries:
        out = out_path.open("w", encoding="utf-8") if out_path else None
        try:
            series = _play(rules, entries, games, seed, control, mirrored, out, quiet=as_json)
        finally:
            if out is not None:
                out.close()
    if as_json:
        print(json.dumps(_to_json(series)))
        return
    _print(series, rules)
    if out_path is not None:
        console.print(
            f"records: {out_path} (replay a game: tablanette replay {out_path} --match 1; "
            f"check them: tablanette records verify {out_path})",
            highlight=False,
        )


def _control(rules: Rules, bots: list[str], time_bank_ms: int) -> TimeControl:
    """The games' time control, once the bots named are known to fill the seats (before any is built)."""
    if short := too_few(len(bots), rules.players, _label(bots[0]) if bots else "greedy"):
        fail(short)
    try:
        return TimeControl(rules.move_time_ms, time_bank_ms=time_bank_ms)
    except ValueError as exc:
        fail(str(exc))


def _play(
    rules: Rules,
    entries: list[Entry],
    games: int,
    seed: str,
    control: TimeControl,
    mirrored: bool,
    out: Any,
    quiet: bool,
) -> Series:
    def write(record: Any) -> None:
        out.write(dumps(record) + "\n")

    on_record = write if out is not None else None
    try:
        if quiet:
            return play_series(rules, entries, games, seed, control, mirrored, on_record)
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task(" vs ".join(e.label for e in entries), total=games)
            return play_series(
                rules, entries, games, seed, control, mirrored, on_record, on_game=lambda _: progress.advance(task)
            )
    except ValueError as exc:
        fail(str(exc))
    except ProgramError as exc:
        fail(str(exc))


@contextlib.contextmanager
def entries_of(specs: list[str]) -> Iterator[list[Entry]]:
    """The entries the ``--bot`` options name; what they start (programs, builds) is stopped at the end."""
    if not specs:
        fail(f"name at least one --bot; built-in bots: {', '.join(BUILTIN_BOTS)}")
    with contextlib.ExitStack() as stack:
        yield [_entry(spec, stack) for spec in specs]


def _label(spec: str) -> str:
    """How the error of a match with too few bots spells ``spec`` again: as given, quoted if a shell needs it."""
    return shlex.quote(printable.line(spec, 200))


def _entry(spec: str, stack: contextlib.ExitStack) -> Entry:
    label = None
    if named := NAMED.match(spec):
        label, spec = named.group(1), named.group(2)
    kind = spec.partition(":")[0]
    if kind == "grpc":
        return _grpc_program(spec.partition(":")[2], label)
    if kind in BUILTIN_BOTS and " " not in spec:
        try:
            parse_spec(spec)
        except ValueError as exc:
            fail(str(exc))
        return Entry(label or spec, lambda seed: make_bot(spec, seed))
    file, _, cls_name = spec.partition(":")
    if file.endswith(".py") and Path(file).is_file():
        cls = _bot_class(Path(file), cls_name)
        return Entry(label or getattr(cls, "name", "") or cls.__name__, lambda seed: cls(), threaded=True)
    if Path(spec).is_dir():
        from hosting.local import LocalBotError, LocalFolderBot  # the build sandbox: only for a folder

        name = label or Path(spec).resolve().name
        err_console.print(f"building {spec} in a sandbox ...", highlight=False, markup=False)
        try:
            folder = LocalFolderBot(spec, name)
        except LocalBotError as exc:
            fail(printable.line(str(exc), 2000))
        stack.callback(folder.close)
        return Entry(name, folder.make, threaded=True)
    return _program(spec, label, stack)


def _program(spec: str, label: str | None, stack: contextlib.ExitStack) -> Entry:
    argv = _argv(spec, spec)
    name = label or _command_name(argv)
    running = Running()
    stack.callback(running.stop_all)
    return Entry(name, lambda seed: ProgramBot(argv, name, on_program=running.add), threaded=True)


def _grpc_program(command: str, label: str | None) -> Entry:
    argv = _argv(f"grpc:{command}", command)
    return Entry(label or _command_name(argv), program=tuple(argv))


def _argv(spec: str, command: str) -> list[str]:
    """The command split as a shell would, and checked to be runnable."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        fail(f"--bot {spec!r}: cannot split it into a command: {exc}")
    if not argv:
        fail(f"--bot {spec!r}: an empty command")
    try:
        check_runnable(argv[0])
    except ChildError as exc:
        hint = f"; built-in bots: {', '.join(BUILTIN_BOTS)}" if len(argv) == 1 and spec == command else ""
        fail(f"--bot {spec!r} is not a built-in bot, a .py file or a folder, and as a command: {exc}{hint}")
    return argv


def _command_name(argv: list[str]) -> str:
    """A command's label: its program's name, or the script's an interpreter runs (``java -cp out Bot``: Bot)."""
    if Path(argv[0]).name in INTERPRETERS:
        args = [a for a in argv[1:] if not a.startswith("-")]
        if args:
            return Path(args[-1]).stem or argv[0]
    return Path(argv[0]).stem or argv[0]


def _bot_class(path: Path, name: str) -> type[Bot]:
    """The Bot subclass ``name`` in the file at ``path`` (or the one it defines); its folder is importable."""
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # `from mybot_helpers import ...` in the author's file
    module_name = f"tablanette_match_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        fail(f"{path}: cannot load it as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        fail(f"{path}: importing it raised {type(exc).__name__}: {printable.line(str(exc))}")
    classes = [
        c
        for c in vars(module).values()
        if inspect.isclass(c) and issubclass(c, Bot) and c is not Bot and c.__module__ == module_name
    ]
    if name:
        chosen = [c for c in classes if c.__name__ == name]
        if not chosen:
            found = ", ".join(c.__name__ for c in classes) or "none"
            fail(f"{path}: no Bot class {name!r} in it; its Bot classes: {found}")
        classes = chosen
    if len(classes) != 1:
        found = ", ".join(c.__name__ for c in classes) or "none"
        fail(f"{path}: name the Bot class to play ({path}:CLASS); its Bot classes: {found}")
    cls = classes[0]
    try:
        cls()
    except Exception as exc:
        said = printable.line(str(exc))
        fail(f"{path}: {cls.__name__}() raised {type(exc).__name__}: {said} (made per game, with no arguments)")
    return cls


def _to_json(series: Series) -> dict[str, Any]:
    fit = {r.bot: r for r in series.fit().ratings}
    out = series.stats.to_json()
    for row, conduct in zip(out["bots"], series.conduct, strict=True):
        rating = fit[row["name"]]
        row["rating"] = rating.to_json()
        row["conduct"] = {
            "moves": conduct.moves,
            "timeouts": conduct.timeouts,
            "illegal": conduct.illegal,
            "forfeits": conduct.forfeits,
            "faults": conduct.faults,
            "reasons": {printable.line(k): v for k, v in conduct.reasons.items()},
            "crashes": conduct.crashes,
            "crashed": {printable.line(k): v for k, v in conduct.crashed.items()},
            "samples": {printable.line(k): printable.line(v) for k, v in conduct.samples.items()},
        }
    return out


def _print(series: Series, rules: Rules) -> None:
    stats = series.stats
    fit = {r.bot: r for r in series.fit().ratings}
    table = Table(
        title=f"{stats.games} games, {rules.preset_name}, {rules.players} players, {rules.move_time_ms} ms a move"
    )
    for col in (
        "bot",
        "games",
        "wins",
        "draws",
        "losses",
        "score %",
        "rating [95%]",
        "points/game",
        "timeouts",
        "illegal",
        "faults",
        "crashes",
    ):
        table.add_column(col, justify="left" if col == "bot" else "right")
    rows = sorted(zip(stats.bots, series.conduct, strict=True), key=lambda bc: -fit[bc[0].name].rating)
    for b, c in rows:
        r = fit[b.name]
        score = 100 * (b.wins + b.draws / 2) / b.games if b.games else 0.0
        interval = f"{r.rating:.0f} [{r.low:.0f}, {r.high:.0f}]" if b.games else "-"
        table.add_row(
            escape(printable.line(b.name)),
            str(b.games),
            str(b.wins),
            str(b.draws),
            str(b.losses),
            f"{score:.1f}",
            interval,
            f"{b.points_per_game:.1f}",
            str(c.timeouts),
            str(c.illegal),
            str(c.faults + c.forfeits),
            str(c.crashes),
        )
    console.print(table)
    console.print(
        f"{series.moves} moves in {stats.seconds:.2f} s; ratings are fitted as a league's are "
        "(a mirrored pair of games is one unit), 1500 the mean",
        highlight=False,
    )
    for b, c in rows:
        if c.reasons or c.forfeits or c.crashes:
            console.print(f"[bold]{escape(printable.line(b.name))}[/]: {_conduct_line(c)}", highlight=False)
            for line in _reason_lines(c):
                console.print(line, highlight=False, markup=False)


def _conduct_line(c: Conduct) -> str:
    parts = []
    if c.crashes:
        parts.append(f"crashed {c.crashes} time{'' if c.crashes == 1 else 's'}")
    if c.faults:
        parts.append(f"{c.faults} answer(s) it failed to give were played as the engine's timeout play")
    if c.forfeits:
        parts.append(f"forfeited {c.forfeits} game(s)")
    return "; ".join(parts)


def _reason_lines(c: Conduct) -> list[str]:
    """Why it crashed, then why its answers were missing (the five likeliest), each with what the bot itself
    said the first time (printable: its words are shown, never obeyed)."""

    def said(reason: str) -> str:
        sample = c.samples.get(reason)
        return f"; the first time, {printable.line(sample, 300)}" if sample else ""

    crashed = [f"  crashed {n} × {printable.line(why, 300)}{said(why)}" for why, n in _likeliest(c.crashed)]
    missed = [f"  {n} × {printable.line(why, 300)}{said(why)}" for why, n in _likeliest(c.reasons)]
    return crashed + missed


def _likeliest(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: -kv[1])[:5]
