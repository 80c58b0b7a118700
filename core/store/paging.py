"""Opaque keyset cursors: (timestamp, id) of the last row of a page."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from core.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class Cursor:
    at: datetime
    id: int


def encode_cursor(cursor: Cursor) -> str:
    """An URL-safe token that `decode_cursor` turns back into the cursor."""
    raw = f"{cursor.at.isoformat()}|{cursor.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str) -> Cursor:
    """The cursor inside a token; InvalidInput for anything we did not make."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        at, _, ident = raw.partition("|")
        return Cursor(datetime.fromisoformat(at), int(ident))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput(f"cursor {token!r} is not a cursor this service made") from None
