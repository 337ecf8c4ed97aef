"""``tablanette league create | add-bot | remove-bot | start | retry | status | list | lift | cancel``.

The scheduler's modules (its ratings, with NumPy, and its feeder) are loaded by the commands that use them:
`league create` and `league add-bot` start in about half the CPU time without them.
"""

from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from store import printable
from store.audit import AuditLog
from store.client import connect
from store.league_settings import options
from store.league_status import LeagueStatus
from store.leagues import League, LeagueError, LeagueStore
from store.results import LeagueResults
from store.tokens import BotTokens
from store.versions import VersionError, Versions, split_version

from .common import PlayersOpt, PresetOpt, RuleOpt, arena_settings, build_rules, console, fail, redis_client

if TYPE_CHECKING:
    from rich.progress import Progress

app = typer.Typer(help="Leagues: round-robin tournaments played by the workers, rated by Elo.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def store() -> LeagueStore:
    client, settings = redis_client()
    return LeagueStore(client, settings.prefix)


def results() -> LeagueResults:
    client, settings = redis_client()
    return LeagueResults(client, settings.prefix)


CREATE_HELP = """Create a league (add bots next, then start it).

Formats: round-robin (every pairing plays --games games) and
double-round-robin (two such cycles, seats swapped: 2 x --games games a
pairing, the second cycle on new deals), gauntlet (--champion against every other bot), adaptive (a mirrored
pair per pairing, then games between the neighbours the ladder is least sure
of, until they are settled or --budget is spent), a placement (--format
gauntlet --reference A,B,C: every bot added is placed on that ladder of
reference bots with a 95% interval, playing the reference nearest its rating
until the interval is within 75 Elo or the budget of 400 games is spent), sprt (a challenger
against --champion in mirrored pairs until an SPRT of --elo0 against --elo1
decides) and standing (a ladder that never ends: bots join with
`league add-bot` and leave with `league remove-bot` while it runs; a new bot
or version is placed against the reference bots (--reference) or its nearest
placed bots, then pairs go between ladder neighbours whose order is least
sure, every bot gets a minimum share of games and none hogs the workers; a
newer version of a hosted bot retires its older ones; a bot not connected is
skipped, never forfeited; two players, fitted on wins and losses).

A bot whose conduct crosses a --quarantine-* limit is taken out of
scheduling: its matches wait (never charged to its opponents) until
`tablanette league lift` lets it play again.

--clock cpu charges a hosted bot the CPU time its sandbox uses on a turn
(the move time of it, within --wall-cap-ms of wall-clock time), so load
from its neighbours costs it nothing; a remote bot stays on the wall clock.

--latency-credit-ms: on the wall clock, a bot's answer may arrive later
than its time by its round trip as the arena measures it (keepalive
echoes), at most this much: a bot far from the arena gets the same time to
think as one beside it. A bot can only make its round trip look longer, so
the cap is the most it can gain.

--time-bank-ms: each bot may go over the move time on any turn, out of a
reserve of this much for the match; a missed deadline empties it.

--fit skill orders the ladder by skill: each bot's point margins with the
luck of the cards taken out, in points a match (the win/loss ratings are
shown beside it; an adaptive league then pairs the neighbours least sure
on skill).
"""


def league_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` one option per league setting (:func:`store.league_settings.options`), with the
    setting's default and help; their values reach it in ``**settings``."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    made = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=default,
            annotation=Annotated[kind, typer.Option(help=s.describe())],
        )
        for name, kind, default, s in options()
    ]
    command.__signature__ = signature.replace(parameters=[*own, *made])  # type: ignore[attr-defined]
    return command


@app.command(help=CREATE_HELP)
@league_options
def create(
    name: str,
    preset: PresetOpt = "tablic",
    players: PlayersOpt = 2,
    rule: RuleOpt = None,
    reference: Annotated[
        str,
        typer.Option(
            help="gauntlet or standing: place the bots you add on this ladder of reference bots (comma-separated, "
            "e.g. random,greedy,strong), in as few games as the intervals allow; no --champion then."
        ),
    ] = "",
    elo0: Annotated[float, typer.Option(help="sprt: H0, the challenger is this much stronger (Elo).")] = 0.0,
    elo1: Annotated[float, typer.Option(help="sprt: H1, the challenger is this much stronger (Elo).")] = 50.0,
    alpha: Annotated[float, typer.Option(help="sprt: chance of accepting H1 when H0 holds.")] = 0.05,
    beta: Annotated[float, typer.Option(help="sprt: chance of accepting H0 when H1 holds.")] = 0.05,
    **settings: Any,
) -> None:
    """Create a league: the options above, and one option per league setting (:func:`league_options`)."""
    rules = build_rules(preset, players, rule)
    league = League(name, rules, **settings)  # store().create checks them all
    if reference:
        league.reference = [b.strip() for b in reference.split(",") if b.strip()]
        if len(league.reference) < 2 or len(set(league.reference)) != len(league.reference):
            fail(f"--reference names two bots or more, each once: {reference!r}")
        league.bots = _participants(store(), league.reference)
        league.reference = league.bots
    if league.format == "sprt":
        from scheduler.sprt import SPRT

        try:
            SPRT(elo0, elo1, alpha, beta)
        except ValueError as exc:
            fail(str(exc))
        league.sprt = {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta}
    try:
        store().create(league)
    except LeagueError as exc:
        fail(str(exc))
    console.print(f"league [bold]{name}[/] created ({rules.preset_name}, {players} players, {league.format})")
    if league.seed:
        from scheduler.fair_play import PUBLIC_SEED

        console.print(f"[yellow]deals: PUBLIC[/]: {PUBLIC_SEED}; leave out --seed for secret deals", highlight=False)
    if league.deals == "mirrored":
        console.print(
            "[yellow]deals: mirrored, forced[/]: a bot that remembers a deal from one game of it to the next can "
            "know its opponents' cards; only bots the arena runs afresh each game cannot (see `league status`)",
            highlight=False,
        )


@app.command("add-bot")
def add_bot(
    name: str, bots: Annotated[list[str], typer.Argument(help="Registered bots, or hosted versions (NAME@N).")]
) -> None:
    """Add participants (before the league starts; to a standing ladder at any time): registered bots
    (`tablanette bot add`), or hosted versions that passed their preflight (`mybot@3`, or `mybot@latest`
    for the newest such). In a standing ladder a version retires the older versions of its bot."""
    st = store()
    bots = _participants(st, bots)
    try:
        before = set(st.load(name).retired)
        league = st.add_bots(name, bots)
    except LeagueError as exc:
        fail(str(exc))
    shown = ", ".join(league.bots) if len(league.bots) <= 20 else f"{', '.join(league.bots[-5:])}, ..."
    console.print(f"league {name}: {len(league.bots)} bots ({shown})", highlight=False)
    if retired := [b for b in league.retired if b not in before]:
        console.print(f"league {name}: retired from pairing (their games stay): {', '.join(retired)}")
    from scheduler.league import fewest_bots, too_few_bots

    if too_few_bots(league):
        need = fewest_bots(league)
        console.print(f"league {name}: it needs at least {need} to start (`league add-bot` adds more)", highlight=False)


@app.command("remove-bot")
def remove_bot(name: str, bots: Annotated[list[str], typer.Argument(help="Bots of the league.")]) -> None:
    """Take participants out (before the league starts; from a standing ladder at any time, where they are
    retired: no longer paired, their games staying on the ladder, and their matches not begun withdrawn)."""
    try:
        league = store().remove_bots(name, bots)
    except LeagueError as exc:
        fail(str(exc))
    verb = "retired (their games stay on the ladder)" if league.format == "standing" else "removed"
    console.print(f"league {name}: {verb}: {', '.join(bots)}; {len(league.bots)} bots left", highlight=False)


def _participants(st: LeagueStore, bots: list[str]) -> list[str]:
    """The bots named, checked: registered with a valid token, or hosted versions (``mybot@latest`` resolved)."""
    tokens = BotTokens(st.r, st.prefix)
    versions = Versions(st.r, st.prefix)
    try:
        bots = [versions.resolve(bot) for bot in bots]  # mybot@latest: its newest version that passed preflight
    except VersionError as exc:
        fail(str(exc))
    for bot in bots:
        if split_version(bot):
            continue  # a hosted version: the store checks it passed its preflight
        info = tokens.info(bot)
        if info is None:
            fail(f"bot {bot!r} is not registered: register it first with `tablanette bot add {bot}`")
        if info.revoked:
            fail(f"bot {bot!r} has no valid token (revoked): `tablanette bot add {bot}` issues a new one")
    return bots


def progress_bar() -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[extra]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )


def progress_line(s: LeagueStatus) -> str:
    """One line of progress: counts, failures and who the league waits for."""
    eta = f", eta {s.eta_seconds:.0f} s" if s.eta_seconds and s.remaining else ""
    note = s.waiting_note()
    return (
        f"{s.league}: {s.status}; {s.done}/{s.total} done, {s.running} running, {s.queued} queued, "
        f"{s.failed} failed{eta}" + (f"; {note}" if note else "")
    )


def run_feed(league_id: str, window: int, quiet: bool = False) -> LeagueStatus:
    """Feed the league to the workers (riding out Redis and broker outages) until every match is over."""
    from scheduler.league import Feeder
    from scheduler.queue import MatchQueue
    from worker.celery_app import app as celery_app

    settings = arena_settings()
    printable.log_printably(logging.WARNING)
    logging.getLogger("tablanette").setLevel(logging.INFO)
    st = LeagueStore(connect(settings.redis_url, ride_out=True), settings.prefix)  # a scheduler outlives outages
    st.load(league_id)  # a clear error now if there is no such league
    enqueue = MatchQueue(celery_app, settings.queue)
    broker = settings.broker_url
    watch = [connect(broker, ride_out=True)] if broker != settings.redis_url and broker.startswith("redis") else []
    if quiet:
        return Feeder(st, league_id, enqueue, window, watch=watch, claim_ms=settings.feeder_claim_ms).run()
    if not console.is_terminal:  # a log, not a bar: one line every few seconds and at the end
        last = {"at": 0.0}

        def log_line(s: LeagueStatus) -> None:
            if time.monotonic() - last["at"] >= 5 or s.remaining == 0:
                last["at"] = time.monotonic()
                console.print(progress_line(s), highlight=False)

        return Feeder(
            st, league_id, enqueue, window, on_progress=log_line, watch=watch, claim_ms=settings.feeder_claim_ms
        ).run()
    with progress_bar() as bar:
        task = bar.add_task(league_id, total=None, extra="")

        def show(s: LeagueStatus) -> None:
            extra = f"running {s.running}, queued {s.queued}" + (f", [red]failed {s.failed}[/]" if s.failed else "")
            if note := s.waiting_note():
                extra += f", [yellow]{note}[/]"
            bar.update(task, total=s.total, completed=s.done + s.failed, extra=extra)

        return Feeder(
            st, league_id, enqueue, window, on_progress=show, watch=watch, claim_ms=settings.feeder_claim_ms
        ).run()


def _report_end(name: str, status: LeagueStatus) -> None:
    console.print(
        f"league {name}: {status.status}, {status.done} of {status.total} matches done"
        + (f", [red]{status.failed} failed[/] (see `tablanette league status {name}`)" if status.failed else ""),
        highlight=False,
    )
    if status.status == "incomplete":
        console.print(f"`tablanette league retry {name}` plays the failed matches again.", highlight=False)


@app.command()
def start(
    name: str,
    window: Annotated[int, typer.Option(help="Matches kept in flight (0: enqueue all at once).")] = 8,
) -> None:
    """Start (or resume) a league and feed it to the workers until every match is over.

    Stopping this command loses nothing: run it again to resume. Failed matches
    are played again (with a fresh budget of attempts).
    """
    try:
        status = run_feed(name, window)
    except LeagueError as exc:
        fail(str(exc))
    _report_end(name, status)


@app.command()
def retry(
    name: str,
    window: Annotated[int, typer.Option(help="Matches kept in flight (0: enqueue all at once).")] = 8,
) -> None:
    """Play a league's failed matches again (each keeps its first cause), then feed it to the end."""
    try:
        failed = store().retry_failed(name)
        console.print(f"league {name}: retrying {len(failed)} failed match(es)", highlight=False)
        status = run_feed(name, window)
    except LeagueError as exc:
        fail(str(exc))
    _report_end(name, status)


@app.command()
def status(name: str, as_json: JsonOpt = False) -> None:
    """Progress of a league, who it waits for, and every match that failed or was interrupted (with why)."""
    from scheduler.fair_play import deals_report, report_lines
    from scheduler.ladder import fitted
    from scheduler.luck_coefficient import summary_line

    st = store()
    try:
        s = st.status(name)
        troubles = st.troubles(name)
        note = st.note(name)
    except LeagueError as exc:
        fail(str(exc))
    try:  # status needs no rules: a league whose rules no longer load still reports
        league: League | None = st.load(name)
    except LeagueError:
        league = None
    fit = league.fitted_on if league else None
    deals = deals_report(st, results(), league) if league else None
    luck = fitted(results(), league).get("luck_correction") if league else None
    if as_json:
        extra = {"fit": fit, "deals": deals, "luck_correction": luck}
        print(json.dumps({**s.to_json(), **extra, "troubles": troubles, "planner": note}))
        return
    console.print(progress_line(s), highlight=False)
    if fit:
        console.print(f"ladder fitted on: {fit}", highlight=False)
    for line in report_lines(deals) if deals else []:
        console.print(printable.line(line), highlight=False)
    if summary_line(luck):
        console.print(summary_line(luck), highlight=False)
    if note:
        console.print(_note_line(note), highlight=False)
    if troubles:
        table = Table(title="matches that failed, wait or were interrupted")
        for col in ("match", "status", "seats", "attempts", "interruptions", "why"):
            table.add_column(col)
        for t in troubles:
            table.add_row(
                t["match_id"],
                t.get("status", ""),
                ", ".join(json.loads(t.get("seats", "[]"))),
                t.get("attempts", "0"),
                t.get("interruptions", "0"),
                _why(t),
            )
        console.print(table)


def _note_line(note: dict[str, Any]) -> str:
    """What an adaptive, placement, SPRT or standing league's planner concluded, in a line."""
    if note.get("format") == "standing":
        unsure = ", ".join(f"{a}/{b} {los:.1%}" for a, b, los in note.get("least_sure", []))
        return (
            f"standing: {note.get('active', 0)} of {note.get('bots', 0)} bots playing ({note.get('away', 0)} away, "
            f"{note.get('retired', 0)} retired by a newer version), {note.get('newcomers', 0)} being placed, "
            f"{note.get('starved', 0)} below their share; {note.get('pending', 0)} of {note.get('ahead', 0)} "
            f"matches queued ahead; {note.get('results', 0)} results" + (f"; least sure: {unsure}" if unsure else "")
        )
    if "decision" in note:
        verdict = {"H1": "H1 accepted: the challenger is better", "H0": "H0 accepted: the challenger is not better"}
        lo, hi = note["elo_interval"]
        return (
            f"SPRT {note['challenger']} vs {note['champion']}: "
            f"{verdict.get(note['decision'], note['decision'])}; LLR {note['llr']} in {note['bounds']}, "
            f"{note['games']} games, {note['elo']:+.1f} Elo [{lo:+.0f}, {hi:+.0f}]"
        )
    if "placed" in note:
        said = [
            f"{bot} {'placed' if p['placed'] else 'not placed yet'} at {p['rating']:.0f} "
            f"[{p['interval'][0]:.0f}, {p['interval'][1]:.0f}]"
            for bot, p in note["placed"].items()
        ]
        unsure = ", ".join(f"{a}/{b}" for a, b in note.get("unsure", []))
        return (
            f"placement: {'; '.join(said)} ({note.get('planned', 0)} of {note['budget']} games"
            + (f"; references still unsure: {unsure}" if unsure else "")
            + ")"
        )
    if note.get("settled"):
        return f"adaptive: every ladder neighbour is settled ({note.get('planned', 0)} of {note['budget']} games)"
    pairs = ", ".join(f"{a}/{b} {los:.1%}" for a, b, los in note.get("unsettled", []))
    return f"adaptive: {note.get('planned', 0)} of {note.get('budget', 0)} games; unsettled: {pairs}"


def _why(t: dict[str, Any]) -> str:
    if t.get("status") == "failed":
        first, last = t.get("first_error", ""), t.get("error", "")
        return f"failed: {first}" + (f" (last: {last})" if last and last != first else "")
    if t.get("waiting"):
        return f"waiting: {t['waiting']}"
    return f"interrupted: {t.get('interrupted', '')}"


@app.command("list")
def list_leagues(as_json: JsonOpt = False) -> None:
    """Every league with its status and progress."""
    st = store()
    rows = [st.status(lid) for lid in st.league_ids()]
    if as_json:
        print(json.dumps([r.to_json() for r in rows]))
        return
    table = Table(title="leagues")
    for col in ("league", "status", "done", "failed", "total", "waiting for", "in quarantine"):
        table.add_column(col)
    for r in rows:
        waiting, held = ", ".join(sorted(r.absent)), ", ".join(sorted(r.quarantined))
        table.add_row(r.league, r.status, str(r.done), str(r.failed), str(r.total), waiting, held)
    console.print(table)


@app.command()
def lift(name: str, bot: str) -> None:
    """Let a quarantined bot play again: its held-back matches are scheduled as the league runs."""
    st = store()
    try:
        st.load(name)
    except LeagueError as exc:
        fail(str(exc))
    held = st.quarantined(name)
    if bot not in held:
        others = f" (in quarantine: {', '.join(sorted(held))})" if held else ""
        fail(f"bot {bot!r} is not in quarantine in league {name}{others}")
    st.lift(name, bot)
    AuditLog(st.r, st.prefix).record("quarantine_lifted", league=name, bot=bot, reason=held[bot]["reason"])
    console.print(f"league {name}: {bot} out of quarantine (it was in for: {held[bot]['reason']})", highlight=False)


@app.command()
def cancel(name: str) -> None:
    """Cancel a league: queued matches are skipped, finished results stay."""
    try:
        status = store().cancel(name)
    except LeagueError as exc:
        fail(str(exc))
    if status == "finished":
        console.print(f"league {name}: already finished, every match played; nothing to cancel", highlight=False)
    else:
        console.print(f"league {name}: cancelled", highlight=False)
