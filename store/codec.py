"""Decoding Redis replies (bytes unless a client decodes them) into Python values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def text(value: object) -> str:
    """A Redis reply as ``str``.

    >>> text(b"done"), text("done"), text(3)
    ('done', 'done', '3')
    """
    return value.decode() if isinstance(value, bytes) else str(value)


def text_map(raw: Mapping[Any, Any]) -> dict[str, str]:
    """A hash reply (``HGETALL``) with ``str`` keys and values."""
    return {text(k): text(v) for k, v in raw.items()}
