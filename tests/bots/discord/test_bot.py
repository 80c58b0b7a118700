"""Starting the bot: without the Message Content intent enabled in the Developer Portal,
Discord closes the gateway (4014) and the log says why (docs/setup-discord.md, step 2)."""

from __future__ import annotations

import logging

import discord
import pytest

from core.runtime.pool import RunPool
from tests.bots.discord.harness import running_bot
from tests.fakes.discordfake import FakeDiscord


async def test_without_the_message_content_intent_the_log_says_why(
    fake_runs: RunPool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="bots.discord.bot")
    async with FakeDiscord(privileged_intents=False) as fake, fake.patch_discord():
        with pytest.raises(discord.PrivilegedIntentsRequired):
            async with running_bot(fake, fake_runs):
                pass
    (record,) = [r for r in caplog.records if r.name == "bots.discord.bot"]
    assert record.getMessage() == "the Discord gateway connection ended"
    assert record.exc_info and isinstance(record.exc_info[1], discord.PrivilegedIntentsRequired)
    assert "privileged intents" in caplog.text and "developer portal" in caplog.text
