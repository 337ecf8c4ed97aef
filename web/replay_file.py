"""A replay as one file: the replay viewer's page with a record's frames in it, for any browser, no server.

``tablanette replay FILE`` writes what :func:`replay_html` makes: the page, its
style and scripts inlined, and the match's frames and luck (computed here by the
rules engine, as the web ladder's API computes them) in a script the viewer
reads instead of asking the API. Every text of the record (bot names are
anyone's) reaches the page as JSON data, shown as text, never as markup; the
data's ``<`` are escaped so no ``</script>`` in it can end its script.

>>> from bots import make_bot, play_match
>>> from engine_service.rules import Rules, match_record
>>> m = play_match(Rules.preset("tablic", target=21), "doc", [make_bot("greedy"), make_bot("random", 1)])
>>> page = replay_html(match_record(m, ["</script><b>x", "b"], "doc"), "doc.jsonl")
>>> "</script><b>" in page, page.count("window.TA_REPLAY = "), "/static/" in page
(False, 1, False)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine_service.rules import GameRecord

from .replay import luck_curve, replay_frames

STATIC = Path(__file__).resolve().parent / "static"


def replay_data(record: GameRecord, source: str) -> dict[str, Any]:
    """What the viewer reads: the API's replay answer (record header, frames, luck), and where it came from."""
    header = {k: v for k, v in record.items() if k != "deals"}
    return {"record": header, "frames": replay_frames(record), "luck": luck_curve(record), "source": source}


def _script_json(value: Any) -> str:
    """JSON safe inside a ``<script>``: no ``<``, ``>`` or ``&`` as themselves, nor the JS line separators."""
    text = json.dumps(value, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def replay_html(record: GameRecord, source: str) -> str:
    """The replay viewer as one self-contained page showing ``record`` (``source``: the file it came from)."""
    page = (STATIC / "replay.html").read_text(encoding="utf-8")
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    scripts = "".join(
        f"<script>\n{(STATIC / name).read_text(encoding='utf-8')}\n</script>\n" for name in ("app.js", "replay.js")
    )
    data = f"<script>window.TA_REPLAY = {_script_json(replay_data(record, source))};</script>\n"
    replaced = {
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">': "",
        '<link rel="stylesheet" href="/static/app.css">': f"<style>\n{css}\n</style>",
        '<script src="/static/app.js"></script>\n  <script src="/static/replay.js"></script>\n': data + scripts,
        ' · <a href="/api">JSON API</a>': "",
    }
    for old, new in replaced.items():
        if old not in page:
            raise RuntimeError(f"web/static/replay.html no longer holds {old!r}: update web/replay_file.py")
        page = page.replace(old, new)
    return page
