"""Channel settings and busy threads (docs/channels.md), on Slack (streamed and edited) and
Discord through their fakes: the same scenario asserts the same outcome on each, in core terms
(the database, what reached the Bridge, core's words)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.conversation import refusals, turns
from core.runtime.pool import RunPool
from core.store.models import ChannelSetting, ChatMessage, ChatSession, MessageStatus, Role
from tests.bots.contract.drivers import Chat, Conversation, talking
from tests.support.contract import answers, assistants, run_starts, started, working
from tests.core.runtime.waiting import until
from tests.fakes.fake_bridge import FakeBridge


@pytest.fixture(autouse=True)
def every_task_ends(no_leaked_tasks: None) -> None:
    """Each scenario leaves no task running."""


@pytest.fixture
async def admin(platform: tuple[str, Any], runs: RunPool) -> AsyncIterator[Chat]:
    """The bot, and a person who is one of its CHAT_ADMINS."""
    async with talking(platform, runs, admins=True) as driver:
        yield driver


async def sessions() -> list[ChatSession]:
    return await ChatSession.all().order_by("id")


async def test_channel_settings_reach_new_conversations_and_are_applied_to_old_ones(
        admin: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    old = await started(admin, fake_bridge, "before", "Hello.")
    said = await admin.channel(old, "set system_prompt Answer like a pirate.")
    assert "✅ Done" in said and "`system_prompt`: `Answer like a pirate.` (channel)" in said
    await admin.told(old, "changed this channel's settings: set `system_prompt`")
    await admin.channel(old, "set thread_context 3")
    assert (await ChannelSetting.get()).settings == {
        "system_prompt": "Answer like a pirate.", "thread_context": 3}

    new = await started(admin, fake_bridge, "after", "Arr.")
    first, second = run_starts(fake_bridge)
    assert first["system_prompt"] is None and second["system_prompt"] == "Answer like a pirate."
    kept = [s.channel_settings for s in await sessions()]
    assert kept == [None, {"system_prompt": "Answer like a pirate.", "thread_context": 3}]
    status = await admin.command(new, "status")
    assert "`system_prompt` `Answer like a pirate.`" in status and "`thread_context` `3`" in status

    fake_bridge.default_script = answers("Still plain.")
    await admin.say(old, "and you?")  # the old conversation keeps what it started with
    await admin.shown(old, "Still plain.", "regenerate")
    assert run_starts(fake_bridge)[-1]["system_prompt"] is None

    said = await admin.channel(old, "apply")
    assert "✅ Done" in said
    fake_bridge.default_script = answers("Aye.")
    await admin.say(old, "now?")
    await admin.shown(old, "Aye.", "regenerate")
    assert run_starts(fake_bridge)[-1]["system_prompt"] == "Answer like a pirate."


async def test_only_a_chat_admin_changes_a_channels_settings(
        chat: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv = await started(chat, fake_bridge)
    shown = await chat.channel(conv, "show")
    assert "`busy_mode`: `refuse` (service)" in shown
    refused = await chat.channel(conv, "set busy_mode queue")
    assert refused == refusals.CHANNEL_ONLY_ADMINS
    assert await ChannelSetting.all().count() == 0


async def test_a_bad_value_is_told_and_changes_nothing(
        admin: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv = await started(admin, fake_bridge)
    said = await admin.channel(conv, "set busy_mode sometimes")
    assert "busy_mode" in said and "refuse, queue, steer" in said
    said = await admin.channel(conv, "set model no-such-model")
    assert "model" in said
    assert await ChannelSetting.all().count() == 0


async def busy_thread(admin: Chat, bridge: FakeBridge, mode: str, asked: str) -> Conversation:
    """A conversation whose run holds, its channel's busy mode set and applied to it."""
    conv, _ = await working(admin, bridge, asked, "busy…")
    await admin.channel(conv, f"set busy_mode {mode}")
    await admin.channel(conv, "apply")
    return conv


