"""``tablanette remote bots | bot ... | ladder``: an author's bots and the public ladders, over the web API.

A **connected** bot (``remote bot create``) runs on the author's machine and connects to the arena's
engine with its token, shown once; ``remote bot token`` makes a new one (the old one dies) or revokes
it. A **hosted** bot is made by its first ``remote bot submit``: the folder is packed exactly as the
arena packs it (:func:`hosting.source.pack`: the same files give the same source hash) and uploaded; the
arena builds it, plays its preflight and runs it. ``remote bot status`` and ``remote bot logs`` follow it:
its versions' states, and one version's build log, preflight report, faults and latest output, which the
arena shows its owner only (unless the owner made them public).

All of it goes through :mod:`cli.remote_cmd`'s login and its one-line errors; every text the arena
answers is made printable before it is printed (:mod:`store.printable`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from hosting.source import pack
from store import printable

from .remote_client import Remote, RemoteError, segment
from .remote_cmd import connect, reported, say, table, when

bot_app = typer.Typer(
    help="One of your bots: create (connected), submit (hosted), token, status, logs.", no_args_is_help=True
)
BotArg = Annotated[str, typer.Argument(help="The bot's name.")]


@reported
def bots() -> None:
    """Your bots: connected ones with their token's state, hosted ones with their versions."""
    remote, _ = connect()
    mine = remote.get("/api/me/bots")
    if not mine:
        say("no bots yet: `tablanette remote bot create NAME` (connected) or `remote bot submit NAME DIR` (hosted)")
        return
    table(("bot", "kind", "state"), [(b["bot"], b["kind"], _state(b)) for b in mine])


def _state(bot: dict[str, Any]) -> str:
    if bot["kind"] == "connected":
        return f"token {bot['token']} ({bot['token_prefix']}...)"
    versions = bot.get("versions") or []
    if not versions:
        return "no version yet"
    latest = max(versions, key=lambda v: v["number"])
    count = f"{len(versions)} version" + ("s" if len(versions) > 1 else "")
    return f"{count}; latest {latest['name']}: {latest['state']}"


@bot_app.command("create")
@reported
def create(name: BotArg) -> None:
    """Create a connected bot: prints its token once, and how to connect it."""
    remote, _ = connect()
    made = remote.post("/api/me/bots", {"name": name})
    say(f"created the connected bot {made['bot']}; its token (shown once, keep it secret):")
    say(made["token"])
    say("connect it to the arena's engine (its address comes from the arena's operator), e.g.:")
    say(f"  TABLANETTE_TOKEN=<the token> tablanette bot run greedy --as {made['bot']} --address ENGINE_HOST:PORT")
    say(
        f"  TABLANETTE_TOKEN=<the token> tablanette bot bridge --as {made['bot']} --address ENGINE_HOST:PORT -- ./mybot"
    )
    say("(docs/protocol.md says how any program connects; `tablanette remote bot token` replaces a lost token)")


@bot_app.command("token")
@reported
def token(
    name: BotArg,
    revoke: Annotated[bool, typer.Option("--revoke", help="Revoke the token (the bot goes offline).")] = False,
) -> None:
    """A new token for a connected bot (printed once; the old one stops working), or revoke it."""
    remote, _ = connect()
    path = f"/api/me/bots/{segment(name)}/token"
    answer = remote.delete(path) if revoke else remote.post(path)
    if revoke:
        say(f"{answer['bot']}: its token is revoked (it goes offline; its results stay)")
        return
    say(f"{answer['bot']}: a new token (shown once; the old one no longer works):")
    say(answer["token"])


@bot_app.command("submit")
@reported
def submit(
    name: BotArg,
    folder: Annotated[Path, typer.Argument(help="The bot's folder, with its bot.toml at the top.")],
) -> None:
    """Submit a new version of a hosted bot (the first one makes the bot yours): NAME@N, built by the arena."""
    data, source_hash = pack(folder)
    remote, saved = connect()
    v = remote.upload(f"/api/bots/{segment(name)}/versions", data)
    say(f"submitted {v['name']}: {v['state']} ({v['size']:,} bytes, source {str(v['source_hash'])[:12]})")
    if v["source_hash"] != source_hash:
        say(f"  note: the arena hashed it {str(v['source_hash'])[:12]}, this machine {source_hash[:12]}")
    say(f"follow it: `tablanette remote bot status {name}`, `tablanette remote bot logs {name} {v['number']}`,")
    say(f"  or {saved.url}/bots/{segment(name)}/versions/{v['number']}")


def _profile(remote: Remote, name: str) -> dict[str, Any] | None:
    """The bot's public profile (hosted versions, leagues), or None for a bot that is neither hosted nor playing."""
    try:
        profile: dict[str, Any] = remote.get(f"/api/bots/{segment(name)}")
    except RemoteError as exc:
        if exc.status != 404:
            raise
        return None
    return profile


