"""One consistent view of the database across many queries: what a long read (an export,
streamed a page at a time) sees, whatever is written meanwhile.

- PostgreSQL: a pooled connection in a `REPEATABLE READ READ ONLY` transaction; every query
  in it sees the snapshot taken by the first one.
- SQLite: a connection of its own on the same file, in one read transaction (`BEGIN`, then
  `query_only`): in WAL mode a reader keeps the snapshot of its first read while the one
  writer goes on. The process's shared connection would do the same only inside a
  transaction, which holds tortoise's lock: every other query of the process would wait
  behind a slow download.

Queries run on the snapshot with tortoise's `.using_db(reader)`. The context manager ends
the transaction however the read ends (done, failed, cancelled by a client gone away).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from tortoise import connections
from tortoise.backends.asyncpg.client import AsyncpgDBClient, TransactionWrapper
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.backends.sqlite.client import SqliteClient

DEFAULT = "default"


@asynccontextmanager
async def read_snapshot() -> AsyncIterator[BaseDBAsyncClient]:
    """A read-only client on one snapshot of the default database, for `.using_db()`."""
    client = connections.get(DEFAULT)
    if isinstance(client, SqliteClient):
        async with _sqlite_snapshot(client) as reader:
            yield reader
    elif isinstance(client, AsyncpgDBClient):
        async with _postgres_snapshot(client) as reader:
            yield reader
    else:  # pragma: no cover - core/store/db.py configures only these two
        raise TypeError(f"no snapshot reads on {type(client).__name__}")


@asynccontextmanager
async def _postgres_snapshot(client: AsyncpgDBClient) -> AsyncIterator[BaseDBAsyncClient]:
    # The pool's wrapper (core/store/pg_engine.py) closes the connection if the read is cancelled
    # mid-query; asyncpg's transaction rolls back on the way out.
    async with client.acquire_connection() as connection:
        async with connection.transaction(isolation="repeatable_read", readonly=True):
            reader = TransactionWrapper(client)  # tortoise's client over one connection
            reader._connection = connection
            yield reader


@asynccontextmanager
async def _sqlite_snapshot(client: SqliteClient) -> AsyncIterator[BaseDBAsyncClient]:
    if client.filename == ":memory:":  # no second connection can open it: reads as they come
        yield client
        return
    reader = SqliteClient(client.filename, connection_name=f"{client.connection_name}-snapshot")
    try:
        await reader.create_connection(with_db=True)
        await reader.execute_script("PRAGMA query_only = ON")
        await reader.execute_script("BEGIN")  # closing the connection ends it, however we leave
        yield reader
    finally:
        await reader.close()
