"""Sessions through the real server: create, detail, change, delete."""

from __future__ import annotations

import httpx

from core.store.models import ChatMessage, ChatMessageLog, MessageStatus, Platform
from tests.admin.builders import conversation, running_turn, store_logs, thinking_events


async def test_create_with_catalogue_choices_and_read_it_back(db: str, api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/api/chat/sessions",
        json={"title": "Release\nplanning", "modelId": "deep", "skillFolder": "code-review"},
    )
    assert response.status_code == 201
    created = response.json()
    assert created["title"] == "Release planning"  # newlines folded, as the bots do
    assert (created["modelId"], created["skillFolder"], created["status"]) == (
        "deep", "code-review", "ACTIVE"
    )
    assert created["hermesSession"].startswith("chat-")
    assert created["bindings"] == [] and created["hasActiveRun"] is False
    assert created["lastMessagePreview"] is None
    detail = await api.get(f"/api/chat/sessions/{created['id']}")
    assert detail.status_code == 200
    nothing = {"calls": 0, "promptTokens": 0, "completionTokens": 0, "cachedTokens": 0,
               "tokens": 0, "cost": None}
    assert detail.json() == {"session": created, "messages": [], "usage": nothing,
                             "channelSettings": {}}


async def test_create_with_nothing_chosen(db: str, api: httpx.AsyncClient) -> None:
    created = (await api.post("/api/chat/sessions", json={})).json()
    assert (created["title"], created["modelId"], created["skillFolder"]) == (None, None, None)


async def test_detail_holds_the_active_branch_with_bindings(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation(
        "Deploys", ("how?", "blue/green"), ("rollback?", "flip it"), platform=Platform.DISCORD,
        thread="T9",
    )
    body = (await api.get(f"/api/chat/sessions/{session.id}")).json()
    assert body["session"]["bindings"] == [
        {"platform": "discord", "workspace": "W1", "channel": "C1", "thread": "T9"}
    ]
    messages = body["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("USER", "how?"), ("ASSISTANT", "blue/green"), ("USER", "rollback?"), ("ASSISTANT", "flip it"),
    ]
    assert [m["parentId"] for m in messages] == [None] + [m["id"] for m in messages[:-1]]
    assert all(m["isActive"] and m["sessionId"] == session.id for m in messages)
    user, assistant = messages[0], messages[1]
    assert (user["logs"], user["thinking"]) == (None, None)
    assert assistant["logs"] == [] and assistant["thinking"]["finalText"] is None
    assert body["session"]["lastMessagePreview"] == "flip it"


async def test_patch_changes_only_what_it_names(db: str, api: httpx.AsyncClient) -> None:
    created = (await api.post("/api/chat/sessions", json={"title": "t", "modelId": "fast"})).json()
    url = f"/api/chat/sessions/{created['id']}"

    renamed = (await api.patch(url, json={"title": "  New\r\nname "})).json()
    assert (renamed["title"], renamed["modelId"]) == ("New name", "fast")
    assert renamed["updatedAt"] > created["updatedAt"]

    changed = (await api.patch(url, json={"modelId": "deep", "skillFolder": "code-review"})).json()
    assert (changed["title"], changed["modelId"], changed["skillFolder"]) == (
        "New name", "deep", "code-review"
    )
    cleared = (await api.patch(url, json={"modelId": None, "skillFolder": None})).json()
    assert (cleared["modelId"], cleared["skillFolder"]) == (None, None)

    archived = (await api.patch(url, json={"status": "ARCHIVED"})).json()
    assert archived["status"] == "ARCHIVED" and archived["title"] == "New name"
    unchanged = await api.patch(url, json={})
    assert unchanged.status_code == 200 and unchanged.json()["status"] == "ARCHIVED"


async def test_a_refused_patch_changes_nothing(db: str, api: httpx.AsyncClient) -> None:
    created = (await api.post("/api/chat/sessions", json={"title": "keep"})).json()
    url = f"/api/chat/sessions/{created['id']}"
    response = await api.patch(url, json={"title": "changed?", "skillFolder": "missing"})
    assert response.status_code == 400 and response.json()["field"] == "skillFolder"
    assert (await api.get(url)).json()["session"]["title"] == "keep"


async def test_delete_removes_the_session_with_every_message_and_log(
    db: str, api: httpx.AsyncClient
) -> None:
    session = await conversation("bye", ("a", "b"), ("c", "d"))
    answer = await ChatMessage.filter(session_id=session.id, role="ASSISTANT").first()
    assert answer is not None
    await store_logs(answer.id, thinking_events())
    other = await conversation("stays", ("e", "f"))

    response = await api.delete(f"/api/chat/sessions/{session.id}")
    assert response.status_code == 204 and response.content == b""
    assert (await api.get(f"/api/chat/sessions/{session.id}")).status_code == 404
    assert (await api.delete(f"/api/chat/sessions/{session.id}")).status_code == 404
    assert await ChatMessage.filter(session_id=session.id).count() == 0
    assert await ChatMessageLog.all().count() == 0
    assert await ChatMessage.filter(session_id=other.id).count() == 2


async def test_delete_refuses_while_a_run_is_in_flight(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("busy", ("a", "b"))
    answer = await running_turn(session.id, "still going?", MessageStatus.RUNNING)
    response = await api.delete(f"/api/chat/sessions/{session.id}")
    assert (response.status_code, response.json()["code"]) == (409, "busy")
    assert "stop it" in response.json()["message"]
    assert await ChatMessage.filter(session_id=session.id).count() == 4
    await ChatMessage.filter(id=answer.id).update(status=MessageStatus.STOPPED)
    assert (await api.delete(f"/api/chat/sessions/{session.id}")).status_code == 204
