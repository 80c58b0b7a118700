"""Requirement (issue #8 §5): "`q` search is parameterised".

`q` of GET /api/chat/sessions is matched as literal text in titles and message texts: LIKE
wildcards, quotes, backslashes and SQL match only rows that contain exactly them, nothing
breaks, and the text reaches the database as a bound parameter, never inside the SQL. Run on
both backends (HERMES_TEST_DB=postgres). tests/admin/test_listing.py
test_q_is_a_literal_text_not_a_pattern keeps its four title cases; this adds message texts,
backslashes, SQL text, an oracle for every needle and the bound-parameter check."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest
from tortoise.filters import escape_like

from core.store.models import ChatMessage, ChatSession
from tests.admin.builders import conversation

pytestmark = pytest.mark.backend  # the SQL of `q`: LIKE and its escapes differ by backend

ROWS = [  # (title, question, answer)
    ("100% done", "plain", "plain"),
    ("1000 done", "plain", "plain"),
    ("snake_case names", "plain", "plain"),
    ("snakeXcase names", "plain", "plain"),
    ("it's O'Brien's", "plain", "plain"),
    ("back\\slash", "plain", "plain"),
    ("backslash", "plain", "plain"),
    ("quoted", 'she said "hi"', "plain"),
    ("Robert'); DROP TABLE chat_session;--", "plain", "plain"),
    ("untitled", "try x' OR '1'='1", "plain"),
    ("answers", "plain", '"; DROP TABLE chat_message; --'),
    ("brackets", "match [a-z]* here", "plain"),
    ("escapes", "plain", "50\\% off_now"),
]
NEEDLES = [
    "%", "_", "'", "\\", '"', "%_", "\\%", "' OR '1'='1", "x' OR '1'='1", "'; DROP TABLE",
    "DROP TABLE chat_session", '"; DROP TABLE chat_message; --', "--", "[a-z]", "*", "' --",
    "%' OR 1=1 --", "select * from chat_session", "done", "O'Brien",
]
MARKER = "Robert'); DROP TABLE chat_session;--"


@pytest.fixture
def sql_log() -> Iterator[list[logging.LogRecord]]:
    """Every statement tortoise sends (it logs `query: values` at DEBUG)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("tortoise.db_client")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)


async def _search(api: httpx.AsyncClient, q: str) -> set[int]:
    response = await api.get("/api/chat/sessions", params={"q": q, "limit": 200})
    assert response.status_code == 200, (q, response.text)
    return {s["id"] for s in response.json()["items"]}


async def test_q_matches_only_rows_that_contain_the_text_literally(
    db: str, api: httpx.AsyncClient
) -> None:
    texts: dict[int, list[str]] = {}
    for title, question, reply in ROWS:
        session = await conversation(title, (question, reply))
        texts[session.id] = [title, question, reply]
    for needle in NEEDLES:
        expected = {i for i, row in texts.items() if any(needle.lower() in t.lower() for t in row)}
        assert await _search(api, needle) == expected, needle
    assert await ChatSession.all().count() == len(ROWS)  # the tables are all still there
    assert await ChatMessage.all().count() == 2 * len(ROWS)


async def test_q_reaches_the_database_as_a_bound_parameter(
    db: str, api: httpx.AsyncClient, sql_log: list[logging.LogRecord]
) -> None:
    target = await conversation(MARKER, ("q", "a"))
    await conversation("other", ("q", "a"))
    sql_log.clear()
    assert await _search(api, MARKER) == {target.id}
    searches = [r for r in sql_log if "LIKE" in str(r.args[0] if r.args else r.msg).upper()]
    assert searches, "the search statement was not seen"
    for record in searches:
        sql, values = record.args  # type: ignore[misc]
        assert MARKER not in str(sql) and "DROP" not in str(sql).upper()
        bound = escape_like(MARKER).upper()  # LIKE's own wildcards escaped, then bound
        assert any(bound in str(v).upper() for v in values), values
