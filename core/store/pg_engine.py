"""tortoise's asyncpg backend, with a pool that does not reset a connection it takes back.

asyncpg's pool sends `SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL` on
every release, and tortoise takes a pooled connection for each query outside a transaction:
every such query cost a second round trip and a second server transaction. Our pooled
connections never change session state (no SET, no cursors; LISTEN and the scheduler's
advisory lock live on connections of their own), so there is nothing to reset. A transaction
left open is still rolled back: asyncpg does that before it calls the pool's `reset`.

Without a reset query the pool no longer finds out on release what state a connection is in:
- a query that meets a dropped connection expires the whole pool: its idle siblings lost the
  server too, and each is replaced when next taken instead of failing its next query;
- a query interrupted by cancellation (a run stopped, the process shutting down) may leave its
  connection halfway through the protocol, the server waiting for the rest of it while it holds
  the statement's locks (seen: a DELETE of a lease holding up a TRUNCATE until the pool retired
  the idle connection 300 s later): that connection is closed, never handed out again.
"""

from __future__ import annotations

from typing import Any

import asyncpg
from tortoise.backends.asyncpg import AsyncpgDBClient
from tortoise.backends.base.client import PoolConnectionWrapper

from core.store.outage import is_outage


async def _keep_session(connection: asyncpg.Connection) -> None:
    """Nothing to undo (see the module)."""


class PooledClient(AsyncpgDBClient):
    async def create_pool(self, **kwargs: Any) -> asyncpg.Pool:
        return await asyncpg.create_pool(None, reset=_keep_session, **kwargs)

    def acquire_connection(self) -> PoolConnectionWrapper[asyncpg.Connection]:
        return _ExpiringOnLoss(self, self._pool_init_lock)


class _ExpiringOnLoss(PoolConnectionWrapper[asyncpg.Connection]):
    """A pooled connection whose loss expires the pool, and that is closed when the query on
    it was interrupted (see the module)."""

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        if exc_val is not None and not isinstance(exc_val, Exception) and self.connection:
            self.connection.terminate()  # cancelled mid-query: its protocol state is unknown
        elif exc_val is not None and is_outage(exc_val) and self.client._pool is not None:
            await self.client._pool.expire_connections()
        await super().__aexit__(exc_type, exc_val, exc_tb)


client_class = PooledClient
