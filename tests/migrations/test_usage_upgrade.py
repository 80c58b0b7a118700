"""Migration 0018 (usage and spend limits) on a database that already holds conversations:
the new column of `chat_message` is filled in for the rows there, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from tortoise import Tortoise, connections
from tortoise.migrations.api.migrate import migrate

from core.store.db import open_database, tortoise_config
from tests.conftest import BACKEND, new_database

BEFORE = "hermes.0016_discord_shard_claim"


async def test_existing_messages_are_not_exempt_from_spend_limits(
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
                "last_message_at, updated_at) VALUES ('6f1c2a9e-0000-4000-8000-000000000001', "
                "'chat-x', 'ACTIVE', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)")
            await db.execute_query(
                "INSERT INTO chat_message (session_id, is_active, branch_order, role, content, "
                f"status, created_at) VALUES (1, {mark}, 0, 'USER', 'hello', 'SENT', "
                "CURRENT_TIMESTAMP)", [True])
            await Tortoise.close_connections()
            await migrate(config=config)
            await Tortoise.init(config=config)
            rows = await connections.get("default").execute_query_dict(
                "SELECT spend_exempt FROM chat_message")
            assert [bool(r["spend_exempt"]) for r in rows] == [False]
        finally:
            await Tortoise.close_connections()
            await open_database(migrated_database)
