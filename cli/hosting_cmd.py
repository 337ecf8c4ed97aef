"""``tablanette bot submit | versions | version`` and ``tablanette host``: hosted bots.

A bot author submits a folder with a ``bot.toml`` (docs/hosting.md); every
submission is a new version ``NAME@N``, which a host (``tablanette host``, also
started by ``tablanette up`` where sandboxes can be made) builds, preflights and
runs. ``bot versions`` lists a bot's versions and where each stands; ``bot
version NAME@N`` shows one with its build log, preflight report and evidence;
``bot output NAME`` says (and with ``--public``/``--private`` sets) whether
everyone may read the bot's output on the web, or only its owner.

Everything a bot or a build wrote is printed printable (:mod:`store.printable`):
no escape sequence of theirs reaches the operator's terminal.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from .common import console, fail, redis_client

WAITING = ("submitted", "building", "preflight")


def submit(
    folder: Annotated[Path, typer.Argument(help="The bot's folder, with its bot.toml.")],
    name: Annotated[str, typer.Option("--name", help="The bot's name (versions are NAME@1, NAME@2, ...).")],
    lang: Annotated[str | None, typer.Option("--lang", help="Its language, if bot.toml does not say.")] = None,
    wait: Annotated[
        bool, typer.Option(help="Wait until it is built and preflighted, and say how it went (exit 1 if it failed).")
    ] = False,
    timeout: Annotated[float, typer.Option(help="With --wait: the most seconds to wait.")] = 900.0,
) -> None:
    """Submit a bot's folder for the arena to build, check and run: a new version NAME@N.

    Example: `tablanette bot submit bots/jsonlines --name perly --wait`.
    """
    from hosting.manifest import ManifestError
    from hosting.source import SourceError
    from hosting.submit import from_folder
    from store.printable import line
    from store.versions import Quota, QuotaError, VersionError, Versions

    client, settings = redis_client()
    versions = Versions(client, settings.prefix)
    try:
        version, size = from_folder(versions, name, folder, Quota.of(settings), lang or "")
    except (ManifestError, SourceError, VersionError, QuotaError) as exc:
        fail(escape(line(str(exc))))
    m = version.printable_json()["manifest"]
    console.print(
        f"submitted [bold]{version.name}[/] ({escape(m['language']) or 'language not given'}, {m['protocol']}; "
        f"{size:,} bytes, source {version.source_hash[:12]})",
        highlight=False,
    )
    if key := versions.issue_owner_key(name, replace=False):  # the bot's first version
        console.print(
            f"owner key of {name} (shown once; it submits new versions through the web and the JSON API):",
            highlight=False,
        )
        print(key, flush=True)
    if not wait:
        console.print(f"`tablanette bot version {version.name}` shows its build and preflight as they go.")
        return
    ends = time.monotonic() + timeout
    seen = ""
    while (v := versions.require(version.name)).state in WAITING and time.monotonic() < ends:
        if v.state != seen:
            seen = v.state
            console.print(f"{v.name}: {v.state} {line(v.note)}".rstrip(), highlight=False, markup=False)
        time.sleep(0.5)
    _show(v.printable_json(), log=v.state == "build-failed")
    if v.state != "ready":
        raise typer.Exit(1)


def owner_key(name: Annotated[str, typer.Argument(help="A hosted bot.")]) -> None:
    """Issue a new owner key for a hosted bot (the old one stops working); printed once."""
    from store.versions import VersionError, Versions

    client, settings = redis_client()
    try:
        key = Versions(client, settings.prefix).issue_owner_key(name)
    except VersionError as exc:
        fail(str(exc))
    print(key)


def versions(
    bot: Annotated[str | None, typer.Argument(help="A hosted bot (default: every one).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """A hosted bot's versions (or every hosted bot's) and where each stands."""
    from store.printable import line
    from store.versions import Versions

    client, settings = redis_client()
    store = Versions(client, settings.prefix)
    found = store.of(bot) if bot else store.all()
    if bot and not found:
        fail(f"no hosted bot {bot!r}: `tablanette bot submit DIR --name {bot}` submits its first version")
    if as_json:
        print(json.dumps([v.printable_json() for v in found], indent=2))
        return
    table = Table("version", "state", "language", "source", "submitted", "note")
    for v in found:
        submitted = time.strftime("%Y-%m-%d %H:%M", time.localtime(v.submitted))
        language = escape(line(str(v.manifest.get("language", ""))))
        table.add_row(v.name, v.state, language, v.source_hash[:12], submitted, escape(line(v.note)))
    console.print(table)


def version(
    name: Annotated[str, typer.Argument(help="A version, NAME@N.")],
    log: Annotated[
        bool, typer.Option("--log", help="Print the whole build log, its latest output and each fault's output.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One version: its state, build, preflight report and the evidence of its faults (all it wrote, made
    printable: no escape sequence of its own reaches this terminal)."""
    from store.versions import VersionError, Versions

    client, settings = redis_client()
    try:
        v = Versions(client, settings.prefix).require(name)
    except VersionError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(v.printable_json(), indent=2))
        return
    _show(v.printable_json(), log=log)


