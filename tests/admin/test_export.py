"""Export downloads: streamed (chunked), named safely for any title, Markdown or JSON."""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given
from tortoise import connections
from hypothesis import strategies as st

from admin.sessions.export import content_disposition
from core.chat import sessions, tree
from core.store.models import ChatMessage, ChatSession, MessageStatus, Role
from tests.admin.builders import conversation
from tests.admin.server import poll_until
from tests.conftest import BACKEND


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        (None, 'attachment; filename="conversation.md"'),
        ("Deploy plan", 'attachment; filename="deploy-plan.md"'),
        ('He said "hi"\r\nbye', 'attachment; filename="he-said-hi-bye.md"'),
        ("../../etc/passwd", 'attachment; filename="etc-passwd.md"'),
        ("部署计划 v2", (
            "attachment; filename=\"v2.md\"; "
            "filename*=UTF-8''%E9%83%A8%E7%BD%B2%E8%AE%A1%E5%88%92%20v2.md"
        )),
        ("Café ☕", "attachment; filename=\"cafe.md\"; filename*=UTF-8''Caf%C3%A9%20%E2%98%95.md"),
    ],
)
def test_content_disposition_for_awkward_titles(title: str | None, expected: str) -> None:
    assert content_disposition(title, "md") == expected


@given(st.one_of(st.none(), st.text(max_size=300)), st.sampled_from(["md", "json"]))
def test_content_disposition_is_a_safe_header_for_any_title(title: str | None, fmt: str) -> None:
    header = content_disposition(title, fmt)
    assert header.isascii() and header.isprintable()  # no CR/LF, nothing to split a header with
    parts = header.split("; ")
    assert parts[0] == "attachment"
    name = parts[1].removeprefix('filename="').removesuffix('"')
    assert '"' not in name and "/" not in name and name.endswith(f".{fmt}")
    if len(parts) == 3:
        full = unquote(parts[2].removeprefix("filename*=UTF-8''"), errors="strict")
        assert full.endswith(f".{fmt}") and not full.isascii()
        assert not any(c in full for c in '/\\"') and all(c.isprintable() for c in full)


async def test_export_streams_markdown_with_a_safe_unicode_file_name(
    db: str, api: httpx.AsyncClient
) -> None:
    session = await conversation('发布 "v2"\nplan', ("how do we ship?", "carefully"))
    async with api.stream("GET", f"/api/chat/sessions/{session.id}/export") as response:
        assert response.status_code == 200
        assert response.headers["transfer-encoding"] == "chunked"
        assert "content-length" not in response.headers
        assert response.headers["content-type"].startswith("text/markdown")
        text = (await response.aread()).decode()
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"v2-plan.md\"; filename*=UTF-8''%E5%8F%91%E5%B8%83%20v2%20plan.md"
    )
    assert text.startswith('# 发布 "v2" plan') and "how do we ship?" in text and "carefully" in text


async def test_export_json_of_every_version(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("versions", ("q", "a"))
    first = (await tree.active_branch_ids(session.id))[0]
    await tree.edit(first, "q, edited")
    active = await api.get(f"/api/chat/sessions/{session.id}/export", params={"format": "json"})
    every = await api.get(
        f"/api/chat/sessions/{session.id}/export", params={"format": "json", "branch": "all"}
    )
    assert active.headers["content-type"].startswith("application/json")
    assert active.headers["content-disposition"] == 'attachment; filename="versions.json"'
    assert [m["content"] for m in active.json()["messages"]] == ["q, edited"]
    assert [m["content"] for m in every.json()["messages"]] == ["q", "a", "q, edited"]
    assert every.json()["session"]["branch"] == "all"


@pytest.mark.backend  # the export's pages of messages, read by SQL
async def test_a_long_conversation_exports_whole(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("long", *[(f"question {i}", f"answer {i}") for i in range(120)])
    response = await api.get(f"/api/chat/sessions/{session.id}/export", params={"format": "json"})
    messages = response.json()["messages"]  # more than one page of the export (200 messages)
    assert len(messages) == 240 and messages[-1]["content"] == "answer 119"


async def test_a_bad_export_fails_before_anything_streams(db: str, api: httpx.AsyncClient) -> None:
    missing = await api.get("/api/chat/sessions/77/export")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    assert "content-disposition" not in missing.headers


async def big_session(count: int, size: int) -> int:
    """A session of `count` messages of `size` characters in one branch (many export pages)."""
    session = (await sessions.create_session(title="big")).id
    await ChatMessage.bulk_create(
        [ChatMessage(id=i, session_id=session, parent_id=i - 1 if i > 1 else None,
                     role=Role.USER if i % 2 else Role.ASSISTANT,
                     status=MessageStatus.SENT if i % 2 else MessageStatus.SUCCESS,
                     content=f"message {i} " + "x" * size)
         for i in range(1, count + 1)],
        batch_size=500,
    )
    return session


@pytest.mark.parametrize("format_", ["json", "md"])
async def test_a_session_deleted_while_its_export_streams_is_exported_whole(
    db: str, api: httpx.AsyncClient, format_: str
) -> None:
    """The export reads one snapshot: a delete that lands between its pages (the download
    held after its first chunk) takes the session away, not the end of the document."""
    count = 2000  # 10 pages of the export, 20 MB: far more than the sockets buffer
    session = await big_session(count, 10_000)
    url = f"/api/chat/sessions/{session}/export"
    async with api.stream("GET", url, params={"format": format_}) as response:
        assert response.status_code == 200
        chunks = response.aiter_bytes()
        first = await anext(chunks)
        deleted = await api.delete(f"/api/chat/sessions/{session}")
        assert not await snapshot_released(), "the delete landed while the export reads"
        text = (first + b"".join([chunk async for chunk in chunks])).decode()
    assert deleted.status_code == 204
    assert await ChatSession.filter(id=session).count() == 0
    if format_ == "json":
        messages = json.loads(text)["messages"]
        assert [m["id"] for m in messages] == list(range(1, count + 1))
    said = [int(n) for n in re.findall(r"message (\d+) x", text)]
    assert said == list(range(1, count + 1))


async def snapshot_released() -> bool:
    """No export holds a snapshot any more. SQLite: the log can be checkpointed whole (a
    reader whose snapshot is older than the last write holds it back); PostgreSQL: no other
    connection holds the lock a reading transaction keeps on `chat_message` to its end."""
    db = connections.get("default")
    if BACKEND == "sqlite":
        _, rows = await db.execute_query("PRAGMA wal_checkpoint(TRUNCATE)")
        return tuple(rows[0])[0] == 0  # busy: 0
    _, rows = await db.execute_query(
        "SELECT count(*) AS n FROM pg_locks JOIN pg_class ON pg_class.oid = pg_locks.relation "
        "WHERE pg_class.relname = 'chat_message' AND pg_locks.pid <> pg_backend_pid() "
        "AND pg_locks.database = (SELECT oid FROM pg_database WHERE datname = current_database())")
    return rows[0]["n"] == 0


async def test_a_download_abandoned_midway_lets_go_of_its_snapshot(
    db: str, api: httpx.AsyncClient
) -> None:
    session = await big_session(2000, 10_000)

    async def held() -> bool:
        return not await snapshot_released()

    async with api.stream("GET", f"/api/chat/sessions/{session}/export") as response:
        chunks = response.aiter_bytes()  # kept: a dropped iterator closes the response
        await anext(chunks)
        await ChatSession.filter(id=session).update(title="renamed")  # newer than the snapshot
        await poll_until(held)  # the export reads on its snapshot, held up by this client
    await poll_until(snapshot_released)  # the client went away: the server ended the read
