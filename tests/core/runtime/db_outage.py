"""A PostgreSQL restart as this process's clients see it, without restarting the shared server
(other test processes use it): the test database's connections are terminated and new ones
refused (ALLOW_CONNECTIONS false) until `end()`; other databases are untouched."""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType

import asyncpg
from tests.fakes.changes import WAIT


class DatabaseOutage:
    """`async with DatabaseOutage(url, admin_url) as outage:` then `begin()` / `end()`; leaving
    the block always lets connections in again."""

    def __init__(self, database_url: str, admin_url: str) -> None:
        self.name = database_url.rsplit("/", 1)[1]
        self._admin_url = admin_url
        self._admin: asyncpg.Connection | None = None

    async def __aenter__(self) -> DatabaseOutage:
        self._admin = await asyncpg.connect(self._admin_url)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        assert self._admin is not None
        try:
            await self.end()
        finally:
            await self._admin.close()

    async def begin(self) -> None:
        """Refuse new connections, drop every open one, and wait until they are gone."""
        await self._execute(f'ALTER DATABASE "{self.name}" WITH ALLOW_CONNECTIONS false')
        async with asyncio.timeout(WAIT):
            while await self._fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()", self.name
            ):
                await asyncio.sleep(0.01)  # polling: terminated backends take a moment to exit

    def drop_unnoticed(self) -> None:
        """Drop every connection while this process's event loop is held (a blocking call, on
        purpose): the client cannot see the drops, so its next query is the first to find out,
        as one racing a restart does."""
        done = threading.Thread(target=asyncio.run, args=(self._terminate_all(),))
        done.start()
        done.join(WAIT)

    async def _terminate_all(self) -> None:
        admin = await asyncpg.connect(self._admin_url)
        try:
            async with asyncio.timeout(WAIT):
                while await admin.fetchval(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = $1 AND pid <> pg_backend_pid()", self.name
                ):
                    await asyncio.sleep(0.01)
        finally:
            await admin.close()

    async def end(self) -> None:
        """Accept connections again (the server never went down)."""
        await self._execute(f'ALTER DATABASE "{self.name}" WITH ALLOW_CONNECTIONS true')

    async def _execute(self, statement: str) -> None:
        assert self._admin is not None
        await self._admin.execute(statement)

    async def _fetchval(self, query: str, *args: object) -> object:
        assert self._admin is not None
        return await self._admin.fetchval(query, *args)