def output(
    bot: Annotated[str, typer.Argument(help="A hosted bot.")],
    public: Annotated[
        bool | None,
        typer.Option(
            "--public/--private",
            help="Show its versions' output, faults' output and build logs on the web to everyone, "
            "or to its owner only (the default).",
        ),
    ] = None,
) -> None:
    """Who reads a hosted bot's output on the web: its owner only (the default), or everyone.

    Its owner chooses too, with the owner key (`POST /api/bots/NAME/output-visibility`); the operator
    reads everything with `tablanette bot version NAME@N --log`.
    """
    from store.versions import VersionError, Versions

    client, settings = redis_client()
    store = Versions(client, settings.prefix)
    try:
        if public is not None:
            store.set_output_public(bot, public)
        elif not store.of(bot):
            raise VersionError(f"no hosted bot named {bot!r}")
    except VersionError as exc:
        fail(str(exc))
    shown = "everyone" if store.output_public(bot) else "its owner only (and the operator)"
    console.print(f"{bot}: its output and build logs are shown on the web to {shown}", highlight=False)


def _show(v: dict[str, Any], log: bool) -> None:
    """Print a version's :meth:`~store.versions.Version.printable_json` (never with rich's markup: the
    texts are a stranger's)."""

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False)

    say(f"{v['name']}: {v['state']}" + (f" ({v['note']})" if v["note"] else ""))
    if v.get("build_error"):
        say(f"  the build's last error: {v['build_error']}")
    m = v["manifest"]
    say(f"  {m['language'] or '?'}, {m['protocol']}; runs {' '.join(m['run'])}")
    if v["build_seconds"] is not None:
        console.print(f"  built in {v['build_seconds']} s", highlight=False)
    if log or v["state"] == "build-failed":
        lines = v["build_log"].splitlines()
        shown = lines if log else lines[-30:]
        say("  build log:" if log else "  end of the build log:")
        for text in shown:
            say(f"    {text}")
    if pf := v["preflight"]:
        verdict = "passed" if pf["passed"] else "failed: " + "; ".join(pf["problems"])
        games = f"{pf['games']} of {pf['planned']} games"
        say(f"  preflight ({pf['league']}): {games}, {verdict}")
    if log and v["output"]:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(v["output_at"] or 0))
        say(f"  latest output (as of {at}):")
        for text in v["output"]:
            say(f"    {text}")
    for e in v["evidence"] if log else v["evidence"][:3]:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e["at"]))
        say(f"  fault at {at}: {e['reason']}")
        for text in e.get("output", []) if log else []:
            say(f"    {text}")


def host(
    address: Annotated[
        str, typer.Option(envvar="TABLANETTE_ADDRESS", help="Engine service replicas, comma-separated.")
    ] = "127.0.0.1:50051",
    folder: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Where versions are unpacked and built (default TABLANETTE_HOST_DIR, else "
            "/var/tmp/tablanette-hosted-PREFIX); the sandbox's user (nobody) must be able to reach it.",
        ),
    ] = None,
    ca: Annotated[str | None, typer.Option(help="CA certificate for TLS.")] = None,
) -> None:
    """Build, preflight and run the arena's hosted bots on this machine, until stopped (needs root)."""
    import logging
    import signal

    from hosting.host import Host
    from programs.sandbox import unavailable
    from scheduler.queue import MatchQueue
    from store import printable
    from worker.celery_app import app as celery_app

    if why := unavailable():
        fail(f"cannot host bots here: {why}")
    printable.log_printably(logging.INFO)
    client, settings = redis_client()
    from store.client import connect

    folder = folder or Path(settings.host_dir or f"/var/tmp/tablanette-hosted-{settings.prefix}")
    store_client = connect(settings.redis_url, ride_out=True)
    service = Host(
        store_client,
        settings.prefix,
        address,
        folder,
        MatchQueue(celery_app, settings.queue),
        ca=Path(ca).read_bytes() if ca else None,
        builds=settings.host_builds,
        preflights=settings.host_preflights,
        build_timeout_s=settings.host_build_seconds,
    )
    client.close()
    signal.signal(signal.SIGTERM, lambda *_: service.stop())
    signal.signal(signal.SIGINT, lambda *_: service.stop())
    service.run()
