"""👍 / 👎 on answers: one per person and changeable, shown in the session detail, a filter of
the session list, in both export formats and in /metrics."""

from __future__ import annotations

import json

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from core.chat import feedback
from core.errors import InvalidInput
from core.store.models import ChatMessage, FeedbackValue, Platform, Role
from hermes_chat.metrics import FeedbackCollector
from tests.admin.builders import conversation

GOOD, BAD = FeedbackValue.GOOD, FeedbackValue.BAD


async def answer_of(session_id: int) -> ChatMessage:
    return await ChatMessage.get(session_id=session_id, role=Role.ASSISTANT)


async def test_feedback_is_one_per_person_changeable_and_shown_everywhere(
        db: str, api: httpx.AsyncClient) -> None:
    rated = await conversation("rated", ("how?", "like this"), platform=Platform.SLACK)
    other = await conversation("other", ("why?", "because"))
    answer = await answer_of(rated.id)
    await feedback.give(answer.id, Platform.SLACK, "U1", GOOD)
    await feedback.give(answer.id, Platform.SLACK, "U2", GOOD)
    await feedback.give(answer.id, Platform.SLACK, "U1", BAD)  # changed their mind
    await feedback.give((await answer_of(other.id)).id, Platform.DISCORD, "42", GOOD)
    with pytest.raises(InvalidInput):
        await feedback.give(answer.parent_id or 0, Platform.SLACK, "U1", GOOD)  # not an answer

    detail = (await api.get(f"/api/chat/sessions/{rated.id}")).json()
    [user, assistant] = detail["messages"]
    assert user["feedback"] is None
    assert [(f["user"], f["value"]) for f in assistant["feedback"]] == [("U2", "good"), ("U1", "bad")]
    assert all(f["at"] for f in assistant["feedback"])

    bad = (await api.get("/api/chat/sessions", params={"feedback": "bad"})).json()
    good = (await api.get("/api/chat/sessions", params={"feedback": "good"})).json()
    assert [s["id"] for s in bad["items"]] == [rated.id]
    assert {s["id"] for s in good["items"]} == {rated.id, other.id}
    refused = await api.get("/api/chat/sessions", params={"feedback": "meh"})
    assert refused.status_code == 400 and refused.json()["code"]

    exported = (await api.get(f"/api/chat/sessions/{rated.id}/export", params={"format": "json"})).text
    [_, answered] = json.loads(exported)["messages"]
    assert [(f["user"], f["value"]) for f in answered["feedback"]] == [("U2", "good"), ("U1", "bad")]
    markdown = (await api.get(f"/api/chat/sessions/{rated.id}/export")).text
    assert "_Feedback: 👍 U2, 👎 U1_" in markdown

    collector = FeedbackCollector()
    registry = CollectorRegistry()
    registry.register(collector)
    await collector.refresh()
    text = generate_latest(registry).decode()
    assert 'hermes_feedback{value="good"} 2.0' in text and 'hermes_feedback{value="bad"} 1.0' in text