@bot_app.command("status")
@reported
def status(name: BotArg) -> None:
    """A bot's kind, token or versions (newest first, with their states), and its leagues."""
    remote, _ = connect()
    mine = next((b for b in remote.get("/api/me/bots") if b["bot"] == name), None)
    profile = _profile(remote, name)
    if mine is None and profile is None:
        raise RemoteError(f"no bot named {name!r}: not yours, not hosted, and in no league")
    owner = "yours" if mine is not None else "not yours"
    if mine is not None and mine["kind"] == "connected":
        say(f"{name}: a connected bot, {owner}; {_state(mine)}")
    else:
        hosted = bool(profile and profile.get("hosted")) or (mine is not None and mine["kind"] == "hosted")
        say(f"{name}: a {'hosted' if hosted else 'connected'} bot, {owner}")
    kept = (mine or {}).get("versions", [])  # a hosted bot whose versions the profile does not show yet
    versions = profile["versions"] if profile else sorted(kept, key=lambda v: -v["number"])
    rows = [
        (v["name"], v["state"], _preflight(v.get("preflight")), v.get("faults", "-"), v.get("note", ""))
        for v in versions
    ]
    if rows:
        table(("version", "state", "preflight", "faults", "note"), rows)
    for s in profile["leagues"] if profile else []:
        rated = f"rating {s['rating']:.0f}" if s.get("rating") is not None else "not rated yet"
        kind = "preflight" if s.get("preflight") else "league"
        say(
            f"{kind} {s['league']}: {s['name']} {rated}, {s['games']} games"
            + (" (in quarantine)" if s.get("quarantine") else "")
        )


def _preflight(pf: dict[str, Any] | None) -> str:
    if not pf:
        return "-"
    verdict = "passed" if pf.get("passed") else "failed"
    return f"{verdict} ({pf.get('games')}/{pf.get('planned')} games)"


@bot_app.command("logs")
@reported
def logs(
    name: BotArg,
    version: Annotated[int | None, typer.Argument(help="The version's number (default: the latest).", min=1)] = None,
) -> None:
    """A hosted version's build log, preflight report, faults and latest output (its owner's to read)."""
    remote, _ = connect()
    if version is None:
        profile = _profile(remote, name)
        if not profile or not profile["versions"]:
            raise RemoteError(f"{name} has no hosted version: `tablanette remote bot submit {name} DIR` makes one")
        version = int(profile["versions"][0]["number"])
    v = remote.get(f"/api/bots/{segment(name)}/versions/{version}")
    show_version(v)


@reported
def ladder(
    league: Annotated[str, typer.Argument(help="The league's name.")],
    limit: Annotated[int, typer.Option(min=1, max=1000, help="How many bots, from the top.")] = 50,
) -> None:
    """A league's public ladder, best first: rating with its 95% interval, games, record and margin."""
    remote, _ = connect()
    data = remote.get(f"/api/leagues/{segment(league)}/ladder?limit={limit}")
    say(f"ladder: {data['league']} ({data['results']} results; {data['total']} bots)")
    rows = []
    for r in data["rows"]:
        interval = f"[{r['interval'][0]:.0f}, {r['interval'][1]:.0f}]" if r.get("interval") else "no games yet"
        rows.append(
            (
                r["rank"],
                r["bot"] + (" (provisional)" if r.get("provisional") else ""),
                f"{r['rating']:.0f}",
                interval,
                r.get("games", 0),
                f"{r.get('wins', 0)}-{r.get('draws', 0)}-{r.get('losses', 0)}",
                f"{r['margin']:+.1f}" if r.get("margin") is not None else "-",
            )
        )
    table(("#", "bot", "rating", "95% interval", "games", "W-D-L", "margin"), rows)


def show_version(v: dict[str, Any]) -> None:
    """A hosted version as its owner sees it: state, build, preflight, faults, latest output (all printable)."""
    say(f"{v['name']}: {v['state']}" + (f" ({v['note']})" if v.get("note") else ""))
    m = v.get("manifest") or {}
    say(f"  {m.get('language') or '?'}, {m.get('protocol', '?')}; submitted {when(v.get('submitted'))}")
    if v.get("build_seconds") is not None:
        say(f"  built in {v['build_seconds']} s")
    if v.get("build_error"):
        say(f"  the build's last error: {v['build_error']}")
    if pf := v.get("preflight"):
        verdict = "passed" if pf.get("passed") else "failed: " + "; ".join(map(str, pf.get("problems", [])))
        say(f"  preflight ({pf.get('league', '?')}): {pf.get('games')} of {pf.get('planned')} games, {verdict}")
    for league in v.get("leagues", []):
        rated = f"rating {league['rating']:.0f}" if league.get("rating") is not None else "not rated yet"
        say(f"  league {league['league']}: {rated}, {league['games']} games")
    if not v.get("output_shown", True):
        say("  its build log and output are shown to its owner only: you are not this bot's owner")
        return
    if log := v.get("build_log"):
        say("  build log:")
        for text in printable.text(str(log)).splitlines():
            say(f"    {text}")
    if v.get("output"):
        say(f"  latest output (as of {when(v.get('output_at'))}):")
        for text in v["output"]:
            say(f"    {text}")
    for e in v.get("evidence", []):
        say(f"  fault at {when(e.get('at'))}: {e.get('reason', '')}")
        for text in e.get("output", []):
            say(f"    {text}")
