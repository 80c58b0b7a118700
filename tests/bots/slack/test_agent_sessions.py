"""Slack's agent container, end to end (signed HTTP events into the real slack-bolt app, the
real agent loop on the scripted LLM, slack_sdk's agents.sessions.* and stream methods against
the fake Slack): a turn holds its thread's session `processing` (Slack's native Stop) and
ends it `active`; the native Stop stops the run through the same Stop as our button; the
thread's title follows its session's; an app not declared as an agent goes without, logged
once; a stream a restart left open is stopped, never left open."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from bots.slack import ids, refs
from bots.slack.refs import Slot
from core.agent.bridge.client import BridgeClient
from core.store.models import ChatMessage, ChatSession, MessageStatus, Role
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.chat.sessions import rename_session
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, has_button, running, texts, until
from tests.bridge.harness import RunningBridge
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, DM_CHANNEL_ID, USER_ID, make_slack_event
from tests.support.runtime import FAST, catalogue_for

async def a_quick_turn(h: Harness, llm: ScriptedLLM) -> str:
    """A mention answered at once, everything after it done; its thread."""
    llm.script(text_reply("Quick."))
    thread = (await h.event("app_mention", text="hi"))["ts"]
    await h.answered(CHANNEL_ID, thread)
    await h.bot.idle()
    return thread


async def streamed_slot(message_id: int) -> Slot | None:
    slot = await refs.slot_of(message_id)
    return slot if slot is not None and slot.streamed else None


async def ended_on_the_bridge(client: BridgeClient, run_id: str | None) -> bool:
    return (await client.run_state(run_id or "")).state in ("done", "error")


def session_calls(slack: FakeSlack) -> list[str]:
    return [c.method for c in slack.calls if c.method.startswith("agents.")]


async def test_a_streamed_turn_holds_its_session_processing_and_ends_it_active(
        h: Harness, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("Done.", gate=gate), text_reply("Again."))
    thread = (await h.event("app_mention", text="Plan the offsite"))["ts"]
    await until(lambda: (s := h.slack.agent_session(CHANNEL_ID, thread)) and s["status"] == "processing")
    [start] = h.slack.calls_to("agents.sessions.setStatus")
    assert start.args["initiator_user_id"] == USER_ID and start.args["thread_ts"] == thread
    gate.set()
    [done] = await h.answered(CHANNEL_ID, thread)
    await h.bot.idle()
    session = h.slack.agent_session(CHANNEL_ID, thread)
    assert session["history"] == ["processing", "active"]
    [stop] = h.slack.calls_to("chat.stopStream")
    assert stop.args["session_status"] == "active"  # the stream's stop ends the session
    assert len(h.slack.calls_to("agents.sessions.setStatus")) == 1  # no second call for it
    # The first answer titled the session: the thread's session is renamed after it.
    [rename] = h.slack.calls_to("agents.sessions.rename")
    assert rename.args["title"] == session["title"] == (await ChatSession.get()).title
    assert not h.slack.calls_to("assistant.threads.setTitle")  # a channel thread: no assistant

    await h.event("thread_message", text="again", thread_ts=thread)
    await h.answered(CHANNEL_ID, thread, count=2)
    await h.bot.idle()
    assert len(h.slack.calls_to("agents.sessions.rename")) == 1  # the title did not change
    assert h.slack.agent_session(CHANNEL_ID, thread)["history"][-2:] == ["processing", "active"]


async def test_an_edited_turn_ends_its_session_with_set_status(h: Harness, llm: ScriptedLLM) -> None:
    h.slack.streaming = False
    llm.script(text_reply("Edited answer."))
    thread = (await h.event("app_mention", text="hi"))["ts"]
    await h.answered(CHANNEL_ID, thread)
    await h.bot.idle()
    assert h.slack.agent_session(CHANNEL_ID, thread)["history"] == ["processing", "active"]
    assert [c.args["status"] for c in h.slack.calls_to("agents.sessions.setStatus")] == [
        "processing", "active"]


async def test_the_native_stop_stops_the_run_and_the_session(h: Harness, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("never shown", gate=gate))
    thread = (await h.event("app_mention", text="write a novel"))["ts"]
    await until(lambda: (s := h.slack.agent_session(CHANNEL_ID, thread)) and s["status"] == "processing")
    [live] = [m for m in h.bot_messages(CHANNEL_ID, thread) if m.chunks]

    event = h.slack.press_stop(CHANNEL_ID, thread)
    assert event["streaming_message_ts"] == [live.ts] and not live.streaming
    assert (await h.post_event(make_slack_event(event))).status_code == 200
    answer = await until(lambda: ChatMessage.filter(role=Role.ASSISTANT,
                                                     status=MessageStatus.STOPPED).first())
    gate.set()
    await h.bot.idle()
    assert answer.error == "Stopped."
    shown = h.slack.message(CHANNEL_ID, live.ts)
    assert "Stopped" in texts(shown) and has_button(shown, ids.REGENERATE)  # ended, not broken
    assert h.slack.agent_session(CHANNEL_ID, thread)["status"] == "active"


async def test_the_native_stop_with_no_run_in_flight_sets_the_session_active(
        h: Harness, llm: ScriptedLLM) -> None:
    thread = await a_quick_turn(h, llm)
    h.slack.workspace.agent_sessions[(CHANNEL_ID, thread)]["status"] = "processing"  # a stale Stop
    event = h.slack.press_stop(CHANNEL_ID, thread)
    assert (await h.post_event(make_slack_event(event))).status_code == 200
    await until(lambda: h.slack.agent_session(CHANNEL_ID, thread)["status"] == "active")
    assert await ChatMessage.filter(status=MessageStatus.STOPPED).count() == 0


async def test_a_dm_thread_is_titled_after_its_session(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Hello."), text_reply("Renamed."))
    first = await h.event("dm", text="Budget for Q3 across the marketing and sales teams")
    await h.answered(DM_CHANNEL_ID, first["ts"])
    await h.bot.idle()
    title = (await ChatSession.get()).title
    assert title == "Budget for Q3 across the…"  # cut after a whole word, not "...the mar"
    assert h.slack.workspace.thread_titles[(DM_CHANNEL_ID, first["ts"])] == title
    assert h.slack.agent_session(DM_CHANNEL_ID, first["ts"])["title"] == title

    await rename_session((await ChatSession.get()).id, "Q3 budget, final")  # the admin renames it
    await h.event("dm", text="more", thread_ts=first["ts"])
    await h.answered(DM_CHANNEL_ID, first["ts"], count=2)
    await h.bot.idle()
    assert h.slack.workspace.thread_titles[(DM_CHANNEL_ID, first["ts"])] == "Q3 budget, final"
    assert h.slack.agent_session(DM_CHANNEL_ID, first["ts"])["title"] == "Q3 budget, final"


async def test_an_app_not_declared_as_an_agent_goes_without_logged_once(
        h: Harness, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture) -> None:
    h.slack.agent = False
    caplog.set_level(logging.WARNING, logger="bots.slack.delivery.sender")
    llm.script(text_reply("One."), text_reply("Two."))
    thread = (await h.event("app_mention", text="first"))["ts"]
    [first] = await h.answered(CHANNEL_ID, thread)
    await h.event("thread_message", text="second", thread_ts=thread)
    await h.answered(CHANNEL_ID, thread, count=2)
    await h.bot.idle()
    [refused] = h.slack.calls_to("agents.sessions.setStatus")
    assert refused.error == "not_authorized" and session_calls(h.slack) == [refused.method]
    assert len([r for r in caplog.records if "refuses agent sessions" in r.message]) == 1
    assert "session_status" not in h.slack.calls_to("chat.stopStream")[0].args
    assert "One." in texts(first) and h.slack.agent_session(CHANNEL_ID, thread) is None


@pytest.mark.parametrize("ended_meanwhile", [False, True], ids=["still-running", "ended-meanwhile"])
async def test_a_stream_a_restart_left_open_is_stopped_then_edited(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path,
    fake_slack: FakeSlack, fast_clock: FastClock, ended_meanwhile: bool,
) -> None:
    """The process goes away mid-stream; after the restart the turn's stream is stopped
    before its message is edited, and its agent session ends active, whether the run was
    still running or ended while no process followed it."""
    gate = asyncio.Event()
    llm.script(text_reply("Answered after the restart.", gate=gate))
    async with BridgeClient(bridge.url, policy=FAST) as client:
        first = RunPool(client, catalogue_for(llm, skills_dir))
        await first.open()
        async with running(fake_slack, first, fast_clock) as h:
            thread = (await h.event("app_mention", text="go"))["ts"]
            live = await until(lambda: next((m for m in h.bot_messages(CHANNEL_ID, thread)
                                             if m.chunks), None))
            answer = await until(lambda: ChatMessage.filter(role=Role.ASSISTANT).first())
            await until(lambda: streamed_slot(answer.id))  # the stream's ts is stored
            # and the session set processing, which the turn does right after opening the stream
            await until(lambda: (fake_slack.agent_session(CHANNEL_ID, thread) or {}).get("status"))
        await first.close()  # the process goes away mid-stream; the run waits on the Bridge
        assert fake_slack.message(CHANNEL_ID, live.ts).streaming
        assert fake_slack.agent_session(CHANNEL_ID, thread)["status"] == "processing"
        if ended_meanwhile:
            gate.set()
            await until(lambda: ended_on_the_bridge(client, answer.run_id))

        second = RunPool(client, catalogue_for(llm, skills_dir))
        await second.open()
        try:
            async with running(fake_slack, second, fast_clock) as h2:
                assert await recover(second) == 1
                gate.set()
                [done] = await h2.answered(CHANNEL_ID, thread)
                await h2.bot.idle()
        finally:
            await second.close()
    assert done.ts == live.ts and not done.streaming
    assert "Answered after the restart." in texts(done)
    stops = [c for c in fake_slack.calls if c.method == "chat.stopStream" and c.ok]
    updates = [c for c in fake_slack.calls if c.method == "chat.update" and c.ok]
    assert stops and updates and fake_slack.calls.index(stops[0]) < fake_slack.calls.index(updates[0])
    assert all(not m.streaming for m in fake_slack.thread(CHANNEL_ID, thread))
    assert fake_slack.agent_session(CHANNEL_ID, thread)["status"] == "active"


async def test_without_the_native_stop_a_streamed_turn_has_a_stop_beside_it(
        h: Harness, llm: ScriptedLLM) -> None:
    h.slack.agent = False  # no agent session: Slack shows no Stop of its own
    gate = asyncio.Event()
    llm.script(text_reply("never shown", gate=gate))
    thread = (await h.event("app_mention", text="a long job"))["ts"]
    companion = await until(lambda: next((m for m in h.bot_messages(CHANNEL_ID, thread)
                                          if has_button(m, ids.STOP)), None))
    [live] = [m for m in h.bot_messages(CHANNEL_ID, thread) if m.chunks]
    assert live.streaming and companion.ts != live.ts
    await h.click(companion, ids.STOP)
    answer = await until(lambda: ChatMessage.filter(role=Role.ASSISTANT,
                                                     status=MessageStatus.STOPPED).first())
    gate.set()
    await until(lambda: h.slack.message(CHANNEL_ID, companion.ts).deleted)  # tidied away
    await h.bot.idle()
    shown = h.slack.message(CHANNEL_ID, live.ts)
    assert answer.error == "Stopped." and not shown.streaming and has_button(shown, ids.REGENERATE)
    assert [m.ts for m in h.bot_messages(CHANNEL_ID, thread)] == [live.ts]


async def test_with_the_native_stop_a_streamed_turn_has_no_companion(
        h: Harness, llm: ScriptedLLM) -> None:
    await a_quick_turn(h, llm)
    assert len(h.slack.calls_to("chat.postMessage")) == 0  # the stream is the only message
    assert not h.slack.calls_to("chat.delete")
