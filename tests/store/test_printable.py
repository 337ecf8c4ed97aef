"""A stranger's text made printable: what a terminal would obey is gone, plain text is untouched.

The attacks are the ones a hosted program can print on its stderr or a build on
its output: a window title and the clipboard set by OSC, the cursor moved over
a line by CSI or a carriage return to forge "preflight passed", a device
control string, C1 controls, bidi overrides that reverse what a reader sees.
"""

from __future__ import annotations

import io
import logging
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import printable
from store.versions import MAX_LOG, Version

ESC = "\x1b"
ATTACKS = {
    "window title (OSC 0, BEL)": f"{ESC}]0;arena hacked\x07ok",
    "window title (OSC 2, ST)": f"{ESC}]2;arena hacked{ESC}\\ok",
    "clipboard (OSC 52)": f"{ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07ok",
    "hyperlink (OSC 8)": f"{ESC}]8;;http://evil.example/{ESC}\\ok{ESC}]8;;{ESC}\\",
    "C1 OSC": "\x9d0;title\x9cok",
    "cursor up and erase (CSI)": f"{ESC}[1A{ESC}[2K{ESC}[Gok",
    "C1 CSI": "\x9b2Jok",
    "private CSI": f"{ESC}[?1049h{ESC}[?25lok",
    "device control string": f"{ESC}P+q544e{ESC}\\ok",
    "unterminated OSC": f"ok{ESC}]0;everything after is swallowed by a terminal",
    "SS3": f"{ESC}OPok",
    "reset (RIS)": f"{ESC}cok",
    "charset": f"{ESC}(0ok",
    "lone ESC": f"ok{ESC}",
    "backspaces": "ok\x08\x08",
}
FORMAT = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200e\u200f\ufeff\u00ad\U000e0041"


def forbidden(ch: str) -> bool:
    """What no cleaned text may hold: a control character (but newline and tab), a format character, a
    lone surrogate, or a line separator."""
    return ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_escape_sequence_goes_whole(attack: str) -> None:
    cleaned = printable.text(ATTACKS[attack])
    assert not any(forbidden(ch) for ch in cleaned), repr(cleaned)
    assert cleaned.startswith("ok") or cleaned == "ok", repr(cleaned)
    assert "hacked" not in cleaned and "Y3Vyb" not in cleaned and "evil" not in cleaned


def test_a_forged_preflight_verdict_stays_visible_as_what_it_is() -> None:
    forged = "preflight: FAILED, 3 crashes\r\x1b[2Kpreflight: passed\n"
    assert printable.text(forged) == "preflight: FAILED, 3 crashes\npreflight: passed\n"
    assert printable.line(forged) == "preflight: FAILED, 3 crashes preflight: passed "
    assert printable.text("a\r\nb\u2028c") == "a\nb\nc"


def test_bidi_overrides_and_other_format_characters_go() -> None:
    assert printable.text(f"safe{FORMAT}.txt") == "safe.txt"
    assert printable.text("exe.\u202etxt") == "exe.txt"


def test_lengths_are_bounded_a_text_keeps_its_end_a_line_its_start() -> None:
    assert printable.text("x" * 100 + "END", limit=10) == "x" * 7 + "END"
    assert printable.line("START" + "y" * 100, limit=8) == "STARTyyy"
    assert len(printable.text("\x1b[1m" * 100_000 + "z" * 200_000)) == printable.MAX_TEXT


def test_json_like_values_are_cleaned_everywhere_and_numbers_kept() -> None:
    value = {"problems": [f"{ESC}]0;t\x07timeouts"], "games": 4, f"k{ESC}[1m": None, "passed": True}
    assert printable.deep(value) == {"problems": ["timeouts"], "games": 4, "k": None, "passed": True}


def test_a_versions_texts_are_cleaned_however_they_were_written() -> None:
    v = Version("b", 1, "h", {"run": [f"bot{ESC}]0;x\x07"], "language": "py"}, 0.0)
    v.note, v.build_log = f"failed\r{ESC}[2Kpassed", "step 1\n" * 20_000 + f"{ESC}]52;c;eA==\x07done"
    v.output = [f"line {i}\x1b[31m" for i in range(100)]
    v.evidence = [{"at": 1.0, "reason": "exit 1\x9b1A", "output": ["\u202eboom"]}]
    v.preflight = {"problems": ["a\x07b"], "games": 4}
    shown = v.printable_json()
    assert shown["note"] == "failed passed" and shown["manifest"]["run"] == ["bot"]
    assert shown["build_log"].endswith("step 1\ndone") and len(shown["build_log"]) <= MAX_LOG
    assert shown["output"][-1] == "line 99" and len(shown["output"]) == 40
    assert shown["evidence"] == [{"at": 1.0, "reason": "exit 1", "output": ["boom"]}]
    assert shown["preflight"] == {"problems": ["ab"], "games": 4}
    assert v.manifest["run"] == [f"bot{ESC}]0;x\x07"]  # the record itself is untouched: the command runs as given


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300))
def test_no_control_or_format_character_survives_and_cleaning_twice_changes_nothing(raw: str) -> None:
    cleaned = printable.text(raw)
    assert not any(forbidden(ch) for ch in cleaned), repr(cleaned)
    assert printable.text(cleaned) == cleaned
    one = printable.line(raw)
    assert "\n" not in one and not any(forbidden(ch) for ch in one)
    assert printable.line(one) == one


PLAIN = st.characters(categories=("L", "M", "N", "P", "S", "Zs")) | st.sampled_from("\n\t")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=PLAIN, max_size=300))
def test_plain_text_is_unchanged(raw: str) -> None:
    assert printable.text(raw) == raw
    assert printable.line(raw) == raw.replace("\n", " ")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(categories=("L", "N", "P", "Zs")), max_size=20),
            st.sampled_from(sorted(ATTACKS.values())),
        ),
        max_size=12,
    )
)
def test_attacks_mixed_into_plain_text_leave_no_escape(parts: list[str]) -> None:
    cleaned = printable.text("".join(parts))
    assert ESC not in cleaned and not any(forbidden(ch) for ch in cleaned)


def test_a_log_line_quoting_a_program_cannot_forge_another_line_or_reach_the_terminal() -> None:
    """The host's log quotes what programs print: each record is one printable line, its traceback kept."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(printable.LogFormatter(printable.LOG_FORMAT))
    log = logging.getLogger("tablanette.test-printable")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning(
            "bot: its last output: %s", "ok\x1b]52;c;ZXZpbA==\x07\n2026-12-02 host INFO x@1 passed its preflight"
        )
        try:
            raise ValueError("its last error output: \x1b]0;pwned\x07\rpreflight passed")
        except ValueError:
            log.exception("tending failed")
    finally:
        log.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("bot: its last output: ok 2026-12-02 host INFO x@1 passed its preflight"), lines
    assert "\x1b" not in stream.getvalue() and "\x07" not in stream.getvalue()
    assert lines[1].endswith("tending failed") and lines[2] == "Traceback (most recent call last):"
    assert lines[-2:] == ["ValueError: its last error output: ", "preflight passed"], lines  # no title, no overwrite
