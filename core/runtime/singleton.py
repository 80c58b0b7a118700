"""Exactly one replica runs the upkeep jobs.

On PostgreSQL: a session advisory lock held on a connection of its own. When its holder dies the
connection closes, the lock frees, and another replica's next try (every half lease) takes it
over; the lock connection's TCP keepalives are set from the lease so that a holder whose machine
vanished without closing its socket is noticed by the server too. A holder checks its connection
at each try: one that lost it (the server dropped it, the network broke) stops its jobs, so two
replicas never run them at once for longer than that check.
On SQLite: the database is one process's alone; a second process is refused with a message
saying why (an exclusive lock on a file beside the database).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Protocol

import asyncpg

from core.errors import Conflict
from core.store.db import asyncpg_dsn, is_sqlite

log = logging.getLogger(__name__)
ADVISORY_KEY = 7_004_231_868  # an arbitrary constant: the name of our one lock
UPKEEP_HERE = "this replica runs the upkeep jobs"


class SchedulerLock:
    """`await lock.try_acquire()` until it says True (and again to check it still holds);
    `await lock.release()` at shutdown."""

    def __init__(self, database_url: str, lease_seconds: float = 30.0) -> None:
        self.database_url = database_url
        self.lease_seconds = lease_seconds
        self._connection: asyncpg.Connection | None = None
        self._file: IO[str] | None = None

    @property
    def held(self) -> bool:
        """Whether this lock was held at its last try (`try_acquire` checks it still is)."""
        return self._connection is not None or self._file is not None

    async def try_acquire(self) -> bool:
        """Take the lock if it is free; True while held. A lock found lost says False once,
        so that its jobs stop before anyone takes it again."""
        if self._file is not None:
            return True
        if self._connection is not None:
            if await self._still_connected():
                return True
            log.warning("runtime: the scheduler lock's database connection was lost")
            return False  # the jobs stop here; the next try (this replica's or another's) leads
        if is_sqlite(self.database_url):
            return self._lock_file()
        connection = await asyncpg.connect(asyncpg_dsn(self.database_url),
                                           timeout=self.lease_seconds / 2,
                                           server_settings=self._keepalives())
        if await connection.fetchval("SELECT pg_try_advisory_lock($1)", ADVISORY_KEY):
            self._connection = connection
            return True
        await connection.close()
        return False

    async def release(self) -> None:
        """Let another replica (or the next start) take over."""
        if self._connection is not None:
            connection, self._connection = self._connection, None
            try:
                await asyncio.wait_for(connection.close(), self.lease_seconds / 2)
            except (TimeoutError, OSError, asyncpg.PostgresError):
                connection.terminate()
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None

    async def _still_connected(self) -> bool:
        """A session lock lives as long as its connection: a round trip proves both."""
        assert self._connection is not None
        try:
            await self._connection.fetchval("SELECT 1", timeout=self.lease_seconds / 2)
        except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            self._connection.terminate()
            self._connection = None
            return False
        return True

    def _keepalives(self) -> dict[str, str]:
        """The server gives up on a silent peer within about two thirds of a lease."""
        idle = max(1, int(self.lease_seconds / 3))
        return {"tcp_keepalives_idle": str(idle),
                "tcp_keepalives_interval": str(max(1, idle // 2)),
                "tcp_keepalives_count": "2"}

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


class Jobs(Protocol):
    """What `Upkeep` needs of the started jobs (an apscheduler scheduler)."""

    def shutdown(self, wait: bool = True) -> None: ...


class Upkeep:
    """Runs the jobs while this replica holds the lock: every `every` seconds (half a lease) it
    tries the lock, starts the jobs when it gets it and stops them when it loses it."""

    def __init__(self, lock: SchedulerLock, start: Callable[[], Jobs], every: float) -> None:
        self.lock = lock
        self.every = every
        self._start = start
        self._jobs: Jobs | None = None
        self._quiet_start = lock.held  # start-up already said this replica leads

    @property
    def leading(self) -> bool:
        return self._jobs is not None

    async def run(self) -> None:
        """Until cancelled; the jobs stop with it."""
        try:
            while True:
                await self.step()
                await asyncio.sleep(self.every)
        finally:
            self._stop()

    async def step(self) -> None:
        """One try of the lock, and the jobs started or stopped to match."""
        try:
            held = await self.lock.try_acquire()
        except Conflict:
            raise
        except Exception as error:  # the database is away: no lock we can prove, no jobs
            log.warning("runtime: could not try the scheduler lock (%s); will retry", error)
            held = False
        if held and self._jobs is None:
            self._jobs = self._start()
            if not self._quiet_start:
                log.info("runtime: %s from now on", UPKEEP_HERE)
            self._quiet_start = False
        elif not held and self._jobs is not None:
            self._stop()
            log.warning("runtime: lost the scheduler lock; upkeep jobs stopped here until this "
                        "replica takes it again")

    def _stop(self) -> None:
        if self._jobs is not None:
            self._jobs.shutdown(wait=False)
            self._jobs = None
