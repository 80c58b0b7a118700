"""Reset (seed 000 §4.3.5) and memory: the Bridge's side, the database's side, and refusals."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from core.chat import sessions, tree
from core.store.models import MessageStatus
from tests.admin.builders import conversation, running_turn
from tests.admin.server import poll_until
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


@pytest.mark.backend  # the session row's lock against a run starting
async def test_reset_refuses_while_a_run_is_in_flight_and_leaves_the_bridge_alone(
    db: str, api: httpx.AsyncClient, fake_bridge: FakeBridge
) -> None:
    session = await conversation("r")
    fake_bridge.agents.add(session.hermes_session)
    await running_turn(session.id, "busy?", MessageStatus.QUEUED)
    response = await api.post(f"/api/chat/sessions/{session.id}/reset", json={"keepHistory": True})
    assert response.status_code == 409 and response.json()["code"] == "busy"
    assert (await sessions.get_session(session.id)).hermes_session == session.hermes_session
    assert fake_bridge.requests_to("POST", "/sessions/") == []
    assert session.hermes_session in fake_bridge.agents


@pytest.mark.backend  # the session row's lock against a run starting
async def test_a_run_that_starts_while_the_bridge_drops_the_agent_finds_the_reset_done(
    db: str, api: httpx.AsyncClient, fake_bridge: FakeBridge
) -> None:
    """The database is reset before the Bridge is called: a run that starts while the Bridge
    answers runs under the new Bridge session, and the reset is not refused after the fact."""
    session = await conversation("r", ("q", "a"))
    fake_bridge.agents.add(session.hermes_session)
    gate = fake_bridge.hold("reset")
    try:
        reset = asyncio.create_task(api.post(f"/api/chat/sessions/{session.id}/reset"))

        async def bridge_called() -> bool:
            return bool(fake_bridge.requests_to("POST", "/sessions/")) or reset.done()

        await poll_until(bridge_called)
        await running_turn(session.id, "a run starts meanwhile", MessageStatus.RUNNING)
    finally:
        gate.set()
    response = await reset
    assert response.status_code == 200, response.text
    assert response.json()["agentDropped"] is True
    renewed = await sessions.get_session(session.id)
    assert renewed.hermes_session == response.json()["session"]["hermesSession"]
    assert renewed.hermes_session != session.hermes_session


async def test_reset_with_the_bridge_down_is_done_and_says_the_agent_was_not_dropped(
    db: str, api: httpx.AsyncClient, bridge_down: FakeBridge, caplog: pytest.LogCaptureFixture
) -> None:
    session = await conversation("r", ("q", "a"))
    with caplog.at_level(logging.WARNING, logger="core.conversation.session_commands"):
        response = await api.post(f"/api/chat/sessions/{session.id}/reset",
                                  json={"keepHistory": False})
    assert response.status_code == 200
    body = response.json()
    assert (body["agentDropped"], body["keptHistory"], body["bridgeReached"]) == (False, False, False)
    renewed = await sessions.get_session(session.id)
    assert renewed.hermes_session == body["session"]["hermesSession"] != session.hermes_session
    assert await tree.active_branch_ids(session.id) == []  # the whole reset, not half of it
    [logged] = [r.getMessage() for r in caplog.records if r.name == "core.conversation.session_commands"]
    assert session.hermes_session in logged and "did not answer" in logged


async def test_reset_when_the_bridge_fails_is_done_and_logs_the_bridge_answer(
    db: str, api: httpx.AsyncClient, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture
) -> None:
    session = await conversation("r")
    fake_bridge.fail("reset", 500)
    with caplog.at_level(logging.WARNING, logger="core.conversation.session_commands"):
        response = await api.post(f"/api/chat/sessions/{session.id}/reset")
    assert response.status_code == 200 and response.json()["bridgeReached"] is False
    [logged] = [r.getMessage() for r in caplog.records if r.name == "core.conversation.session_commands"]
    assert "500" in logged and f"/sessions/{session.hermes_session}/reset" in logged


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
