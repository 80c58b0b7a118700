"""Every refusal is a clear message in the thread: cap reached, Bridge down, unknown model or
skill, busy (with a Stop button) for an edit or a command as much as for a message, and a
file shared without a word."""

from __future__ import annotations

from typing import Any

from bots.slack import ids
from core.conversation.refusals import NO_WORDS
from core.models import ChatMessage, ChatSession
from tests.bots.slack.harness import Harness, has_button, texts, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.slack import Message
from tests.fakes.slack_payloads import CHANNEL_ID, make_slack_event, thread_message_event


async def test_beyond_the_cap_a_run_shows_its_place_in_the_queue(fh: Harness, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [Stall("go"), ev("done", final_text="done")]
    threads = [(await fh.event("app_mention", text=f"job {n}"))["ts"] for n in range(3)]  # cap is 2
    queued = await until(lambda: [m for t in threads for m in fh.bot_messages(CHANNEL_ID, t)
                                  if "Queued (#1 in line)" in texts(m)])
    assert len(queued) == 1  # which of the three waits depends on who took a slot first
    status = (await fh.command("status"))["text"]
    assert "*Runs:* 2 running, 1 queued" in status
    fake_bridge.release("go")
    for thread in threads:
        await fh.answered(CHANNEL_ID, thread)


async def test_a_bridge_that_is_down_fails_the_turn_with_a_reason(fh: Harness, fake_bridge: FakeBridge) -> None:
    await fake_bridge.stop()
    thread = (await fh.event("app_mention", text="anyone there?"))["ts"]
    [failed] = await fh.answered(CHANNEL_ID, thread)
    assert "⚠️ Failed: The agent service is unreachable" in texts(failed)


async def test_an_unknown_model_is_refused_in_the_thread(fh: Harness, fake_bridge: FakeBridge) -> None:
    thread = (await fh.event("app_mention", text="hello"))["ts"]
    await fh.answered(CHANNEL_ID, thread)
    await ChatSession.all().update(model_id="retired-model")
    await fh.event("thread_message", text="still there?", thread_ts=thread)
    refusal = await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if "Unknown model" in m.text])
    assert "'retired-model'" in refusal[0].text


async def test_an_unknown_skill_is_refused_in_the_thread(fh: Harness, fake_bridge: FakeBridge) -> None:
    thread = (await fh.event("app_mention", text="hello"))["ts"]
    await fh.answered(CHANNEL_ID, thread)
    await fh.event("app_mention", text="skill nope", thread_ts=thread)
    await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if "Unknown skill 'nope'" in m.text])
    await ChatSession.all().update(skill_folder="retired-skill")  # its folder went away
    await fh.event("thread_message", text="still there?", thread_ts=thread)
    await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if "Unknown skill 'retired-skill'" in m.text])
    assert await ChatMessage.filter(content="still there?").count() == 0  # nothing half-written


async def test_a_bridge_that_is_down_is_said_in_the_thread_for_a_command(fh: Harness, fake_bridge: FakeBridge) -> None:
    thread = (await fh.event("app_mention", text="hello"))["ts"]
    await fh.answered(CHANNEL_ID, thread)
    await fake_bridge.stop()
    await fh.event("app_mention", text="memory", thread_ts=thread)
    [refusal] = await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if "unreachable" in m.text])
    assert refusal.text.startswith("🔌 The agent service is unreachable right now")


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


async def test_an_edit_while_busy_is_refused_with_a_stop_button(fh: Harness, fake_bridge: FakeBridge) -> None:
    mention = await busy_thread(fh, fake_bridge)
    await fh.event("message_changed", text="<@U0BOT> second", message_ts=mention["ts"],
                   previous_text=mention["text"])
    await refused_as_busy(fh, mention["ts"])
    fake_bridge.release("go")
    await fh.answered(CHANNEL_ID, mention["ts"])
    assert await ChatMessage.filter(content="second").count() == 0


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
