"""Refusals only Slack says this way: a reset (a command as a mention) while busy gets the
Stop button of a busy message, and a file shared without a word is answered. The cap, the
Bridge down, an unknown model or skill and a busy message or edit are the conversation
contract's (tests/bots/contract), on both platforms."""

from __future__ import annotations

from typing import Any

from bots.slack import ids
from core.conversation.refusals import NO_WORDS
from core.store.models import ChatMessage, ChatSession
from tests.bots.slack.harness import Harness, has_button, texts, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.slack import Message
from tests.fakes.slack_payloads import CHANNEL_ID, make_slack_event, thread_message_event


async def busy_thread(fh: Harness, fake_bridge: FakeBridge) -> dict[str, Any]:
    """A mention whose run holds until the Bridge's stall "go" is released."""
    fake_bridge.default_script = lambda run_id: [Stall("go"), ev("done", final_text="done")]
    mention = await fh.event("app_mention", text="first")
    await until(lambda: fh.bot_messages(CHANNEL_ID, mention["ts"]))
    return mention


async def refused_as_busy(fh: Harness, thread: str) -> Message:
    refusals = await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if "still working" in m.text])
    assert has_button(refusals[0], ids.STOP)
    return refusals[0]


async def test_a_reset_while_busy_is_refused_with_a_stop_button(fh: Harness, fake_bridge: FakeBridge) -> None:
    mention = await busy_thread(fh, fake_bridge)
    before = (await ChatSession.get(id=1)).hermes_session
    await fh.event("app_mention", text="reset", thread_ts=mention["ts"])
    refusal = await refused_as_busy(fh, mention["ts"])
    await fh.click(refusal, ids.STOP)
    stopped = await fh.answered(CHANNEL_ID, mention["ts"])
    assert "⏹ Stopped" in texts(stopped[0])
    assert (await ChatSession.get(id=1)).hermes_session == before


def file_only(thread: str) -> dict[str, Any]:
    """A user shares a file in `thread` without writing anything."""
    shared = {**thread_message_event("", thread_ts=thread), "subtype": "file_share",
              "files": [{"id": "F0LOG", "name": "build.log"}]}
    return make_slack_event(shared)


async def test_a_file_without_words_is_answered_not_ignored(fh: Harness, fake_bridge: FakeBridge) -> None:
    thread = (await fh.event("app_mention", text="hello"))["ts"]
    await fh.answered(CHANNEL_ID, thread)
    assert (await fh.post_event(file_only("1650000000.999999"))).status_code == 200  # not our thread
    assert (await fh.post_event(file_only(thread))).status_code == 200
    await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if m.text == NO_WORDS])
    await fh.bot.idle()
    assert fh.slack.thread(CHANNEL_ID, "1650000000.999999") == []
    assert await ChatMessage.filter(content="").count() == 0
