"""How `serve` names its database in its start-up line: where it is, never its credentials."""

from __future__ import annotations

import pytest

from core.store.db import describe


@pytest.mark.parametrize(("url", "said"), [
    ("sqlite://data/hermes-chat.sqlite3", "sqlite data/hermes-chat.sqlite3"),
    ("postgres://hermes:pa55word@db.internal:5432/hermes?ssl=true", "postgres db.internal:5432/hermes"),
    ("postgres://127.0.0.1/hermes", "postgres 127.0.0.1/hermes"),
])
def test_the_database_is_described_without_its_credentials(url: str, said: str) -> None:
    assert describe(url) == said
