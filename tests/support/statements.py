"""The SQL statements a block sends, as the ORM sends them (tortoise's query log; BEGIN and
COMMIT aside): what a step costs the database, counted."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


class _Statements(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.sent: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.sent.append(record.getMessage().split(":", 1)[0])


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL statements sent inside the block."""
    recorder, client_log = _Statements(), logging.getLogger("tortoise.db_client")
    level = client_log.level
    client_log.setLevel(logging.DEBUG)
    client_log.addHandler(recorder)
    try:
        yield recorder.sent
    finally:
        client_log.removeHandler(recorder)
        client_log.setLevel(level)
