"""Migration 0018 (usage and spend limits) on a database that already holds conversations:
the new column of `chat_message` is filled in for the rows there, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from tortoise import connections

from tests.support.upgrades import one_conversation, upgraded

BEFORE = "hermes.0016_discord_shard_claim"


async def test_existing_messages_are_not_exempt_from_spend_limits(
    tmp_path: Path, migrated_database: str
) -> None:
    async with upgraded(tmp_path, migrated_database, BEFORE, one_conversation):
        rows = await connections.get("default").execute_query_dict(
            "SELECT spend_exempt FROM chat_message")
        assert [bool(r["spend_exempt"]) for r in rows] == [False]
