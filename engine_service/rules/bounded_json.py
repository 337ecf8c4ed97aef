"""JSON from outside, parsed only within a size and a nesting depth.

Python's parser recurses once per level of nesting: ``'[' * 100_000`` or
``'{"a":' * 5000`` ends in ``RecursionError`` (in a server, an error that names
Python's internals; on a terminal, a traceback). :func:`loads` measures the
nesting first, at C speed (the text's strings taken out, then its innermost
``[]`` and ``{}`` pairs, one level a pass), and refuses a text over either
bound with :class:`JSONLimitError`, before the parser sees it. Every JSON a
client or a file hands the engine goes through it: a record to verify, a record
file's lines, a rule override's value.

>>> loads('{"deals": [{"plays": [1, 2]}], "s": "[[[[["}', max_chars=100, max_depth=4)
{'deals': [{'plays': [1, 2]}], 's': '[[[[['}
>>> loads('[' * 100_000, max_chars=200_000)
Traceback (most recent call last):
engine_service.rules.bounded_json.JSONLimitError: JSON nested deeper than 32 levels
>>> loads('[1, 2, 3]', max_chars=5)
Traceback (most recent call last):
engine_service.rules.bounded_json.JSONLimitError: JSON of 9 characters, over the limit of 5
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine_service.rules.errors import TablanetteError

MAX_DEPTH = 32
"""The deepest nesting accepted: a game record nests 5 levels, a rule override 2."""
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


class JSONLimitError(TablanetteError):
    """JSON larger or more deeply nested than its reader accepts."""


def depth(text: str, stop_after: int = MAX_DEPTH) -> int:
    """How deep ``text``'s arrays and objects nest (counted up to ``stop_after + 1`` at most).

    For text that is not JSON, the depth the parser could reach before it stops.

    >>> depth('[]'), depth('{"a": [1, {"b": "]]]"}]}'), depth('"[[["'), depth('[[[[')
    (1, 3, 0, 4)
    """
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    level = 0
    while skeleton and level <= stop_after:
        inner = _PAIR.sub("", skeleton)
        if inner == skeleton:  # nothing closes: not JSON; the parser goes no deeper than the brackets still open
            return level + skeleton.count("[") + skeleton.count("{")
        skeleton, level = inner, level + 1
    return level


def loads(text: str, max_chars: int, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, if ``text`` is at most ``max_chars`` long and nests at most ``max_depth`` levels
    (:class:`JSONLimitError` if not; :class:`json.JSONDecodeError` for text that is not JSON)."""
    if len(text) > max_chars:
        raise JSONLimitError(f"JSON of {len(text)} characters, over the limit of {max_chars}")
    if depth(text, max_depth) > max_depth:
        raise JSONLimitError(f"JSON nested deeper than {max_depth} levels")
    return json.loads(text)
