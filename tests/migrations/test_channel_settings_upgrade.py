"""Migration 0022 (channel settings, busy threads) on a database that already holds a
conversation, on SQLite and PostgreSQL: the conversation keeps no channel settings (the
service's own), its messages are no steer, and a channel's settings can be stored once."""

from __future__ import annotations

from pathlib import Path

import pytest
from tortoise import Tortoise, connections
from tortoise.exceptions import IntegrityError
from tortoise.migrations.api.migrate import migrate

from core.store.db import open_database, tortoise_config
from core.store.models import ChannelSetting, ChatMessage, ChatSession, Platform
from tests.conftest import BACKEND, new_database

BEFORE = "hermes.0021_schedules"


async def test_existing_conversations_keep_the_services_settings(
    tmp_path: Path, migrated_database: str
) -> None:
    """The ORM of this process is pointed at another database meanwhile, and back after."""
    async with new_database(tmp_path) as url:
        config = tortoise_config(url)
        try:
            await migrate(config=config, target=BEFORE)
            await Tortoise.init(config=config)
            mark = "$1" if BACKEND == "postgres" else "?"
            db = connections.get("default")
            await db.execute_query(
                "INSERT INTO chat_session (uuid, hermes_session, status, created_at, "
                "last_message_at, updated_at) VALUES ('6f1c2a9e-0000-4000-8000-000000000002', "
                "'chat-y', 'ACTIVE', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)")
            await db.execute_query(
                "INSERT INTO chat_message (session_id, is_active, branch_order, role, content, "
                f"status, created_at) VALUES (1, {mark}, 0, 'USER', 'hello', 'SENT', "
                "CURRENT_TIMESTAMP)", [True])
            await Tortoise.close_connections()
            await migrate(config=config)
            await Tortoise.init(config=config)
            session = await ChatSession.get()
            assert session.channel_settings is None
            assert [m.kind for m in await ChatMessage.all()] == [None]
            await ChannelSetting.create(platform=Platform.SLACK, workspace="T1", channel="C1",
                                        settings={"busy_mode": "queue"})
            with pytest.raises(IntegrityError):
                await ChannelSetting.create(platform=Platform.SLACK, workspace="T1",
                                            channel="C1", settings={})
            assert (await ChannelSetting.get()).settings == {"busy_mode": "queue"}
        finally:
            await Tortoise.close_connections()
            await open_database(migrated_database)
