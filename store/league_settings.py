"""A league's settings, spelled once: each field of :class:`League` carries its default, its help
text, its allowed values and its bounds (a :class:`Setting`).

Everything that knows a league setting reads it from here: :func:`check` (the one validation, which
:meth:`store.leagues.LeagueStore.create` runs), :func:`stored` and :func:`loaded` (the Redis meta hash)
and the options of ``tablanette league create`` (:mod:`cli.league_cmd` makes one option a
:func:`options` entry). A new setting is one field here.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any

from engine_service.rules import Rules

FORMATS = ("round-robin", "double-round-robin", "gauntlet", "adaptive", "sprt", "standing")
ABSENT_ACTIONS = ("pause", "forfeit")
CLOCKS = ("wall", "cpu")
"""What a turn charges a bot: the wall clock, or (a hosted bot) its CPU time (see :class:`League`)."""
DEALS = ("auto", "independent", "mirrored")
"""How a league's games may be dealt (:attr:`League.deals`)."""
DEALT = ("", "independent", "mirrored")
"""How a league deals once it has started ("": not decided yet)."""
ADMITS = ("operator", "accounts")
"""Who brings bots into a league (:attr:`League.admit`)."""
FITS = ("auto", "win-loss", "skill")
"""What may order a league's ladder (:attr:`League.fit`; ``auto``: :attr:`League.fitted_on`)."""
MAX_LATENCY_CREDIT_MS = 10_000
"""The largest latency credit a league may give (a round trip longer than 10 s is no network to play on)."""
MAX_TIME_BANK_MS = 3_600_000
"""The largest time bank a league may give (an hour)."""


class LeagueError(ValueError):
    """A league that does not exist, or an operation its state does not allow."""


@dataclass(frozen=True)
class Setting:
    """What a league field allows, and how an operator sets it."""

    help: str
    choices: tuple[str, ...] = ()
    least: float | None = None
    most: float | None = None
    option: bool = True
    """Whether ``league create`` sets it with an option of its own (``False``: it is set another way)."""

    def describe(self) -> str:
        """The help text with the allowed values, as the command line shows it."""
        if self.choices:
            return f"{self.help} One of: {', '.join(self.choices)}."
        if self.least is not None and self.most is not None:
            return f"{self.help} ({_num(self.least)} to {_num(self.most)})"
        if self.least is not None:
            return f"{self.help} (at least {_num(self.least)})"
        return self.help

    def problem(self, name: str, value: Any) -> str | None:
        """Why ``value`` is not allowed for the setting ``name`` (``None``: it is)."""
        if self.choices and value not in self.choices:
            return f"unknown {name.replace('_', ' ')} {value!r}; one of: {', '.join(self.choices)}"
        if self.least is not None and value < self.least:
            return f"{name} must be at least {_num(self.least)}, not {value}"
        if self.most is not None and value > self.most:
            return f"{name} must be at most {_num(self.most)}, not {value}"
        return None


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def setting(
    default: Any,
    help: str,
    *,
    choices: tuple[str, ...] = (),
    least: float | None = None,
    most: float | None = None,
    option: bool = True,
) -> Any:
    """A :class:`League` field with its :class:`Setting` (a list or a dict: ``field`` with :func:`unset`)."""
    return field(default=default, metadata={"setting": Setting(help, choices, least, most, option)})


def unset(help: str) -> dict[str, Setting]:
    """The metadata of a :class:`League` field that holds a list or a dict, set by no option of its own."""
    return {"setting": Setting(help, option=False)}


