"""tortoise's asyncpg backend, with a pool that does not reset a connection it takes back.

asyncpg's pool sends `SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL` on
every release, and tortoise takes a pooled connection for each query outside a transaction:
every such query cost a second round trip and a second server transaction. Our pooled
connections never change session state (no SET, no cursors; LISTEN and the scheduler's
advisory lock live on connections of their own), so there is nothing to reset. A transaction
left open is still rolled back: asyncpg does that before it calls the pool's `reset`.
"""

from __future__ import annotations

from typing import Any

import asyncpg
from tortoise.backends.asyncpg import AsyncpgDBClient


async def _keep_session(connection: asyncpg.Connection) -> None:
    """Nothing to undo (see the module)."""


class PooledClient(AsyncpgDBClient):
    async def create_pool(self, **kwargs: Any) -> asyncpg.Pool:
        return await asyncpg.create_pool(None, reset=_keep_session, **kwargs)


client_class = PooledClient
