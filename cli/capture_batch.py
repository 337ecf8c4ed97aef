"""Capture questions in bulk: JSON Lines in, JSON Lines out (``tablanette rules captures --batch``).

One answer per non-blank input line, in order: ``{"captures": [[...], ...]}`` with
the capture sets in canonical order (the same as ``--json`` for one question), or
``{"error": "line N: ..."}`` for a line that is not a question; a bad line
disturbs nothing else.

Questions in the canonical form (a list of canonical card names, ``"9C"``) take
a fast path: a table lookup per card name, the shared capture finder, and the
answer written as text. Anything else (``"10h"``, a table given as one string, a
repeated card, a card both on the table and played) goes through
:func:`capture_answer`, which accepts every spelling the CLI accepts and words
the errors. Both paths answer alike; the tests hold them to it.

A long batch is answered by one process per core (forked once the rules are
built, fed chunks of lines, answers written in input order), so the bulk check
costs what the enumerator costs, not what one core can do. A batch of one chunk
or less is answered in the process itself.

This module loads no CLI framework: :func:`batch_command` lets ``tablanette``
answer a batch without starting the Typer app (see :mod:`cli`).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from engine_service.rules import (
    CARDS,
    DEFAULT_PRESET,
    Card,
    Rules,
    TablanetteError,
    card_names,
    iter_mask,
    mask_of,
    parse_cards,
    parse_override,
    plays_for_card,
)
from engine_service.rules.cards import JACK
from engine_service.rules.deal import finder_for

BIT = {str(card): 1 << i for i, card in enumerate(CARDS)}
"""Canonical card name -> its bit."""
INDEX = {str(card): i for i, card in enumerate(CARDS)}
QUOTED = tuple(json.dumps(str(card)) for card in CARDS)
CHUNK = 2048
"""Lines answered (and written) at a time; a batch longer than this is shared among the cores."""


def capture_answer(rules: Rules, table_cards: list[str] | str, card: str) -> dict[str, Any]:
    """Every legal capture set of ``card`` on the table (trail excluded), canonical order."""
    table = mask_of(parse_cards(table_cards))
    played = Card.parse(card)
    if table & played.bit:
        raise TablanetteError(f"{played} cannot be both on the table and played")
    plays = plays_for_card(rules, table, played)
    return {
        "captures": [card_names(p.mask) for p in plays if p.mask],
        "trail_allowed": any(not p.mask for p in plays),
    }


def answers(rules: Rules, lines: Iterable[str], first: int = 1) -> Iterator[str]:
    """The answer line (with its newline) to each non-blank question line, in order.

    ``first`` is the number of the first line (errors name the line).
    """
    captures = finder_for(rules).captures
    sweeps = rules.jack_sweeps
    loads = json.loads
    for lineno, line in enumerate(lines, first):
        if not line.strip():
            continue
        try:
            question = loads(line)
            if type(question) is not dict or "card" not in question:
                raise TablanetteError('expected {"table": [...], "card": "9C"}')
            masks = _fast(question, captures, sweeps)
            if masks is None:
                names = capture_answer(rules, question.get("table", []), question["card"])["captures"]
                yield json.dumps({"captures": names}, separators=(",", ":")) + "\n"
                continue
        except (json.JSONDecodeError, TablanetteError, TypeError) as exc:
            yield json.dumps({"error": f"line {lineno}: {exc}"}, separators=(",", ":")) + "\n"
            continue
        yield '{"captures":[' + ",".join(_names(m) for m in masks) + "]}\n"


def _fast(question: dict[str, Any], captures: Callable[[int, int], list[Any]], sweeps: bool) -> list[int] | None:
    """The capture masks of a canonical question, or None to take the slow path."""
    names = question.get("table", [])
    if type(names) is not list:
        return None
    table = 0
    try:
        for name in names:
            bit = BIT[name]
            if table & bit:
                return None  # a repeated card: the slow path words the error
            table |= bit
        card = INDEX[question["card"]]
    except (KeyError, TypeError):
        return None
    if table >> card & 1:
        return None
    if card >> 2 == JACK and sweeps:
        return [table] if table else []
    return [cap.mask for cap in captures(table, card)]


def _names(mask: int) -> str:
    return "[" + ",".join(QUOTED[c] for c in iter_mask(mask)) + "]"


def write_answers(rules: Rules, lines: Iterable[str], write: Callable[[str], Any], workers: int | None = None) -> None:
    """Answer every line, writing the answers chunk by chunk in input order.

    ``workers``: processes to share a batch longer than one chunk among (default:
    one per core; 1 answers everything in this process).
    """
    chunks = _chunks(lines)
    head = next(chunks, None)
    if head is None:
        return
    second = next(chunks, None)
    workers = workers or os.cpu_count() or 1
    if second is None or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for first, chunk in itertools.chain([head], [second] if second else [], chunks):
            write("".join(answers(rules, chunk, first)))
        return
    global _RULES  # what each forked worker answers under (inherited, never pickled)
    _RULES = rules
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for text in pool.imap(_answer_chunk, itertools.chain([head, second], chunks)):
            write(text)


_RULES: Rules | None = None


def _answer_chunk(job: tuple[int, list[str]]) -> str:
    assert _RULES is not None
    return "".join(answers(_RULES, job[1], job[0]))


def _chunks(lines: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """``(number of the chunk's first line, its lines)``, :data:`CHUNK` lines at a time."""
    it = iter(lines)
    first = 1
    while chunk := list(itertools.islice(it, CHUNK)):
        yield first, chunk
        first += len(chunk)


def run_batch(rules: Rules, source: str) -> None:
    """Answer the questions of ``source`` (a path, or ``-`` for standard input) on standard output."""
    stream = sys.stdin if source == "-" else open(source, encoding="utf-8")  # noqa: SIM115 - closed below
    with stream:
        write_answers(rules, stream, sys.stdout.write)


# ------------------------------------------------------- the command without the app

OPTIONS = {"--preset": "preset", "-p": "preset", "--players": "players", "-n": "players"}
"""The options of ``rules captures`` this parser takes (besides ``--batch`` and ``--rule``/``-r``)."""


def batch_command(args: list[str]) -> Callable[[], None] | None:
    """The batch to run for ``rules captures --batch FILE [rule options]``, or None.

    None for any other command line, and for one this strict parser does not
    fully understand or whose rules do not build (an unknown preset, a bad
    override, a missing file): the app then runs it and words the error.
    """
    if args[:2] != ["rules", "captures"]:
        return None
    given: dict[str, str] = {}
    overrides: list[str] = []
    rest = args[2:]
    i = 0
    while i < len(rest):
        name, sep, value = rest[i].partition("=")
        if not sep:
            if i + 1 >= len(rest):
                return None
            value = rest[i + 1]
            i += 1
        i += 1
        if name in ("--rule", "-r"):
            overrides.append(value)
        elif name == "--batch" or name in OPTIONS:
            key = OPTIONS.get(name, "batch")
            if key in given:
                return None
            given[key] = value
        else:
            return None
    source = given.get("batch")
    if source is None or (source != "-" and not (os.path.isfile(source) and os.access(source, os.R_OK))):
        return None  # the app says why it cannot read it
    try:
        players = int(given.get("players", "2"))
        rules = Rules.preset(given.get("preset", DEFAULT_PRESET), players=players).with_overrides(
            dict(parse_override(text) for text in overrides)
        )
    except (ValueError, TablanetteError):
        return None
    return lambda: run_batch(rules, source)
