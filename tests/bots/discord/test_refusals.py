"""Refusals and notices are clear messages (Bridge down, queued, missing permissions), plus the
live message's Stop button and the compaction divider; on the fake Bridge."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.bridge.client import BridgeClient
from core.catalogue import Catalogue
from core.conversation import commands, refusals
from core.models import ChatMessage, ChatSession, MessageStatus, Role
from core.runtime.pool import RunPool
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    mention,
    reply_of,
    running_bot,
    showing,
    text_of,
)
from tests.fakes import discord_payloads as dp
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.support.runtime import FAST

WAIT = 10.0
CREATE_PUBLIC_THREADS, SEND_MESSAGES = 1 << 35, 1 << 11


def revoke(fake: FakeDiscord, permissions: int) -> None:
    """Take permissions from every role of the guild (before the bot connects)."""
    for role in fake.world.guilds[str(fake.guild_id)].roles:
        role["permissions"] = str(int(role["permissions"]) & ~permissions)


async def test_a_bridge_that_is_down_ends_the_run_with_a_clear_reason(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    await fake_bridge.stop()
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "anyone there?"))
        await fake.wait_until(lambda: showing(fake, asked["id"], "⚠️ Failed"), WAIT, "the failure")
    failed = showing(fake, asked["id"], "⚠️ Failed")
    assert failed is not None and "The agent service is unreachable" in text_of(failed)
    assert button(failed, "Retry")


async def test_a_command_that_needs_the_bridge_says_it_is_down(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    dm = fake.dm_channel_id()
    await fake_bridge.stop()
    async with running_bot(fake, fake_runs):
        memory = await reply_of(fake, await fake.run_command("hermes", "memory", channel_id=dm))
        reset = await reply_of(fake, await fake.run_command("hermes", "reset", channel_id=dm))
    assert text_of(memory) == refusals.BRIDGE_DOWN
    assert memory["flags"] & dp.EPHEMERAL
    # the reset is done in the database (the next message starts a fresh agent), and says
    # in plain words that the Bridge could not be told
    assert "♻️ Reset" in text_of(reset) and commands.AGENT_NOT_DROPPED in text_of(reset)


@pytest.fixture
async def one_slot(db: str, fake_bridge: FakeBridge, skills_dir: Path) -> AsyncIterator[RunPool]:
    async with BridgeClient(fake_bridge.url, policy=FAST) as client:
        runs = RunPool(client, Catalogue((), skills_dir), max_active_runs=1)
        await runs.open()
        yield runs
        await runs.close()


async def test_beyond_the_cap_a_run_shows_its_place_in_the_queue(
    fake: FakeDiscord, one_slot: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [Stall("hold"), ev("done", final_text=f"done {run_id}")]
    async with running_bot(fake, one_slot):
        first = await fake.send_user_message(mention(fake, "first"))
        second = await fake.send_user_message(mention(fake, "second"))
        threads = (first["id"], second["id"])  # either may win the one slot
        await fake.wait_until(lambda: any(showing(fake, t, "⏳ Queued (#1 in line)") for t in threads),
                              WAIT, "one run queued")
        fake_bridge.release("hold")
        await fake.wait_until(lambda: all(answered(fake, t, "done") for t in threads), WAIT, "answers")


async def test_stop_on_the_live_message_stops_the_run(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [ev("text", text="working"), Stall("never")]
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "a long job"))
        await fake.wait_until(lambda: showing(fake, asked["id"], "working"), WAIT, "the live message")
        live = showing(fake, asked["id"], "working")
        assert live is not None
        await fake.click(live["id"], button(live, "Stop")["custom_id"])
        await fake.wait_until(lambda: showing(fake, asked["id"], "⏹ Stopped"), WAIT, "stopped")
    assert [m["id"] for m in bot_messages(fake, asked["id"])] == [live["id"]]
    assert fake_bridge.requests_to("POST", "/runs/")[0].path.endswith("/abort")
    assert fake_runs.active() == []
    assert (await ChatMessage.get(role=Role.ASSISTANT)).status == MessageStatus.STOPPED


async def test_missing_permissions_are_explained_in_the_channel_or_in_private(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    revoke(fake, CREATE_PUBLIC_THREADS)
    async with running_bot(fake, fake_runs):
        await fake.send_user_message(mention(fake, "hello"))
        await fake.wait_until(lambda: bot_messages(fake, fake.channel_id), WAIT, "the explanation")
    (said,) = bot_messages(fake, fake.channel_id)
    assert f"I can't answer in <#{fake.channel_id}>" in text_of(said)
    assert "**Create Public Threads**" in text_of(said) and fake.threads_of(fake.channel_id) == []


async def test_without_send_messages_the_author_is_told_in_a_dm(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    revoke(fake, CREATE_PUBLIC_THREADS | SEND_MESSAGES)
    dm = fake.dm_channel_id()
    async with running_bot(fake, fake_runs):
        await fake.send_user_message(mention(fake, "hello"))
        await fake.wait_until(lambda: bot_messages(fake, dm), WAIT, "the DM")
    assert "**Send Messages**" not in text_of(bot_messages(fake, dm)[0])
    assert "**Create Public Threads**" in text_of(bot_messages(fake, dm)[0])
    assert bot_messages(fake, fake.channel_id) == []


async def test_a_thread_refused_by_discord_is_explained(fake: FakeDiscord, fake_runs: RunPool) -> None:
    fake.fail_next("POST /channels/{channel_id}/messages/{message_id}/threads", status=403,
                   body={"message": "Missing Permissions", "code": 50013})
    async with running_bot(fake, fake_runs):
        await fake.send_user_message(mention(fake, "hello"))
        await fake.wait_until(lambda: bot_messages(fake, fake.channel_id), WAIT, "the explanation")
    (said,) = bot_messages(fake, fake.channel_id)
    assert "I can't open a thread here: Missing Permissions" in text_of(said)


async def test_a_compaction_posts_a_divider_with_the_summary_behind_a_button(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="thinking"),
        ev("context_compacted", summary="We agreed on blue paint.", compacted_until=0),
        ev("done", final_text="done painting"),
    ]
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "paint"))
        thread = asked["id"]
        await fake.wait_until(lambda: showing(fake, thread, "summarised"), WAIT, "the divider")
        await fake.wait_until(lambda: answered(fake, thread, "done painting"), WAIT, "the answer")
        divider = showing(fake, thread, "summarised")
        assert divider is not None
        click = await fake.click(divider["id"], button(divider, "Show summary")["custom_id"])
        summary = await reply_of(fake, click)
    assert "We agreed on blue paint." in text_of(summary) and summary["flags"] & dp.EPHEMERAL
    assert len([m for m in bot_messages(fake, thread) if not m["flags"] & dp.EPHEMERAL]) == 2


async def test_an_edit_while_the_conversation_is_busy_is_refused_with_stop(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [ev("text", text="working"), Stall("never")]
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "first version"))
        thread = asked["id"]
        await fake.wait_until(lambda: showing(fake, thread, "working"), WAIT, "the live message")
        await fake.edit_user_message(asked["id"], mention(fake, "second version"))
        await fake.wait_until(lambda: showing(fake, thread, "edit was not answered"), WAIT, "refusal")
        refusal = showing(fake, thread, "edit was not answered")
        assert refusal is not None
        await fake.click(refusal["id"], button(refusal, "Stop")["custom_id"])
        await fake.wait_until(lambda: showing(fake, thread, "⏹ Stopped"), WAIT, "stopped")
    assert await ChatMessage.filter(role=Role.USER).count() == 1


async def test_a_model_gone_from_the_catalogue_is_a_clear_refusal(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "hello"))
        thread = asked["id"]
        await fake.wait_until(lambda: answered(fake, thread, "done"), WAIT, "the answer")
        await ChatSession.filter().update(model_id="retired")
        await fake.send_user_message("again", channel_id=thread)
        await fake.wait_until(lambda: showing(fake, thread, "Unknown model"), WAIT, "the refusal")
    refusal = showing(fake, thread, "Unknown model")
    assert refusal is not None and "🔎 Unknown model 'retired' (models: fast, smart)" in text_of(refusal)
