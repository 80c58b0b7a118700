"""DATABASE_URL forms the database layer opens, and the refusals of the others (core/store/db.py)."""

from __future__ import annotations

import pytest

from core.errors import InvalidInput
from core.store.db import check_url


@pytest.mark.parametrize("url", ["sqlite://data/hermes-chat.sqlite3", "sqlite:///var/x.db",
                                 "sqlite://:memory:", "postgres://u:p@db:5432/hermes",
                                 "postgresql://db/hermes?sslmode=require"])
def test_the_forms_that_open(url: str) -> None:
    check_url(url)


@pytest.mark.parametrize(("url", "says"), [
    ("garbage", "is not a database URL"),
    ("sqlite:/x.db", "needs two slashes after 'sqlite:'"),
    ("sqlite://", "names no SQLite file"),
    ("mysql://u:pw-secret@db/x", "mysql:// is not supported"),
    ("postgres://u:pw-secret@db:port/x", "port that is not a number"),
])
def test_the_others_are_refused_naming_the_setting_not_the_value(url: str, says: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_url(url)
    assert refused.value.message.startswith("DATABASE_URL") and says in refused.value.message
    assert "pw-secret" not in refused.value.message and "postgres://user:password@host" in \
        refused.value.message
