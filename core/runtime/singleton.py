"""Exactly one replica runs the upkeep jobs (DESIGN §8).

On PostgreSQL: a session advisory lock held on a connection of its own; when its holder dies
the connection closes, the lock frees, and another replica's next try takes it over.
On SQLite: the database is one process's alone; a second process is refused with a message
saying why (an exclusive lock on a file beside the database).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

import asyncpg

from core.db import asyncpg_dsn, is_sqlite
from core.errors import Conflict

ADVISORY_KEY = 7_004_231_868  # an arbitrary constant: the name of our one lock


class SchedulerLock:
    """`await lock.try_acquire()` until it says True; `await lock.release()` at shutdown."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._connection: asyncpg.Connection | None = None
        self._file: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._connection is not None or self._file is not None

    async def try_acquire(self) -> bool:
        """Take the lock if it is free; True once held."""
        if self.held:
            return True
        if is_sqlite(self.database_url):
            return self._lock_file()
        connection = await asyncpg.connect(asyncpg_dsn(self.database_url))
        if await connection.fetchval("SELECT pg_try_advisory_lock($1)", ADVISORY_KEY):
            self._connection = connection
            return True
        await connection.close()
        return False

    async def release(self) -> None:
        """Let another replica (or the next start) take over."""
        if self._connection is not None:
            await self._connection.close()
            self._connection = None
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None

    def _lock_file(self) -> bool:
        path = Path(self.database_url.removeprefix("sqlite://").split("?", 1)[0] + ".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise Conflict(
                f"another hermes-chat process already uses {path.with_suffix('')}; SQLite runs "
                "one replica only (use PostgreSQL in DATABASE_URL for several)"
            ) from None
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle
        return True

