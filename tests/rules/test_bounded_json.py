"""JSON from outside parsed within bounds (engine_service/rules/bounded_json.py): a record's text, a record
file's line, a rule override's value. Before the bound, nesting a few thousand deep ended in RecursionError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine_service.rules import InvalidRulesError, RecordError, Rules
from engine_service.rules.bounded_json import MAX_DEPTH, JSONLimitError, depth, loads
from engine_service.rules.record import loads as load_record
from engine_service.rules.record import read_records

DEEP = ['{"a":' * 5000, "[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a":[' * 3000 + "]}" * 3000]


@pytest.mark.parametrize("text", DEEP, ids=["objects", "arrays", "closed-arrays", "mixed"])
def test_nesting_past_the_bound_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(JSONLimitError, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads(text, max_chars=1 << 20)
    with pytest.raises(RecordError, match="nested deeper"):
        load_record(text)
    with pytest.raises(InvalidRulesError, match="rule card_points: JSON"):
        Rules.preset("tablic").with_overrides({"card_points": text})


def test_the_depth_is_exact_and_strings_do_not_count() -> None:
    for n in (0, 1, 2, 31, 32, 33):
        assert depth("[" * n + "]" * n) == n
        assert depth('{"k":' * n + "1" + "}" * n) == n
    assert depth('["[[[[", "\\"[[[", {"a": "]]]"}]') == 2
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH, max_chars=100) is not None


def test_text_that_is_not_json_still_says_where() -> None:
    with pytest.raises(json.JSONDecodeError):
        loads('{"a": [1, 2', max_chars=100)
    with pytest.raises(RecordError, match="not JSON: Expecting"):
        load_record('{"a": [1, 2')


def test_a_record_file_with_a_deep_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"a": 1}\n' + "[" * 50_000 + "\n")
    with pytest.raises(RecordError, match="line 2: JSON nested deeper"):
        list(read_records(path))
