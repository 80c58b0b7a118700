"""Conversations in threads and DMs, end to end: signed HTTP events into the real slack-bolt
app, the real RunPool and Bridge (scripted LLM), the fake Slack Web API."""

from __future__ import annotations

from core.store.models import ChatMessage, ChatSession, Role
from tests.bots.slack.harness import Harness, has_button, texts, until
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import CHANNEL_ID, DM_CHANNEL_ID


async def test_two_turns_in_one_thread(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("**Paris**, see [the map](https://maps.example/paris)."),
               text_reply("About two million."))
    mention = await h.event("app_mention", text="Capital of France?")
    thread = mention["ts"]
    [first] = await h.answered(CHANNEL_ID, thread)
    assert first.thread_ts == thread
    shown = texts(first)
    assert "**Paris**, see [the map](https://maps.example/paris)." in shown  # Markdown, rendered by Slack
    assert "0 tool calls" in shown
    assert has_button(first, "hermes.answer.thinking") and not has_button(first, "hermes.run.stop")

    await h.event("thread_message", text="Its population?", thread_ts=thread)
    second = (await h.answered(CHANNEL_ID, thread, count=2))[1]
    assert "About two million." in texts(second)
    seen = [(m["role"], m["content"]) for m in llm.requests[-1]["messages"] if m["role"] != "system"]
    assert seen[-3:] == [("user", "Capital of France?"), ("assistant", "**Paris**, see [the map](https://maps.example/paris)."),
                         ("user", "Its population?")]
    assert await ChatMessage.filter(role=Role.USER).count() == 2


async def test_a_dm_is_answered_in_the_dm(h: Harness, llm: ScriptedLLM) -> None:
    """Edit-based (no streams): the answer sits at the DM's top level, where the user wrote."""
    h.slack.streaming = False
    llm.script(text_reply("Hello there."))
    await h.event("dm", text="hi")
    reply = await until(lambda: [m for m in h.slack.history(DM_CHANNEL_ID)
                                 if m.bot_id and has_button(m, "hermes.answer.regenerate")])
    assert reply[0].thread_ts is None and "Hello there." in texts(reply[0])


async def test_a_top_level_dm_streams_in_the_thread_of_the_users_message(
        h: Harness, llm: ScriptedLLM) -> None:
    """A stream lives in a thread (chat.startStream's thread_ts is required): at the DM's top
    level it opens the thread of the user's message, and the DM stays one conversation."""
    llm.script(text_reply("Hello there."), text_reply("Again."))
    first = await h.event("dm", text="hi")
    [reply] = await h.answered(DM_CHANNEL_ID, first["ts"])
    assert reply.chunks and not reply.streaming and "Hello there." in texts(reply)
    assert reply.thread_ts == first["ts"]
    second = await h.event("dm", text="and again")
    await h.answered(DM_CHANNEL_ID, second["ts"])
    assert await ChatSession.all().count() == 1  # one DM, one session
