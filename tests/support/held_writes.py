"""The database holding this process's writes, as a database busy with other work holds them.

On PostgreSQL, a lock on the sessions table from another connection: a new conversation's
first row waits for it, the rest of the database is free (the event ledger, the rate budgets).
On SQLite, a transaction of the block's own on the process's one connection: every other task's
query waits for it (tortoise serialises them on that connection), the block's own queries run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from tortoise.transactions import in_transaction

from core.store.db import asyncpg_dsn, is_sqlite


@asynccontextmanager
async def held_writes(database_url: str) -> AsyncIterator[None]:
    """Writes held until the block ends (then let through, nothing of them lost)."""
    if is_sqlite(database_url):
        async with in_transaction("default"):
            yield
        return
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        async with connection.transaction():
            await connection.execute("LOCK TABLE chat_session IN SHARE ROW EXCLUSIVE MODE")
            yield
    finally:
        await connection.close()
