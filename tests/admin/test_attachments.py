"""A user message's files in the admin API: listed on the message in the session detail and in
both exports, downloaded with their type and a safe Content-Disposition, deleted with the
session; an id of nothing (or of another session's file) is a 404 with a JSON code."""

from __future__ import annotations

import hashlib
import json

import httpx
import pytest

from core.chat import attachment_store
from core.chat.attachments import INLINE_CHARS, StoredFile, kept
from core.store.models import Attachment, ChatMessage, Role
from tests.admin.builders import conversation
from tests.files import PNG

FILES = [StoredFile("shot.png", "image/png", PNG),
         StoredFile("résumé.md", "text/markdown", b"# CV", "# CV")]


async def with_files(title: str) -> tuple[int, int]:
    """A session whose first user message came with FILES: (session id, message id)."""
    session = await conversation(title, ("look at these", "seen"))
    user = await ChatMessage.get(session_id=session.id, role=Role.USER)
    await attachment_store.save(user.id, FILES)
    return session.id, user.id


async def test_the_detail_lists_the_files_on_the_user_message(db: str, api: httpx.AsyncClient) -> None:
    session_id, _ = await with_files("files")
    detail = (await api.get(f"/api/chat/sessions/{session_id}")).json()
    user, answer = detail["messages"]
    ids = [a.pop("id") for a in user["attachments"]]
    assert user["attachments"] == [
        {"name": "shot.png", "mimeType": "image/png", "size": len(PNG),
         "sha256": hashlib.sha256(PNG).hexdigest()},
        {"name": "résumé.md", "mimeType": "text/markdown", "size": 4,
         "sha256": hashlib.sha256(b"# CV").hexdigest()},
    ]
    assert len(set(ids)) == 2 and answer["attachments"] is None
    page = (await api.get(f"/api/chat/sessions/{session_id}/messages")).json()
    assert [a["name"] for a in page["messages"][0]["attachments"]] == ["shot.png", "résumé.md"]


async def test_a_file_downloads_as_it_was_sent(db: str, api: httpx.AsyncClient) -> None:
    session_id, message_id = await with_files("files")
    image, notes = await Attachment.filter(message_id=message_id).order_by("position")
    got = await api.get(f"/api/chat/sessions/{session_id}/attachments/{image.id}")
    assert got.status_code == 200 and got.content == PNG
    assert got.headers["content-type"] == "image/png"
    assert got.headers["content-disposition"] == 'attachment; filename="shot.png"'
    assert got.headers["x-content-type-options"] == "nosniff"
    named = await api.get(f"/api/chat/sessions/{session_id}/attachments/{notes.id}")
    assert named.headers["content-disposition"] == (
        "attachment; filename=\"resume.md\"; filename*=UTF-8''r%C3%A9sum%C3%A9.md")


async def test_a_file_of_nothing_or_of_another_session_is_not_found(
    db: str, api: httpx.AsyncClient
) -> None:
    session_id, message_id = await with_files("mine")
    other, _ = await with_files("theirs")
    image = await Attachment.filter(message_id=message_id).first()
    assert image is not None
    for path in (f"/api/chat/sessions/{other}/attachments/{image.id}",
                 f"/api/chat/sessions/{session_id}/attachments/999999",
                 f"/api/chat/sessions/999999/attachments/{image.id}"):
        response = await api.get(path)
        assert response.status_code == 404, path
        assert response.json()["code"] == "not_found"


@pytest.mark.backend  # a NUL or an over-long type is what PostgreSQL refuses in a row
async def test_a_type_stored_before_it_was_checked_downloads_safely(
    db: str, api: httpx.AsyncClient
) -> None:
    """A row whose type came as the platform declared it (a CR LF and a header after it): the
    download is whole, as application/octet-stream, and the listing and exports say so."""
    session_id, message_id = await with_files("old")
    notes = await Attachment.get(message_id=message_id, position=1)
    await Attachment.filter(id=notes.id).update(mime_type="text/markdown\r\nX-Evil: 1")
    got = await api.get(f"/api/chat/sessions/{session_id}/attachments/{notes.id}")
    assert got.status_code == 200 and got.content == b"# CV" and "x-evil" not in got.headers
    assert got.headers["content-type"] == "application/octet-stream"
    detail = (await api.get(f"/api/chat/sessions/{session_id}")).json()
    assert detail["messages"][0]["attachments"][1]["mimeType"] == "application/octet-stream"
    md = (await api.get(f"/api/chat/sessions/{session_id}/export?format=md")).text
    assert "📎 `résumé.md` · application/octet-stream · 4 bytes" in md


@pytest.mark.backend  # a NUL or an over-long type is what PostgreSQL refuses in a row
async def test_the_store_keeps_a_safe_type_and_the_text_that_can_be_sent(db: str) -> None:
    """Whoever builds the files (an edit copies them), what is written is bounded."""
    session = await conversation("kept", ("look", "seen"))
    user = await ChatMessage.get(session_id=session.id, role=Role.USER)
    text = "x" * (INLINE_CHARS * 2)
    await attachment_store.save(user.id, [StoredFile("a.log", "text/plain\x00", b"x", text)])
    row = await Attachment.get(message_id=user.id)
    assert row.mime_type == "application/octet-stream" and row.text == kept(text)
    assert len(row.text) <= INLINE_CHARS


async def test_exports_list_the_files(db: str, api: httpx.AsyncClient) -> None:
    session_id, _ = await with_files("files")
    md = (await api.get(f"/api/chat/sessions/{session_id}/export?format=md")).text
    assert f"📎 `shot.png` · image/png · {len(PNG)} bytes · sha256 {hashlib.sha256(PNG).hexdigest()}" in md
    assert "📎 `résumé.md` · text/markdown · 4 bytes" in md
    exported = json.loads((await api.get(f"/api/chat/sessions/{session_id}/export?format=json")).text)
    user, answer = exported["messages"]
    assert [(a["name"], a["mimeType"], a["size"]) for a in user["attachments"]] == [
        ("shot.png", "image/png", len(PNG)), ("résumé.md", "text/markdown", 4)]
    assert "attachments" not in answer


async def test_deleting_the_session_deletes_its_files(db: str, api: httpx.AsyncClient) -> None:
    session_id, _ = await with_files("bye")
    other, _ = await with_files("stays")
    assert (await api.delete(f"/api/chat/sessions/{session_id}")).status_code == 204
    assert await Attachment.all().count() == 2
    assert await Attachment.filter(message__session_id=other).count() == 2
