"""The PostgreSQL pool: a query outside a transaction is one server transaction, not two (no
reset round trip on release), and a transaction left open still never reaches the next user."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from tortoise import connections

from core.store.db import asyncpg_dsn
from tests.conftest import BACKEND

pytestmark = pytest.mark.skipif(BACKEND != "postgres", reason="a PostgreSQL pool property")


async def test_a_connection_goes_back_to_the_pool_without_a_reset_query(db: str) -> None:
    pool = connections.get("default")._pool
    sent: list[str] = []

    def record(query: asyncpg.connection.LoggedQuery) -> None:
        sent.append(query.query)

    async with pool.acquire() as connection:
        raw = connection._con  # the connection itself outlives the pool's proxy of it
        raw.add_query_logger(record)
        assert await connection.fetchval("SELECT 1") == 1
    # released: asyncpg's default would now send `SELECT pg_advisory_unlock_all(); ... RESET ALL`
    raw.remove_query_logger(record)
    assert sent == ["SELECT 1"]


async def test_an_open_transaction_is_rolled_back_before_the_connection_is_reused(db: str) -> None:
    pool = connections.get("default")._pool
    async with pool.acquire() as connection:
        await connection.execute("BEGIN")
        await connection.execute("CREATE TEMP TABLE left_open (x int)")
        pid = connection.get_server_pid()
    async with pool.acquire() as connection:
        assert connection.get_server_pid() == pid  # the same connection (the pool is LIFO)
        assert not connection.is_in_transaction()
        assert await connection.fetchval("SELECT to_regclass('pg_temp.left_open')") is None


async def test_a_query_cancelled_midway_closes_its_connection(db: str) -> None:
    client = connections.get("default")
    watcher = await asyncpg.connect(asyncpg_dsn(db))  # outside the pool under test
    try:
        sleeping = asyncio.create_task(client.execute_query("SELECT pg_sleep(1)"))
        async with asyncio.timeout(10):
            while not (pid := await watcher.fetchval(
                    "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(1)' "
                    "AND state = 'active' AND datname = current_database()")):
                await asyncio.sleep(0.01)
        sleeping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sleeping
        # its protocol state is unknown: the connection is not handed out again (one that was
        # could keep the server waiting for the rest of a statement, holding its locks)
        async with asyncio.timeout(10):
            while await watcher.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
                                         pid):
                await asyncio.sleep(0.01)
        assert (await client.execute_query("SELECT 1"))[1][0][0] == 1
    finally:
        await watcher.close()