@dataclass
class League:
    """A league's parameters and participants, as stored in Redis."""

    league_id: str
    rules: Rules
    format: str = setting(
        "round-robin", "How the league pairs its bots (the formats are described above).", choices=FORMATS
    )
    games: int = setting(
        2,
        "Games per pairing in one cycle, seats alternating (mirrored: each two share a deal); a double "
        "round-robin plays two cycles, so twice this, each cycle on deals of its own.",
        least=1,
    )
    deals: str = setting(
        "auto",
        "How a pairing's games are dealt: independent (every game a deal of its own), mirrored (its games share "
        "deals, seats rotated: a bot that remembers a deal from one game to the next can know its opponents' "
        "cards), or auto: mirrored only when the arena runs every bot afresh each game (hosted JSON-lines "
        "programs, the reference bots), otherwise independent.",
        choices=DEALS,
    )
    champion: str | None = setting(None, "The bot that runs the gauntlet, or the SPRT's baseline.")
    k: float = setting(24.0, "The form Elo's K factor.", least=0.0)
    initial: float = setting(1500.0, "The rating every bot starts from.")
    seed: str = setting(
        "",
        "A public seed for every deal, for demos and tests: anyone who knows it can compute every hand "
        "(default: a secret the arena keeps).",
    )
    bots: list[str] = field(default_factory=list, metadata=unset("The participants (`league add-bot`)."))
    retired: list[str] = field(
        default_factory=list,
        metadata=unset(
            "standing: bots no longer paired (removed, or a hosted version a newer one replaced); their games "
            "stay on the ladder."
        ),
    )
    status: str = setting("created", "Where the league is (one of store.leagues.STATUSES).", option=False)
    dealt: str = setting(
        "", "How the league deals, decided once when it starts (:attr:`deals` resolved).", choices=DEALT, option=False
    )
    absent_timeout: float = setting(
        600.0, "Seconds a bot may stay disconnected before --absent-action applies to its matches.", least=0.0
    )
    absent_action: str = setting(
        "pause",
        "For a bot away past --absent-timeout: pause (its matches wait for it; the league pauses once "
        "nothing else is left) or forfeit (it forfeits its remaining matches).",
        choices=ABSENT_ACTIONS,
    )
    admit: str = setting(
        "operator",
        "standing: who brings bots in: the operator (league add-bot), or accounts too: every account's connected "
        "bot with a live token, and each hosted bot's newest version once it passed its preflight, joins by "
        "itself (docs/accounts.md).",
        choices=ADMITS,
    )
    confidence: float = setting(
        0.975,
        "The likelihood of superiority at which two neighbours on the ladder count as settled.",
        least=0.5,
        most=0.9999,
    )
    fit: str = setting(
        "auto",
        "What orders the ladder: win-loss, or skill, the point margins with the cards' "
        "luck taken out (the win/loss fit is shown beside it); auto: skill where each game has a deal of "
        "its own, win-loss on mirrored deals (whose pairs take the luck out already).",
        choices=FITS,
    )
    budget: int = setting(
        0, "adaptive and sprt: the most games to play (0: a double round-robin's; sprt 4000).", least=0
    )
    sprt: dict[str, float] = field(default_factory=dict, metadata=unset("sprt: elo0, elo1, alpha, beta."))
    reference: list[str] = field(
        default_factory=list,
        metadata=unset(
            "gauntlet leagues that place newcomers: the bots of the reference ladder (the others are placed on "
            "it); empty: a plain gauntlet of the champion."
        ),
    )
    quarantine_illegal: int = setting(
        20, "Illegal answers in one match that put a bot in quarantine (0: never).", least=0
    )
    quarantine_timeouts: int = setting(10, "Timeouts in one match that put a bot in quarantine (0: never).", least=0)
    quarantine_forfeits: int = setting(
        3,
        "Forfeits in the league (disconnects past the grace period) that put a bot in quarantine (0: never).",
        least=0,
    )
    preflight: str = setting(
        "",
        "The hosted version (bot@n) this league checks before it may play rated games; empty: a rated league.",
        option=False,
    )
    clock: str = setting(
        "wall",
        "wall, or cpu: a hosted bot is charged the CPU time its sandbox uses (a bot no host meters stays on the "
        "wall clock).",
        choices=CLOCKS,
    )
    wall_cap_ms: int = setting(
        0, "On the cpu clock, the wall-clock time a turn may take at most (0: three times the move time).", least=0
    )
    latency_credit_ms: int = setting(
        0,
        "On the wall clock, the most a turn's answer is waited for beyond the bot's time, for the bot's measured "
        "round trip (0: no credit).",
        least=0,
        most=MAX_LATENCY_CREDIT_MS,
    )
    time_bank_ms: int = setting(
        0,
        "Each bot's reserve for a match on top of the move time, as on a chess clock (0: none).",
        least=0,
        most=MAX_TIME_BANK_MS,
    )

    @property
    def mirrored(self) -> bool:
        """Whether its games share deals: as decided at its start (:attr:`dealt`), or, before, as forced."""
        return (self.dealt or self.deals) == "mirrored"

    @property
    def fitted_on(self) -> str:
        """What orders its ladder: its ``fit``, or for ``auto``, skill (the luck taken out of each margin) unless
        its deals are mirrored, whose pairs cancel the cards' luck already, or it is a standing ladder (fitted on
        wins and losses, warm and at any size: :mod:`scheduler.standing`)."""
        if self.fit != "auto":
            return self.fit
        return "win-loss" if self.mirrored or self.format == "standing" else "skill"


