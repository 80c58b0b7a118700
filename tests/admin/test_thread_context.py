"""A user message's thread context in the admin API: the session detail lists it on the
message (`threadContext`), both exports show it, and an edit of the message (the admin's
edit route) keeps it on the new version."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx

from core.chat.thread_context import EarlierMessage, to_stored
from core.store.models import ChatMessage, Role
from tests.admin.builders import conversation

AT = datetime(2026, 11, 30, 8, 15, tzinfo=UTC)
CONTEXT = to_stored([
    EarlierMessage("alice", "the deploy failed", AT, id="1"),
    EarlierMessage("ci", "build 41 red", AT, ("log.txt",), bot=True, id="2"),
])


async def with_context(title: str) -> tuple[int, int]:
    """A session whose first user message came with CONTEXT: (session id, message id)."""
    session = await conversation(title, ("what now?", "retry"), ("and then?", "done"))
    user = await ChatMessage.filter(session_id=session.id, role=Role.USER).order_by("id").first()
    assert user is not None
    await ChatMessage.filter(id=user.id).update(thread_context=CONTEXT)
    return session.id, user.id


async def test_the_detail_shows_the_context_on_its_user_message(db: str, api: httpx.AsyncClient) -> None:
    session_id, _ = await with_context("context")
    detail = (await api.get(f"/api/chat/sessions/{session_id}")).json()
    first, answer, second, _ = detail["messages"]
    assert first["threadContext"] == [
        {"author": "alice", "text": "the deploy failed", "at": "2026-11-30T08:15:00Z",
         "files": [], "bot": False},
        {"author": "ci", "text": "build 41 red", "at": "2026-11-30T08:15:00Z",
         "files": ["log.txt"], "bot": True},
    ]
    assert second["threadContext"] == [] and answer["threadContext"] is None


async def test_exports_show_the_context(db: str, api: httpx.AsyncClient) -> None:
    session_id, _ = await with_context("context")
    md = (await api.get(f"/api/chat/sessions/{session_id}/export?format=md")).text
    assert "> **Earlier in the thread** (given to the agent as context)" in md
    assert "> [2026-11-30 08:15 UTC] alice: the deploy failed" in md
    assert "> [2026-11-30 08:15 UTC] ci (bot): build 41 red\n>   📎 log.txt" in md
    assert md.index("Earlier in the thread") < md.index("what now?")
    exported = json.loads((await api.get(f"/api/chat/sessions/{session_id}/export?format=json")).text)
    first, answer, second, _ = exported["messages"]
    assert [(c["author"], c["text"], c["at"], c["bot"]) for c in first["threadContext"]] == [
        ("alice", "the deploy failed", "2026-11-30T08:15:00+00:00", False),
        ("ci", "build 41 red", "2026-11-30T08:15:00+00:00", True)]
    assert "threadContext" not in answer and "threadContext" not in second


async def test_an_edit_keeps_the_context(db: str, api: httpx.AsyncClient) -> None:
    session_id, message_id = await with_context("context")
    response = await api.patch(f"/api/chat/messages/{message_id}", json={"content": "what else?"})
    assert response.status_code == 200, response.text
    edited = await ChatMessage.get(id=response.json()["newMessageId"])
    assert edited.thread_context == CONTEXT
