"""Migration 0023 on a database that already holds a conversation shown at an older version:
where its branch ends is written down, so a page read from its end shows that version, on
SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from tortoise.backends.base.client import BaseDBAsyncClient

from core.chat import tree
from tests.conftest import BACKEND
from tests.support.upgrades import upgraded

BEFORE = "hermes.0022_channel_settings"
# question 1 -> answer 2 (shown) / answer 3 (a newer version, not shown) -> question 4 -> answer 5
ROWS = [(1, None, "USER", True, 0), (2, 1, "ASSISTANT", True, 0), (3, 1, "ASSISTANT", False, 1),
        (4, 3, "USER", True, 0), (5, 4, "ASSISTANT", True, 0)]


async def test_a_switched_conversation_ends_where_it_is_shown(
    tmp_path: Path, migrated_database: str
) -> None:
    async def switched(db: BaseDBAsyncClient) -> None:
        await db.execute_query(
            "INSERT INTO chat_session (uuid, hermes_session, status, created_at, "
            "last_message_at, updated_at) VALUES ('6f1c2a9e-0000-4000-8000-000000000002', "
            "'chat-y', 'ACTIVE', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)")
        active = {True: "true", False: "false"} if BACKEND == "postgres" else {True: 1, False: 0}
        for message_id, parent, role, is_active, order in ROWS:
            await db.execute_query(
                "INSERT INTO chat_message (id, session_id, parent_id, is_active, branch_order, "
                f"role, content, status, created_at) VALUES ({message_id}, 1, "
                f"{parent or 'NULL'}, {active[is_active]}, {order}, '{role}', 'm{message_id}', "
                "'SENT', CURRENT_TIMESTAMP)")

    async with upgraded(tmp_path, migrated_database, BEFORE, switched):
        assert await tree.active_branch_ids(1) == [1, 2]
        assert await tree.branch_tail(1, 40) == ([1, 2], False)
