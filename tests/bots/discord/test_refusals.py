"""Refusals and notices only Discord has (missing permissions, a thread refused) and the
compaction divider; on the fake Bridge. The Bridge down, the queue, Stop, a busy edit and a
model gone are the conversation contract's (tests/bots/contract), on both platforms."""

from __future__ import annotations

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
from tests.fakes.fake_bridge import FakeBridge, ev
from tests.fakes.changes import WAIT

CREATE_PUBLIC_THREADS, SEND_MESSAGES = 1 << 35, 1 << 11


def revoke(fake: FakeDiscord, permissions: int) -> None:
    """Take permissions from every role of the guild (before the bot connects)."""
    for role in fake.world.guilds[str(fake.guild_id)].roles:
        role["permissions"] = str(int(role["permissions"]) & ~permissions)


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
