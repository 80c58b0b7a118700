"""Export downloads: streamed (chunked), named safely for any title, Markdown or JSON."""

from __future__ import annotations

from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from admin.sessions.export import content_disposition
from core import tree
from tests.admin.builders import conversation


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
