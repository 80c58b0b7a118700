"""The fake's stream methods, loading status, suggested prompts and new block types, driven
through slack_sdk's own AsyncWebClient and its chat_stream() helper."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import PlanUpdateChunk, TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import FakeSlack, ManualClock, SlackLimits


async def error_of(call: Any) -> str:
    with pytest.raises(SlackApiError) as caught:
        await call
    return str(caught.value.response["error"])


FEEDBACK = {"type": "context_actions", "elements": [{
    "type": "feedback_buttons", "action_id": "fb",
    "positive_button": {"text": {"type": "plain_text", "text": "👍"}, "value": "good"},
    "negative_button": {"text": {"type": "plain_text", "text": "👎"}, "value": "bad"}}]}


async def test_a_stream_grows_one_message_and_ends_with_blocks(
        slack: FakeSlack, client: AsyncWebClient) -> None:
    stream = await client.chat_stream(channel="C1", thread_ts="1.1", recipient_user_id="U1",
                                      recipient_team_id="T0FAKE", buffer_size=10)
    await stream.append(chunks=[PlanUpdateChunk(title="Plan"),
                                TaskUpdateChunk(id="t1", title="search", status="in_progress")])
    await stream.append(markdown_text="Hello ")
    await stream.append(chunks=[TaskUpdateChunk(id="t1", title="search", status="complete")])
    await stream.stop(markdown_text="world", blocks=[FEEDBACK])

    [message] = slack.thread("C1", "1.1")
    assert message.text == "Hello world" and not message.streaming
    assert message.tasks["t1"]["status"] == "complete" and message.plan_title == "Plan"
    assert message.blocks == [FEEDBACK] and message.recipient == "U1"
    assert [c.method for c in slack.calls] == [
        "chat.startStream", "chat.appendStream", "chat.stopStream"]


async def test_stream_state_rules(slack: FakeSlack, client: AsyncWebClient) -> None:
    posted = await client.chat_postMessage(channel="C1", text="plain")
    started = await client.chat_startStream(channel="D1", thread_ts="1.1", markdown_text="dm")
    errors = [
        await error_of(client.chat_appendStream(channel="C1", ts=posted["ts"], markdown_text="x")),
        await error_of(client.chat_startStream(channel="C1", thread_ts="1.1")),  # no recipient
        await error_of(client.chat_startStream(channel="D1", thread_ts="1.1",
                                               chunks=[{"type": "task_update", "id": "1"}])),
        await error_of(client.chat_appendStream(channel="D1", ts=started["ts"],
                                                markdown_text="x" * 12_001)),
    ]
    await client.chat_stopStream(channel="D1", ts=started["ts"])
    errors.append(await error_of(client.chat_stopStream(channel="D1", ts=started["ts"])))
    second = await client.chat_startStream(channel="D1", thread_ts="1.1")
    slack.expire_stream("D1", second["ts"])
    errors.append(await error_of(client.chat_appendStream(channel="D1", ts=second["ts"],
                                                          markdown_text="late")))
    assert errors == ["message_not_in_streaming_state", "invalid_arguments", "invalid_chunks",
                      "invalid_chunks", "message_not_in_streaming_state",
                      "message_not_in_streaming_state"]
    assert slack.message("D1", started["ts"]).text == "dm"


async def test_an_older_workspace_has_no_stream_methods(
        slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.streaming = False
    assert await error_of(client.chat_startStream(channel="D1", thread_ts="1.1")) == "unknown_method"
    slack.refuse("assistant.threads.setStatus", "not_allowed")
    assert await error_of(client.assistant_threads_setStatus(
        channel_id="C1", thread_ts="1.1", status="x")) == "not_allowed"
    slack.streaming = True
    assert (await client.chat_startStream(channel="D1", thread_ts="1.1"))["ok"]


async def test_stream_tiers_are_per_workspace(clock: ManualClock) -> None:
    """chat.startStream and chat.stopStream: Tier 2, 20 in any minute (on its own method's
    count each); chat.appendStream: Tier 4, 100."""
    async with FakeSlack(clock=clock) as slack:
        client = AsyncWebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[])
        started = [await client.chat_startStream(channel=f"D{n}", thread_ts="1.1") for n in range(20)]
        assert await error_of(client.chat_startStream(channel="D99", thread_ts="1.1")) == "ratelimited"
        for _ in range(100):
            await client.chat_appendStream(channel="D0", ts=started[0]["ts"], markdown_text="x")
        assert await error_of(client.chat_appendStream(
            channel="D0", ts=started[0]["ts"], markdown_text="x")) == "ratelimited"
        for n in range(20):
            await client.chat_stopStream(channel=f"D{n}", ts=started[n]["ts"])
        clock.advance(60.0)  # the first calls left the minute
        assert (await client.chat_startStream(channel="D99", thread_ts="1.1"))["ok"]
        assert slack.calls_to("chat.startStream")[20].retry_after == 60


async def test_status_is_cleared_by_a_reply_or_an_empty_status(
        slack: FakeSlack, client: AsyncWebClient) -> None:
    await client.assistant_threads_setStatus(channel_id="C1", thread_ts="1.1", status="is working…",
                                             loading_messages=["Running search…"])
    assert slack.workspace.loading_messages[("C1", "1.1")] == ["Running search…"]
    await client.chat_postMessage(channel="C1", thread_ts="1.1", text="answer")
    assert ("C1", "1.1") not in slack.workspace.thread_status
    await client.assistant_threads_setStatus(channel_id="C1", thread_ts="1.1", status="again")
    await client.assistant_threads_setStatus(channel_id="C1", thread_ts="1.1", status="")
    assert slack.workspace.thread_status == {}
    assert await error_of(client.assistant_threads_setStatus(
        channel_id="C1", thread_ts="1.1", status="x", loading_messages=["m"] * 11)) == "invalid_arguments"


async def test_suggested_prompts_and_titles(slack: FakeSlack, client: AsyncWebClient) -> None:
    prompts = [{"title": "Summarise", "message": "Summarise this channel"}]
    await client.assistant_threads_setSuggestedPrompts(channel_id="D1", thread_ts="1.1", prompts=prompts)
    await client.assistant_threads_setTitle(channel_id="D1", thread_ts="1.1", title="Plans")
    assert slack.workspace.suggested_prompts[("D1", "1.1")]["prompts"] == prompts
    assert slack.workspace.thread_titles[("D1", "1.1")] == "Plans"
    assert await error_of(client.assistant_threads_setSuggestedPrompts(
        channel_id="D1", prompts=prompts * 5)) == "invalid_arguments"


async def test_markdown_blocks_and_feedback_buttons_are_checked(client: AsyncWebClient) -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    await client.chat_postMessage(channel="C1", text="t", blocks=[
        {"type": "markdown", "text": table}, FEEDBACK])
    too_long = [{"type": "markdown", "text": "x" * 6001}, {"type": "markdown", "text": "y" * 6000}]
    bad_feedback = {"type": "context_actions", "elements": [{"type": "button"}]}
    assert await error_of(client.chat_postMessage(channel="C1", text="t", blocks=too_long)) == "invalid_blocks"
    assert await error_of(client.chat_postMessage(channel="C1", text="t", blocks=[bad_feedback])) == "invalid_blocks"
    assert SlackLimits().max_markdown == 12_000
