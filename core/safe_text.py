"""Text from a model, a tool or a platform, made storable where it enters.

Two characters valid in a Python string break what comes after it: NUL, which PostgreSQL
refuses in any text column (one such row failed every later flush of a replica), and a lone
surrogate (half of a UTF-16 pair, which JSON's `\\ud83d` escape can carry alone), which
cannot be encoded as UTF-8 at all (the SSE stream, the database driver, an export). Both
become U+FFFD, the replacement character, so the rest of the text is kept as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with each NUL and lone surrogate replaced by U+FFFD (the same object if none)."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def clean_value(value: Any, text: Callable[[str], str] = clean_text) -> Any:
    """`text` (default: `clean_text`) over every string of a JSON-like value (dict keys too),
    at any depth; tuples become lists, as JSON has them."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {clean_value(k, text): clean_value(v, text) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_value(v, text) for v in value]
    return value


def bounded(text: str, limit: int) -> str:
    """`text` cleaned and cut to `limit` characters, an ellipsis marking a cut (a model's
    command or reason can be as long as it likes: what is stored and shown is not). Only
    what is kept is cleaned: a megabyte costs no more than `limit` characters."""
    text = clean_text(text[: limit + 1])  # the replacement is one character for one
    return text if len(text) <= limit else text[: limit - 1] + "…"
