"""What the agent's model calls spent, as operators read it: each answer's usage and the
session's totals in the detail and both exports."""

from __future__ import annotations

import httpx
import pytest

from core.chat import sessions
from core.runtime.pool import RunPool
from tests.admin.conftest import AUTH, admin_on
from tests.core.runtime.waiting import finished
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

TODO = {"todos": [{"id": "1", "content": "add up", "status": "in_progress"}]}
CALL = 280e-6  # a scripted call (100 + 10 tokens) at PRICE (tests/support/runtime.py)


def _usage(calls: int, cost: float | None) -> dict:
    return {"calls": calls, "promptTokens": 100 * calls, "completionTokens": 10 * calls,
            "cachedTokens": 0, "tokens": 110 * calls,
            "cost": None if cost is None else pytest.approx(cost)}


async def test_the_detail_and_exports_show_each_answers_usage_and_the_sessions_totals(
    priced_pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO)), text_reply("Added up."), text_reply("Again."))
    session = (await sessions.create_session()).id
    async with admin_on(priced_pool) as url, httpx.AsyncClient(base_url=url, headers=AUTH) as api:
        for words in ("add up", "again"):
            started = (await api.post(f"/api/chat/sessions/{session}/runs",
                                      json={"message": words})).json()
            await finished(priced_pool, started["runId"])
        detail = (await api.get(f"/api/chat/sessions/{session}")).json()
        markdown = (await api.get(f"/api/chat/sessions/{session}/export?format=md")).text
        exported = (await api.get(f"/api/chat/sessions/{session}/export?format=json")).json()

    answers = [m for m in detail["messages"] if m["role"] == "ASSISTANT"]
    assert [a["usage"] for a in answers] == [_usage(2, 2 * CALL), _usage(1, CALL)]
    assert [m.get("usage") for m in detail["messages"] if m["role"] == "USER"] == [None, None]
    assert detail["usage"] == _usage(3, 3 * CALL)
    assert exported["session"]["usage"] == _usage(3, 3 * CALL)
    assert [m["usage"] for m in exported["messages"] if m["role"] == "ASSISTANT"] == [
        _usage(2, 2 * CALL), _usage(1, CALL)]
    assert "- Usage: 3 model calls · 330 tokens (300 in, 30 out) · $0.00084" in markdown
    assert "_Usage: 2 model calls · 220 tokens (200 in, 20 out) · $0.00056_" in markdown