async def test_queue_runs_the_message_next_shows_its_place_and_can_be_cancelled(
        admin: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv = await busy_thread(admin, fake_bridge, "queue", "long job")
    await admin.say(conv, "this, no")
    second = await admin.shown(conv, "⏳ Queued (#1 in line)", "stop")
    await admin.say(conv, "then this")
    await admin.shown(conv, "⏳ Queued (#2 in line)", "stop")
    await admin.click(second, "stop", as_shown=True)  # its own Stop, not the running answer's
    first, cancelled, third = await assistants()
    await until(runs, cancelled.run_id, lambda u: u.finished)
    await admin.shown(conv, "⏳ Queued (#1 in line)", "stop")  # moved up, still behind the first
    assert (await ChatMessage.get(id=third.id)).status == MessageStatus.QUEUED
    fake_bridge.default_script = answers("Then done.")
    fake_bridge.release(first.run_id)
    await admin.shown(conv, "Then done.", "regenerate")
    statuses = [(await ChatMessage.get(id=m.id)).status for m in (first, cancelled, third)]
    assert statuses == [MessageStatus.SUCCESS, MessageStatus.STOPPED, MessageStatus.SUCCESS]
    asked = [r["user_message"] for r in run_starts(fake_bridge)]
    assert asked == ["long job", "then this"], "the cancelled message never ran"


async def test_steer_gives_the_running_answer_the_message_as_guidance(
        admin: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv = await busy_thread(admin, fake_bridge, "steer", "write a report")
    await admin.say(conv, "use metric units")
    await admin.told(conv, refusals.STEERED)
    [answer] = await assistants()
    assert fake_bridge.runs[answer.run_id].steers == ["use metric units"]
    steer = await ChatMessage.get(kind="steer")
    assert (steer.role, steer.parent_id, steer.content, steer.is_active) == (
        Role.USER, answer.id, "use metric units", False)
    fake_bridge.release(answer.run_id)
    await admin.shown(conv, "late", "regenerate")
    assert len(await assistants()) == 1, "guidance starts no run of its own"
    assert [m.content for m in await ChatMessage.filter(is_active=True).order_by("id")] == [
        "write a report", "late"]


async def test_refuse_is_the_default_and_a_refused_message_writes_nothing(
        chat: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv, _ = await working(chat, fake_bridge, "long job", "busy…")
    await chat.say(conv, "are you there?")
    await chat.shown(conv, refusals.BUSY, "stop")
    assert await ChatMessage.filter(content="are you there?").count() == 0
    [answer] = await assistants()
    fake_bridge.release(answer.run_id)
    await chat.shown(conv, "late", "regenerate")


async def test_a_workspace_default_is_overridden_by_its_channel(
        admin: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv = await started(admin, fake_bridge)
    await admin.channel(conv, "workspace set busy_mode queue") if admin.name.startswith(
        "slack") else await _discord_workspace(admin, conv, "busy_mode", "queue")
    shown = await admin.channel(conv, "show")
    assert "`busy_mode`: `queue` (workspace)" in shown
    await admin.channel(conv, "set busy_mode steer")
    shown = await admin.channel(conv, "show")
    assert "`busy_mode`: `steer` (channel)" in shown


async def _discord_workspace(admin: Chat, conv: Any, key: str, value: str) -> None:
    from tests.bots.contract.drivers import DiscordChat
    from tests.bots.discord.harness import reply_of

    assert isinstance(admin, DiscordChat)
    record = await admin.fake.run_command("hermes", "channel", options={
        "action": "set", "key": key, "value": value, "scope": "workspace"},
        channel_id=conv.thread)
    await reply_of(admin.fake, record)


async def test_the_busy_notice_lets_the_asker_queue_their_message_after_all(
        chat: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv, _ = await working(chat, fake_bridge, "long job", "busy…")
    await chat.say(conv, "then this")
    notice = await chat.shown(conv, refusals.BUSY_CHOICES, "queue")
    assert chat.offers(notice, "steer") and chat.offers(notice, "stop")
    assert await ChatMessage.filter(content="then this").count() == 0, "nothing in the tree yet"
    await chat.click(notice, "queue")
    await chat.shown(conv, "queued their message")
    await chat.shown(conv, "⏳ Queued (#1 in line)", "stop")
    first, queued = await assistants()
    assert queued.status == MessageStatus.QUEUED
    fake_bridge.default_script = answers("Then done.")
    fake_bridge.release(first.run_id)
    await chat.shown(conv, "Then done.", "regenerate")
    assert [r["user_message"] for r in run_starts(fake_bridge)] == ["long job", "then this"]
    await chat.click(notice, "queue", as_shown=True)  # the old buttons again: chosen already
    await chat.told_privately(turns.CHOSEN)


async def test_the_busy_notice_lets_the_asker_steer_with_their_message(
        chat: Chat, runs: RunPool, fake_bridge: FakeBridge) -> None:
    conv, _ = await working(chat, fake_bridge, "write a report", "writing…")
    await chat.say(conv, "use metric units")
    notice = await chat.shown(conv, refusals.BUSY_CHOICES, "steer")
    await chat.click(notice, "steer")
    await chat.told(conv, refusals.STEERED)
    await chat.shown(conv, "as guidance")
    [answer] = await assistants()
    assert fake_bridge.runs[answer.run_id].steers == ["use metric units"]
    assert (await ChatMessage.get(kind="steer")).content == "use metric units"
    fake_bridge.release(answer.run_id)
    await chat.shown(conv, "late", "regenerate")
