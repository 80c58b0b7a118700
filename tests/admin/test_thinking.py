"""The detail's assistant messages carry their stored logs and the thinking state they replay to."""

from __future__ import annotations

from datetime import timedelta

import httpx

from core.agent.events import ClarifyRequest, RunError, TextDelta, ToolProgress, ToolStart
from core.store.models import ChatMessage, ChatMessageLog, MessageStatus, Role
from tests.admin.builders import (
    T0,
    conversation,
    running_turn,
    store_logs,
    thinking_events,
)


async def _assistant(api: httpx.AsyncClient, session_id: int, index: int = -1) -> dict:
    messages = (await api.get(f"/api/chat/sessions/{session_id}")).json()["messages"]
    return [m for m in messages if m["role"] == "ASSISTANT"][index]


async def test_a_finished_run_replays_all_five_areas(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("t", ("what broke?", "Three errors on Monday."))
    answer = await ChatMessage.get(session_id=session.id, role=Role.ASSISTANT)
    await store_logs(answer.id, thinking_events())

    message = await _assistant(api, session.id)
    assert [log["kind"] for log in message["logs"]] == [
        "text", "text", "step", "status", "tool_start", "tool_end", "todo_update",
        "clarify_request", "text", "done",
    ]
    tool_start = message["logs"][4]
    assert tool_start["toolName"] == "read_file"
    assert tool_start["meta"] == {"tool_call_id": "c1", "args": {"path": "a.log"}}
    assert message["thinking"] == {
        "thinking": "Let me look at the logs.\n\n Monday it is.",
        "status": None,  # the run ended: nothing is going on any more
        "tools": [{
            "callId": "c1", "name": "read_file", "argsPreview": '{"path":"a.log"}',
            "resultPreview": "3 errors", "isError": False, "finished": True,
        }],
        "todos": [
            {"id": "1", "content": "Read the logs", "status": "completed"},
            {"id": "2", "content": "Explain", "status": "in_progress"},
        ],
        "pendingClarify": None,  # answered: the run went on after it
        "pendingApproval": None,
        "toolCalls": 1,
        "iteration": 1,
        "compactions": 0,
        "elapsedSeconds": 9.0,
        "finalText": "Three errors on Monday.",
        "error": None,
        "lastSeq": 10,
    }


async def test_a_run_waiting_on_a_question_shows_it_and_the_live_status(
    db: str, api: httpx.AsyncClient
) -> None:
    session = await conversation("t")
    answer = await running_turn(session.id, "deploy?", MessageStatus.RUNNING)
    await store_logs(answer.id, [
        TextDelta(seq=1, at=T0, text="Checking"),
        ToolStart(seq=2, at=T0, tool_call_id="c9", tool_name="shell", args={"cmd": "ls"}),
        ToolProgress(seq=3, at=T0, event_name="tool.progress", tool_name="shell", preview="50%"),
        ClarifyRequest(seq=4, at=T0 + timedelta(seconds=2), clarify_id="k1",
                       question="Which env?", choices=("staging", "prod")),
    ])
    thinking = (await _assistant(api, session.id))["thinking"]
    assert thinking["pendingClarify"] == {
        "clarifyId": "k1", "question": "Which env?", "choices": ["staging", "prod"], "seq": 4,
    }
    assert thinking["status"] == {"text": "50%", "source": "tool_progress", "toolName": "shell"}
    assert thinking["tools"][0]["finished"] is False
    assert (thinking["finalText"], thinking["error"], thinking["elapsedSeconds"]) == (None, None, 2.0)


async def test_a_failed_run_shows_its_error(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("t")
    answer = await running_turn(session.id, "go", MessageStatus.RUNNING)
    await ChatMessage.filter(id=answer.id).update(status=MessageStatus.FAILED, error="LLM down")
    await store_logs(answer.id, [
        TextDelta(seq=1, at=T0, text="hm"),
        RunError(seq=2, at=T0, message="the model endpoint refused", code="llm_error"),
    ])
    message = await _assistant(api, session.id)
    assert (message["status"], message["error"]) == ("FAILED", "LLM down")
    assert message["thinking"]["error"] == {"message": "the model endpoint refused", "code": "llm_error"}


async def test_an_unreadable_stored_row_is_skipped_not_a_500(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("t", ("q", "a"))
    answer = await ChatMessage.get(session_id=session.id, role=Role.ASSISTANT)
    await store_logs(answer.id, [TextDelta(seq=1, at=T0, text="kept")])
    await ChatMessageLog.create(message_id=answer.id, seq=2, kind="mystery", meta_json="{broken")
    message = await _assistant(api, session.id)
    assert [log["kind"] for log in message["logs"]] == ["text", "mystery"]
    assert message["logs"][1]["meta"] == "{broken"  # shown as stored
    assert message["thinking"]["thinking"] == "kept"
