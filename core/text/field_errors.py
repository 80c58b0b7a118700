"""Input errors that name the field they are about, and the checks every stored text passes."""

from __future__ import annotations

from core.errors import InvalidInput

# Ids are JSON numbers at the edges; above 2**53 a JavaScript client could not even say them.
MAX_ID = 2**53 - 1


class InvalidField(InvalidInput):
    """A bad value of one named input (snake_case here; each edge spells it its own way)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_text(field: str, value: str) -> str:
    """The value, if every database can store it (PostgreSQL refuses NUL in text)."""
    if "\x00" in value:
        raise InvalidField(field, "must not contain NUL characters")
    return value


def check_id(field: str, value: int) -> int:
    """The value, if it can be an id at all (1 to MAX_ID)."""
    if not 1 <= value <= MAX_ID:
        raise InvalidField(field, f"must be an id between 1 and {MAX_ID}")
    return value
