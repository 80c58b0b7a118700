"""Text from a model, a tool or a platform, made storable where it enters.

Two characters valid in a Python string break what comes after it: NUL, which PostgreSQL
refuses in any text column (one such row failed every later flush of a replica), and a lone
surrogate (half of a UTF-16 pair, which JSON's `\\ud83d` escape can carry alone), which
cannot be encoded as UTF-8 at all (the SSE stream, the database driver, an export). Both
become U+FFFD, the replacement character, so the rest of the text is kept as it was.
"""

from __future__ import annotations

import hashlib
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


def shortened(text: str, limit: int) -> str:
    """`text` as a title within `limit` characters: whole if it fits, else cut after its last
    whole word that leaves room for an ellipsis ("How do I rotate the API keys…"), never inside
    a word unless its first word alone is too long. Trailing spaces and punctuation that would
    stand before the ellipsis go too."""
    if len(text) <= limit:
        return text
    kept = text[: limit - 1]
    if not (kept[-1:].isspace() or text[limit - 1].isspace()):  # the cut falls inside a word
        words = kept.rsplit(maxsplit=1)
        kept = words[0] if len(words) == 2 else kept  # end at the word before, if there is one
    return (kept.rstrip(_BEFORE_ELLIPSIS) or kept) + "…"


_BEFORE_ELLIPSIS = " \t\n\r\f\v,;:-–—"


def storable_key(value: object, longest: int = 64) -> str:
    """An id as a unique column stores it: as it is (a platform's short ASCII id), or else its
    digest (too long for the column, or a NUL or a lone surrogate no database column takes)."""
    text = str(value)
    if len(text) <= longest and text.isascii() and text.isprintable():
        return text
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
