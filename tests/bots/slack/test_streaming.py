"""Native streaming, end to end (signed HTTP events into the real slack-bolt app, the real
agent loop on the scripted LLM, slack_sdk's stream methods against the fake Slack): a turn
streams its tools as tasks and its answer into one message that ends with our controls and
👍 / 👎; the edit-based live message takes over where the stream cannot go."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bots.slack import ids
from core.store.models import AnswerFeedback, FeedbackValue, Platform
from tests.bots.slack.harness import Harness, button, has_button, texts, until
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import Message
from tests.fakes.slack_payloads import CHANNEL_ID, DM_CHANNEL_ID, TEAM_ID, USER_ID, make_block_action

TODOS = {"todos": [{"id": "1", "content": "read the brief", "status": "completed"},
                   {"id": "2", "content": "write the answer", "status": "in_progress"}]}
TABLE = "| tool | calls |\n|------|-------|\n| search | 2 |"


def streamed(h: Harness, thread: str, channel: str = CHANNEL_ID) -> list[Message]:
    return [m for m in h.bot_messages(channel, thread) if m.chunks]


def feedback(message: Message) -> dict:  # type: ignore[type-arg]
    [block] = [b for b in message.blocks or [] if b["type"] == "context_actions"]
    return block["elements"][0]


async def test_a_mention_streams_tasks_and_the_answer_and_ends_with_feedback(
        h: Harness, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", TODOS)), text_reply(f"All planned.\n\n{TABLE}", gate=gate))
    thread = (await h.event("app_mention", text="plan it"))["ts"]

    live = await until(lambda: (s := streamed(h, thread)) and "todo-2" in s[0].tasks and s[0])
    assert live.streaming and live.tasks["tool-0"]["status"] == "complete"
    assert live.tasks["todo-1"]["status"] == "complete" and live.plan_title == "Plan: 1/2 todos"
    gate.set()
    [done] = await h.answered(CHANNEL_ID, thread)
    assert done.ts == live.ts and not done.streaming  # one message all along
    assert done.text == f"All planned.\n\n{TABLE}"  # the Markdown as written: the table renders
    assert done.tasks["turn"]["status"] == "complete" and "1 tool call" in texts(done)
    assert has_button(done, ids.REGENERATE) and has_button(done, ids.SHOW_THINKING)
    assert feedback(done)["positive_button"]["value"].startswith("good:")

    [start] = h.slack.calls_to("chat.startStream")
    assert (start.args["recipient_user_id"], start.args["recipient_team_id"]) == (USER_ID, TEAM_ID)
    assert start.args["thread_ts"] == thread
    assert not h.slack.calls_to("chat.update") and h.slack.ratelimited == 0


async def test_a_dm_thread_streams_without_a_recipient(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Hello there."))
    await h.event("dm", text="hi", thread_ts="1700000000.000001")
    [done] = await until(lambda: [m for m in streamed(h, "1700000000.000001", DM_CHANNEL_ID)
                                  if has_button(m, ids.REGENERATE)])
    assert done.text == "Hello there."
    assert "recipient_user_id" not in h.slack.calls_to("chat.startStream")[0].args


async def test_a_workspace_without_streams_gets_the_edited_message_and_it_is_remembered(
        h: Harness, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture) -> None:
    h.slack.streaming = False
    llm.script(text_reply(f"One.\n\n{TABLE}"), text_reply("Two."))
    caplog.set_level(logging.WARNING, logger="bots.slack.delivery.sender")
    thread = (await h.event("app_mention", text="first"))["ts"]
    [first] = await h.answered(CHANNEL_ID, thread)
    assert first.blocks[0] == {"type": "markdown", "text": f"One.\n\n{TABLE}"}  # a table renders
    assert first.revisions, "the live message was edited into the answer"
    await h.event("thread_message", text="second", thread_ts=thread)
    await h.answered(CHANNEL_ID, thread, count=2)
    assert len(h.slack.calls_to("chat.startStream")) == 1  # asked once, then remembered
    assert len([r for r in caplog.records if "refuses streaming" in r.message]) == 1
    assert all(not m.chunks for m in h.bot_messages(CHANNEL_ID, thread))


async def test_a_stream_that_breaks_mid_turn_becomes_an_edited_message(
        h: Harness, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", TODOS)), text_reply("Recovered answer.", gate=gate))
    thread = (await h.event("app_mention", text="go"))["ts"]
    live = await until(lambda: (s := streamed(h, thread)) and "tool-0" in s[0].tasks and s[0])
    h.slack.expire_stream(CHANNEL_ID, live.ts)  # Slack ended the stream under us
    gate.set()
    [done] = await h.answered(CHANNEL_ID, thread)
    assert done.ts == live.ts and "Recovered answer." in texts(done)
    assert any(c.error == "message_not_in_streaming_state" for c in h.slack.calls
               if c.method in ("chat.appendStream", "chat.stopStream"))
    assert h.slack.calls_to("chat.update")[-1].ok
    assert len(h.bot_messages(CHANNEL_ID, thread)) == 1


async def test_clarify_works_in_a_streamed_turn(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(tool_reply(ToolCall("clarify", {"question": "Which colour?", "choices": ["red", "blue"]})),
               text_reply("Blue it is."))
    thread = (await h.event("app_mention", text="paint the shed"))["ts"]
    question = await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread)
                                    if has_button(m, ids.CLARIFY_CUSTOM)])
    assert streamed(h, thread)[0].streaming  # the stream waits with the question
    await h.click(question[0], ids.choice_action(1))
    [done] = await h.answered(CHANNEL_ID, thread)
    assert done.chunks and done.text == "Blue it is."
    assert button(done, ids.REGENERATE)


async def test_the_loading_status_is_set_and_cleared_and_a_refusal_is_skipped(
        h: Harness, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture) -> None:
    llm.script(text_reply("Status seen."), text_reply("No status."), text_reply("Still none."))
    thread = (await h.event("app_mention", text="hi"))["ts"]
    await h.answered(CHANNEL_ID, thread)
    [status] = h.slack.calls_to("assistant.threads.setStatus")
    assert status.ok and status.args["loading_messages"] and status.args["thread_ts"] == thread
    assert h.slack.workspace.thread_status == {}  # cleared by the answer

    h.slack.refuse("assistant.threads.setStatus", "not_allowed")
    caplog.set_level(logging.WARNING, logger="bots.slack.delivery.sender")
    for count, text in enumerate(("again", "and again"), start=2):
        await h.event("thread_message", text=text, thread_ts=thread)
        await h.answered(CHANNEL_ID, thread, count=count)
    assert len(h.slack.calls_to("assistant.threads.setStatus")) == 2  # refused once, then skipped
    assert len([r for r in caplog.records if "refuses status" in r.message]) == 1


async def test_a_feedback_click_is_stored_and_can_be_changed(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Rate me."))
    thread = (await h.event("app_mention", text="hi"))["ts"]
    [done] = await h.answered(CHANNEL_ID, thread)
    buttons = feedback(done)
    for value in (buttons["positive_button"]["value"], buttons["negative_button"]["value"]):
        await h.interact(make_block_action(ids.FEEDBACK, value, user="U0USER", channel=CHANNEL_ID,
                                           message_ts=done.ts, thread_ts=thread))
        await h.bot.idle()
    [rating] = await AnswerFeedback.all()
    assert (rating.user, rating.value, rating.platform) == ("U0USER", FeedbackValue.BAD, Platform.SLACK)
    assert h.ephemerals()[-1].startswith("Thanks")
    await h.interact(make_block_action(ids.FEEDBACK, "bad:99999", user="U0USER", channel=CHANNEL_ID,
                                       message_ts=done.ts, thread_ts=thread))
    await until(lambda: len(h.ephemerals()) == 3)  # told, privately, that it is not found
    assert await AnswerFeedback.all().count() == 1


async def test_an_append_dropped_when_the_run_ends_is_sent_with_the_stop(
        h: Harness, llm: ScriptedLLM) -> None:
    """Appends are refused with a long Retry-After (Slack busy): the one carrying the tool's
    and the todos' state waits it out, tried again, and is dropped when the run ends (an
    answer never waits behind progress). The stop carries what it held: the stopped message
    shows every task in its final state."""
    gate = asyncio.Event()
    h.slack.ratelimit("chat.appendStream", times=2, retry_after=10)
    llm.script(tool_reply(ToolCall("todo", TODOS)), text_reply("Answered anyway.", gate=gate))
    thread = (await h.event("app_mention", text="plan it"))["ts"]
    await until(lambda: [c for c in h.slack.calls_to("chat.appendStream")
                         if c.status == 429 and "todo-2" in str(c.args.get("chunks"))],
                deadline=60)  # two Retry-Afters on a loaded machine
    gate.set()
    [done] = await h.answered(CHANNEL_ID, thread)
    assert "Answered anyway." in texts(done)
    assert done.tasks["tool-0"]["status"] == "complete"
    assert done.tasks["todo-1"]["status"] == "complete" and done.plan_title == "Plan: 1/2 todos"
