"""Migration 0022 (channel settings, busy threads) on a database that already holds a
conversation, on SQLite and PostgreSQL: the conversation keeps no channel settings (the
service's own), its messages are no steer, and a channel's settings can be stored once."""

from __future__ import annotations

from pathlib import Path

import pytest
from tortoise.exceptions import IntegrityError

from core.store.models import ChannelSetting, ChatMessage, ChatSession, Platform
from tests.support.upgrades import one_conversation, upgraded

BEFORE = "hermes.0021_schedules"


async def test_existing_conversations_keep_the_services_settings(
    tmp_path: Path, migrated_database: str
) -> None:
    async with upgraded(tmp_path, migrated_database, BEFORE, one_conversation):
        session = await ChatSession.get()
        assert session.channel_settings is None
        assert [m.kind for m in await ChatMessage.all()] == [None]
        await ChannelSetting.create(platform=Platform.SLACK, workspace="T1", channel="C1",
                                    settings={"busy_mode": "queue"})
        with pytest.raises(IntegrityError):
            await ChannelSetting.create(platform=Platform.SLACK, workspace="T1",
                                        channel="C1", settings={})
        assert (await ChannelSetting.get()).settings == {"busy_mode": "queue"}
