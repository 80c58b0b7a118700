"""Tolerant reads of the JSON a platform sent (pure): a field that is missing, null or of
another type reads as absent, so a parser written with these never raises on a shape it did
not expect; a string is made storable as it is read (core/text/safe_text.py). The typed parsers of
each adapter (bots/slack/inbound.py, bots/discord/inbound.py) are built on them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.text.safe_text import clean_text

Json = Mapping[str, Any]
EMPTY: Json = {}


def obj(value: object) -> Json:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else EMPTY


def text(value: object) -> str | None:
    """`value` if it is a non-empty string (NUL and lone surrogates replaced)."""
    return clean_text(value) if isinstance(value, str) and value else None


def items(value: object) -> Sequence[Any]:
    """`value` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list | tuple) else ()


def first_text(*values: object) -> str | None:
    """The first of `values` that is a non-empty string."""
    return next((clean_text(v) for v in values if isinstance(v, str) and v), None)


def snowflake(value: object) -> int | None:
    """A Discord id: an integer, or a string of digits (as the gateway sends them)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        return int(value)
    return None
