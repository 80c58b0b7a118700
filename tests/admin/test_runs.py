"""Starting runs over HTTP: the answer, where the message goes, and every refusal."""

from __future__ import annotations

import httpx
import pytest

from core.chat import sessions, tree
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, MessageStatus, Role
from tests.admin.builders import conversation
from tests.core.runtime.waiting import finished
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, text_reply


def _runs(session_id: int) -> str:
    return f"/api/chat/sessions/{session_id}/runs"


def _stall(fake_bridge: FakeBridge) -> None:
    """Every run holds (the Bridge sends keep-alives) until `fake_bridge.release(run_id)`."""
    fake_bridge.default_script = lambda run_id: [
        Stall(run_id, heartbeat=0.2), ev("done", final_text=f"answer of {run_id}"),
    ]


async def test_a_run_started_over_http_answers_and_is_stored(
    pool_api: httpx.AsyncClient, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Paris."))
    session = await sessions.create_session()
    response = await pool_api.post(_runs(session.id), json={
        "message": "Capital of France?", "modelId": "scripted", "skillFolder": "readme-gen",
        "maxIterations": 3,
    })
    assert response.status_code == 201, response.text
    started = response.json()
    assert set(started) == {"runId", "sessionId", "messageId", "userMessageId", "status", "position"}
    assert (started["sessionId"], started["status"], started["position"]) == (
        session.id, "RUNNING", None)

    done = await finished(pool, started["runId"])
    assert done.status == MessageStatus.SUCCESS
    answer = await ChatMessage.get(id=started["messageId"])
    user = await ChatMessage.get(id=started["userMessageId"])
    assert (user.role, user.content, answer.parent_id) == (Role.USER, "Capital of France?", user.id)
    assert (answer.content, answer.model_id, answer.skill_folder) == ("Paris.", "scripted", "readme-gen")
    state = (await pool_api.get(f"/api/chat/runs/{started['runId']}/state")).json()
    assert (state["status"], state["thinking"]["finalText"], state["pendingClarify"]) == (
        "SUCCESS", "Paris.", None)


async def test_a_second_message_while_a_run_is_in_flight_is_409_busy(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    _stall(fake_bridge)
    session = await sessions.create_session()
    first = (await fake_pool_api.post(_runs(session.id), json={"message": "one"})).json()
    second = await fake_pool_api.post(_runs(session.id), json={"message": "two"})
    assert (second.status_code, second.json()["code"]) == (409, "busy")
    assert first["runId"] in second.json()["message"]
    assert await ChatMessage.filter(session_id=session.id).count() == 2  # nothing written
    fake_bridge.release(first["runId"])
    await finished(fake_pool, first["runId"])
    again = await fake_pool_api.post(_runs(session.id), json={"message": "two"})
    assert again.status_code == 201


async def test_parent_message_id_places_the_message(
    fake_pool_api: httpx.AsyncClient, fake_pool: RunPool
) -> None:
    session = await conversation("t", ("q1", "a1"), ("q2", "a2"))
    q1, a1, q2, a2 = await tree.active_branch_ids(session.id)

    async def start(body: dict[str, object]) -> dict[str, int]:
        response = await fake_pool_api.post(_runs(session.id), json=body)
        assert response.status_code == 201, response.text
        started = response.json()
        await finished(fake_pool, started["runId"])
        return started

    # The leaf: the same as leaving it out.
    leaf = await start({"message": "q3", "parentMessageId": a2})
    assert (await ChatMessage.get(id=leaf["userMessageId"])).parent_id == a2
    # An assistant message further up: a new version of the turn after it.
    branch = await start({"message": "q2, asked again", "parentMessageId": a1})
    assert [v.id for v in await tree.versions(q2)] == [q2, branch["userMessageId"]]
    assert await tree.active_branch_ids(session.id) == [
        q1, a1, branch["userMessageId"], branch["messageId"]]
    # An edit's new user message (PATCH made it; no run yet): answered as it is.
    edited = (await fake_pool_api.patch(f"/api/chat/messages/{q1}", json={"content": "q1 v2"})).json()
    answer = await start({"message": "q1 v2", "parentMessageId": edited["newMessageId"]})
    assert answer["userMessageId"] == edited["newMessageId"]
    assert await tree.active_branch_ids(session.id) == [edited["newMessageId"], answer["messageId"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "message"),
        ({"message": "  \n"}, "message"),
        ({"message": "a\x00b"}, "message"),
        ({"message": 5}, "message"),
        ({"message": "hi", "modelId": "gpt-99"}, "modelId"),
        ({"message": "hi", "skillFolder": "nope"}, "skillFolder"),
        ({"message": "hi", "maxIterations": 0}, "maxIterations"),
        ({"message": "hi", "maxIterations": 501}, "maxIterations"),
        ({"message": "hi", "maxIterations": "3"}, "maxIterations"),
        ({"message": "hi", "parentMessageId": 0}, "parentMessageId"),
        ({"message": "hi", "parentMessageId": 999}, "parentMessageId"),
        ({"message": "hi", "parentMessageId": "OTHER"}, "parentMessageId"),
        ({"message": "hi", "parentMessageId": "SUMMARY"}, "parentMessageId"),
        ({"message": "not q", "parentMessageId": "USER"}, "message"),
        ({"message": "hi", "queue": True}, "queue"),
    ],
)
async def test_bad_starts_are_400_naming_the_field_and_write_nothing(
    fake_pool_api: httpx.AsyncClient, body: dict[str, object], field: str
) -> None:
    session = await conversation("t", ("q", "a"))
    other = await conversation("other", ("x", "y"))
    user, assistant = await tree.active_branch_ids(session.id)
    summary = await tree.add_summary(session.id, assistant, "so far")
    named = {"OTHER": (await tree.active_branch_ids(other.id))[0], "SUMMARY": summary.id, "USER": user}
    if isinstance(body.get("parentMessageId"), str):
        body = {**body, "parentMessageId": named[str(body["parentMessageId"])]}
    response = await fake_pool_api.post(_runs(session.id), json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert (error["code"], error["field"]) == ("invalid_input", field)
    assert error["message"].startswith(f"{field}: ")
    assert await ChatMessage.filter(session_id=session.id).count() == 3


async def test_unknown_sessions_are_404_and_a_missing_token_401(
    fake_pool_api: httpx.AsyncClient, fake_pool_url: str
) -> None:
    response = await fake_pool_api.post(_runs(4242), json={"message": "hi"})
    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    async with httpx.AsyncClient(base_url=fake_pool_url) as anonymous:
        response = await anonymous.post(_runs(1), json={"message": "hi"})
    assert (response.status_code, response.json()["code"]) == (401, "unauthorized")
