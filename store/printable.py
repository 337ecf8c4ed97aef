"""Text from a bot or a build made safe to store, print and serve: no control or escape sequence survives.

A hosted program's output, a build's log, the sandbox's reasons and an owner's
messages are written by strangers, and they reach the operator's terminal
(``tablanette bot version``, the host's log) and every browser. A terminal obeys
what it is sent: a window title or the clipboard set by an OSC sequence, the
cursor moved back over a line by CSI or a carriage return so that "preflight
failed" reads "preflight passed". So before such a text is kept, printed or
served it goes through :func:`text` (a log of many lines) or :func:`line` (one
line of it, or a one-line field: a note, a reason):

- every ANSI/ECMA-48 escape sequence is removed whole: CSI (``ESC [``, or the
  C1 ``U+009B``), OSC (to BEL or ST), DCS, SOS, PM and APC strings (to ST, or
  to the end of the text when unterminated), SS2/SS3 with the character they
  shift, and any other ``ESC`` sequence or lone ``ESC``;
- every other control character goes (C0 but newline and tab, DEL, C1: the
  backspace too), carriage returns among them: ``"\\r\\n"`` is a newline, a lone
  ``"\\r"`` starts a new line (it can overwrite nothing);
- every format character goes (Unicode category Cf: the bidi embeddings,
  overrides and isolates U+202A-202E and U+2066-2069, zero-width characters,
  the byte-order mark, tag characters), and lone surrogates (which no page
  or JSON encoder takes);
- the line and paragraph separators U+2028/U+2029 are newlines;
- the result is at most ``limit`` characters (a log keeps its end).

Plain text (letters, marks, digits, punctuation, symbols, spaces, newlines and
tabs) passes unchanged.

>>> text("build ok\\x1b]0;pwned\\x07\\x1b[2K\\rpreflight \\x1b[32mpassed\\x1b[0m")
'build ok\\npreflight passed'
>>> line("it said: \\u202eboot\\u202c\\x08\\x08 done\\nfake arena line")
'it said: boot done fake arena line'
>>> plain = "caf\\u00e9 \\u2660 10\\t\\u00bd\\n"
>>> text(plain) == plain
True
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import Any

MAX_TEXT = 64 << 10
"""The most of one text kept by default (characters)."""
MAX_LINE = 1000
"""The most of one line kept by default (characters)."""

_SEQUENCE = re.compile(
    r"""
    (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?             # CSI: parameters, intermediates, final
  | (?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f]) .*? (?:\x07|\x1b\\|\x9c|\Z) # OSC, DCS, SOS, PM, APC: to BEL or ST
  | \x1b[NO] [^\n]?                                                    # SS2, SS3 and the character they shift
  | \x1b [\x20-\x2f]* [\x30-\x7e]?                                     # any other escape, or a lone ESC
    """,
    re.VERBOSE | re.DOTALL,
)
_NEWLINES = re.compile("\r\n|[\r\u2028\u2029]")
_KEPT = frozenset("\n\t")


def _visible(ch: str) -> bool:
    return ch in _KEPT or unicodedata.category(ch) not in ("Cc", "Cf", "Cs")


def text(raw: str, limit: int = MAX_TEXT) -> str:
    """``raw`` without control and escape sequences (newlines and tabs kept); its last ``limit`` characters."""
    raw = raw[-4 * limit :]  # the work is bounded too, whatever a program printed
    cleaned = _NEWLINES.sub("\n", _SEQUENCE.sub("", raw))
    if not cleaned.replace("\n", "").replace("\t", "").isprintable():  # else nothing is left to remove
        cleaned = "".join(ch for ch in cleaned if _visible(ch))
    return cleaned[-limit:]


def line(raw: str, limit: int = MAX_LINE) -> str:
    """One line of ``raw``: as :func:`text`, with any newline made a space (it can forge no line of its own);
    its first ``limit`` characters."""
    cleaned = text(raw[: 4 * limit], limit=4 * limit).replace("\n", " ")
    return cleaned[:limit]


def lines(raw: list[str], limit: int = MAX_LINE) -> list[str]:
    """Each of ``raw`` made one clean line (:func:`line`)."""
    return [line(str(item), limit) for item in raw]


def deep(value: Any, limit: int = MAX_LINE) -> Any:
    """A JSON-like value with every string in it (keys too) made one clean line; numbers and the rest as they are."""
    if isinstance(value, str):
        return line(value, limit)
    if isinstance(value, dict):
        return {(line(k, limit) if isinstance(k, str) else k): deep(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [deep(v, limit) for v in value]
    return value


LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


class LogFormatter(logging.Formatter):
    """Log lines that a stranger's text quoted in them cannot forge: each message made one printable line
    (:func:`line`: no escape sequence, and no newline to start a line of its own); a traceback keeps its
    lines but is made printable too (:func:`text`: an exception's text may quote a program)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = line(record.message, MAX_TEXT)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        return text(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        return text(super().formatStack(stack_info))


def log_printably(level: int) -> None:
    """``logging.basicConfig`` for a process whose log quotes bots and builds (a host, a bridge, a replica)."""
    handler = logging.StreamHandler()
    handler.setFormatter(LogFormatter(LOG_FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
