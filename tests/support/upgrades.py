"""A migration run on a database that already holds rows: a fresh database migrated up to a
point, rows written there with raw SQL (the models of this checkout may not fit it yet), then
every later migration applied."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from tortoise import Tortoise, connections
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.migrations.api.migrate import migrate

from core.store.db import open_database, tortoise_config
from tests.conftest import BACKEND, new_database

Seed = Callable[[BaseDBAsyncClient], Awaitable[None]]


@asynccontextmanager
async def upgraded(tmp_path: Path, migrated_database: str, before: str,
                   seed: Seed) -> AsyncIterator[None]:
    """A database at migration `before` with `seed`'s rows, then migrated to the end: the ORM
    of this process points at it inside the block, and back at `migrated_database` after."""
    async with new_database(tmp_path) as url:
        config = tortoise_config(url)
        try:
            await migrate(config=config, target=before)
            await Tortoise.init(config=config)
            await seed(connections.get("default"))
            await Tortoise.close_connections()
            await migrate(config=config)
            await Tortoise.init(config=config)
            yield
        finally:
            await Tortoise.close_connections()
            await open_database(migrated_database)


async def one_conversation(db: BaseDBAsyncClient) -> None:
    """A conversation (id 1) with one message."""
    mark = "$1" if BACKEND == "postgres" else "?"
    await db.execute_query(
        "INSERT INTO chat_session (uuid, hermes_session, status, created_at, "
        "last_message_at, updated_at) VALUES ('6f1c2a9e-0000-4000-8000-000000000001', "
        "'chat-x', 'ACTIVE', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)")
    await db.execute_query(
        "INSERT INTO chat_message (session_id, is_active, branch_order, role, content, "
        f"status, created_at) VALUES (1, {mark}, 0, 'USER', 'hello', 'SENT', "
        "CURRENT_TIMESTAMP)", [True])
