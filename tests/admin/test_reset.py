"""Reset (seed 000 §4.3.5) and memory: the Bridge's side, the database's side, and refusals."""

from __future__ import annotations

import httpx

from core import sessions, tree
from core.models import MessageStatus
from tests.admin.builders import conversation, running_turn
from tests.fakes.fake_bridge import FakeBridge


async def test_reset_keeps_history_by_default(
    db: str, api: httpx.AsyncClient, fake_bridge: FakeBridge
) -> None:
    session = await conversation("r", ("q", "a"))
    fake_bridge.agents.add(session.hermes_session)
    before = (await api.get(f"/api/chat/sessions/{session.id}")).json()["messages"]

    response = await api.post(f"/api/chat/sessions/{session.id}/reset")
    assert response.status_code == 200
    body = response.json()
    assert (body["agentDropped"], body["keptHistory"]) == (True, True)
    renewed = body["session"]["hermesSession"]
    assert renewed.startswith("chat-") and renewed != session.hermes_session
    assert [r.path for r in fake_bridge.requests_to("POST", "/sessions/")] == [
        f"/sessions/{session.hermes_session}/reset"
    ]
    assert (await api.get(f"/api/chat/sessions/{session.id}")).json()["messages"] == before


async def test_reset_without_history_starts_afresh_and_loses_nothing(
    db: str, api: httpx.AsyncClient, fake_bridge: FakeBridge
) -> None:
    session = await conversation("r", ("q1", "a1"), ("q2", "a2"))
    old_ids = await tree.active_branch_ids(session.id)
    body = (await api.post(f"/api/chat/sessions/{session.id}/reset", json={"keepHistory": False})).json()
    assert (body["agentDropped"], body["keptHistory"]) == (False, False)
    assert body["session"]["lastMessagePreview"] is None
    assert (await api.get(f"/api/chat/sessions/{session.id}")).json()["messages"] == []

    # The next message starts a new conversation; the old one is a version away.
    fresh = await tree.append_user(session.id, "new start")
    assert (fresh.parent_id, fresh.branch_order) == (None, 1)
    versions = (await api.get(f"/api/chat/messages/{fresh.id}/versions")).json()
    assert [(v["messageId"], v["isActive"]) for v in versions] == [(old_ids[0], False), (fresh.id, True)]
    await api.post(f"/api/chat/messages/{old_ids[0]}/activate")
    restored = (await api.get(f"/api/chat/sessions/{session.id}")).json()["messages"]
    assert [m["id"] for m in restored] == old_ids
    export = await api.get(f"/api/chat/sessions/{session.id}/export?format=json&branch=all")
    assert len(export.json()["messages"]) == 5


async def test_reset_refuses_while_a_run_is_in_flight(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("r")
    await running_turn(session.id, "busy?", MessageStatus.QUEUED)
    response = await api.post(f"/api/chat/sessions/{session.id}/reset", json={"keepHistory": True})
    assert response.status_code == 409 and response.json()["code"] == "busy"
    assert (await sessions.get_session(session.id)).hermes_session == session.hermes_session


async def test_reset_with_the_bridge_down_is_503_and_changes_nothing(
    db: str, api: httpx.AsyncClient, bridge_down: FakeBridge
) -> None:
    session = await conversation("r", ("q", "a"))
    response = await api.post(f"/api/chat/sessions/{session.id}/reset", json={"keepHistory": False})
    assert response.status_code == 503
    error = response.json()
    assert error["code"] == "bridge_unavailable" and "did not answer" in error["message"]
    unchanged = await sessions.get_session(session.id)
    assert unchanged.hermes_session == session.hermes_session
    assert len(await tree.active_branch_ids(session.id)) == 2


async def test_reset_when_the_bridge_fails_is_503(
    db: str, api: httpx.AsyncClient, fake_bridge: FakeBridge
) -> None:
    session = await conversation("r")
    fake_bridge.fail("reset", 500)
    response = await api.post(f"/api/chat/sessions/{session.id}/reset")
    assert (response.status_code, response.json()["code"]) == (503, "bridge_unavailable")


async def test_memory_reads_the_bridge_for_the_current_hermes_session(
    db: str, api: httpx.AsyncClient, fake_bridge: FakeBridge
) -> None:
    session = await conversation("m")
    fake_bridge.memory[session.hermes_session] = {"memory": "- likes tea", "user": "name: Ann"}
    response = await api.get(f"/api/chat/sessions/{session.id}/memory")
    assert response.status_code == 200
    assert response.json() == {
        "hermesSession": session.hermes_session, "memory": "- likes tea", "user": "name: Ann",
    }


async def test_memory_with_the_bridge_down_is_503(
    db: str, api: httpx.AsyncClient, bridge_down: FakeBridge
) -> None:
    session = await conversation("m")
    response = await api.get(f"/api/chat/sessions/{session.id}/memory")
    assert (response.status_code, response.json()["code"]) == (503, "bridge_unavailable")