def settings() -> Iterator[tuple[Field[Any], Setting]]:
    """Every field of :class:`League` but its name and rules, with its :class:`Setting`."""
    for f in fields(League):
        if "setting" in f.metadata:
            yield f, f.metadata["setting"]


def options() -> Iterator[tuple[str, Any, Any, Setting]]:
    """``(name, type, default, setting)`` of each setting ``league create`` takes as an option of its own."""
    types = typing.get_type_hints(League)
    for f, s in settings():
        if s.option:
            yield f.name, types[f.name], _default(f), s


def check(league: League) -> None:
    """Raise :class:`LeagueError` naming the first setting of ``league`` that is not allowed."""
    for f, s in settings():
        if why := s.problem(f.name, getattr(league, f.name)):
            raise LeagueError(why)
    if why := standing_problem(league):
        raise LeagueError(why)


def standing_problem(league: League) -> str | None:
    """What a standing ladder cannot do with these settings (``None``: nothing); and what only it can do."""
    if league.format != "standing":
        return (
            "only a standing ladder admits accounts' bots by itself: leave out --admit"
            if league.admit != "operator"
            else None
        )
    if league.rules.players != 2:
        return f"a standing ladder pairs two bots a match: give --players 2, not {league.rules.players}"
    if league.fit == "skill":
        return (
            "a standing ladder is fitted on wins and losses (its fit starts warm and scales to 10,000 bots; the "
            "skill fit's covariance does not): leave out --fit skill"
        )
    if league.absent_action == "forfeit":
        return (
            "a standing ladder never forfeits an absent bot's matches: it skips the bot until it is back; leave "
            "out --absent-action forfeit"
        )
    return None


def _default(f: Field[Any]) -> Any:
    return f.default_factory() if f.default_factory is not MISSING else f.default


def stored(league: League) -> dict[Any, str | int | float]:
    """The league's meta hash: every setting in the form :func:`loaded` reads back (the rules whole)."""
    out: dict[Any, str | int | float] = {"rules": json.dumps(league.rules.to_record()), "players": league.rules.players}
    for f, _ in settings():
        value = getattr(league, f.name)
        if isinstance(value, bool):
            out[f.name] = int(value)
        elif isinstance(value, list | dict):
            out[f.name] = json.dumps(value)
        else:
            out[f.name] = "" if value is None else value
    return out


def loaded(league_id: str, rules: Rules, meta: Mapping[str, str]) -> League:
    """The league a meta hash holds (a setting missing from an older league gets its default)."""
    values = {f.name: _read(meta[f.name], _default(f)) for f, _ in settings() if f.name in meta}
    if "deals" not in meta and "mirrored" in meta:  # a league created before deals were chosen
        started = meta.get("status", "created") != "created"
        if meta["mirrored"] != "1":
            values["deals"] = values["dealt"] = "independent"
        elif started:  # it plays on as it began
            values["deals"] = values["dealt"] = "mirrored"
        # else: mirrored was the default then; not yet started, it deals as a new league does (auto)
    return League(league_id, rules, **values)


def _read(raw: str, default: Any) -> Any:
    """A stored setting, as the type of its default."""
    if isinstance(default, bool):
        return raw == "1"
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    if isinstance(default, list | dict):
        return json.loads(raw)
    if default is None:  # optional text: "" is none
        return raw or None
    return raw
