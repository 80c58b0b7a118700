"""The live message while a run works (todos, tools), Slack's retries and signatures. A busy
refusal and its Stop are the conversation contract's (tests/bots/contract)."""

from __future__ import annotations

import asyncio

import pytest

from core.store.models import ChatMessage, Role
from tests.bots.slack.harness import Harness, has_button, texts, until
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack_payloads import (
    CHANNEL_ID,
    SignedRequest,
    event_request,
    make_slack_event,
    sign_request,
)

TODOS = {"todos": [{"id": "1", "content": "read the brief", "status": "completed"},
                   {"id": "2", "content": "write the answer", "status": "in_progress"}]}


async def test_todos_and_tools_show_while_the_run_works(h: Harness, llm: ScriptedLLM) -> None:
    """The edit-based live message (a workspace without the stream methods; streamed turns:
    test_streaming.py)."""
    h.slack.streaming = False
    gate = asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", TODOS)), text_reply("All planned.", gate=gate))
    thread = (await h.event("app_mention", text="plan it"))["ts"]

    def live() -> str:
        messages = h.bot_messages(CHANNEL_ID, thread)
        return texts(messages[0]) if messages and has_button(messages[0], "hermes.run.stop") else ""

    shown = await until(lambda: "☑ read the brief" in live() and "✓ todo" in live() and live())
    assert "▶ write the answer" in shown
    gate.set()
    [done] = await h.answered(CHANNEL_ID, thread)
    # the default model named, as the Bridge answered with it (the conversation chose none)
    assert "All planned." in texts(done) and "1 tool call · 1/2 todos · model scripted-model" in texts(done)
    revisions = [r.blocks for r in done.revisions]
    assert any("Todo" in str(blocks) for blocks in revisions)


@pytest.mark.slack_http
async def test_retries_and_double_deliveries_start_one_run(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("once"), text_reply("twice?"))
    payload = make_slack_event("app_mention", text="hello")
    for retry in (None, 1, 2):
        assert (await h.post_event(payload, retry_num=retry)).status_code == 200
    # The same message as a plain `message` event (Slack sends both for a mention in a thread).
    as_message = {**payload["event"], "type": "message", "channel_type": "channel"}
    await h.post_event(make_slack_event(as_message))
    await h.answered(CHANNEL_ID, payload["event"]["ts"])
    await h.bot.idle()
    assert await ChatMessage.filter(role=Role.USER).count() == 1
    assert len(llm.requests) == 1
    assert len(h.bot_messages(CHANNEL_ID, payload["event"]["ts"])) == 1


@pytest.mark.slack_http
async def test_a_bad_signature_is_refused_with_401(h: Harness) -> None:
    good = event_request(make_slack_event("app_mention", text="hi"), "test-signing-secret")
    forged = SignedRequest(good.body, {**good.headers, **sign_request(good.body, "wrong-secret")})
    response = await h.http.post("/slack/events", content=forged.body, headers=forged.headers)
    assert response.status_code == 401
    stale = event_request(make_slack_event("app_mention"), "test-signing-secret", timestamp=1_000_000)
    response = await h.http.post("/slack/events", content=stale.body, headers=stale.headers)
    assert response.status_code == 401
    assert await ChatMessage.all().count() == 0


@pytest.mark.slack_http
async def test_slack_verifies_the_request_url(h: Harness) -> None:
    challenge = {"token": "verification-token", "challenge": "3eZbrw1aBm", "type": "url_verification"}
    response = await h.post_event(challenge)
    assert response.status_code == 200 and response.json() == {"challenge": "3eZbrw1aBm"}
