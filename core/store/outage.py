"""Outlasting a database outage (a PostgreSQL restart) without losing or doubling a write.

What an outage looks like through tortoise-orm 1.1.9 + asyncpg 0.32 (a restart, or connections
terminated and refused): tortoise passes asyncpg's errors through untranslated; the query that
was on a dropped connection fails (`ConnectionDoesNotExistError`, or `InterfaceError` from the
rollback of a transaction cut mid-way); while the server refuses connections each acquire fails
(`ConnectionRefusedError`, `CannotConnectNowError`, or `ObjectNotInPrerequisiteStateError` for a
database closed to connections). The asyncpg pool heals itself: an acquire replaces a closed
connection by a new one, so the first query after the server is back just works. What the pool
cannot do is wait for that, so `outlast` retries an operation until then.

One thing does need help: tortoise's `in_transaction()` makes the acquired connection the
task's connection *before* it sends BEGIN, and does not undo that when BEGIN fails (a connection
dropped just before it); every later query of that task then runs on the dead transaction, so a
long-lived task (a run, the log flusher) would fail for good. `transaction()` undoes it.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

import asyncpg
from tortoise import get_connections
from tortoise.backends.base.client import (
    BaseDBAsyncClient, TransactionContext, TransactionContextPooled,
)
from tortoise.backends.sqlite.client import SqliteTransactionContext
from tortoise.transactions import in_transaction

from core.errors import DatabaseUnavailable

log = logging.getLogger(__name__)
T = TypeVar("T")


@asynccontextmanager
async def transaction() -> AsyncIterator[BaseDBAsyncClient]:
    """`in_transaction()` of the default connection, safe when BEGIN fails (see the module)."""
    context = in_transaction("default")
    try:
        inside = await context.__aenter__()
    except BaseException:
        await _undo_failed_begin(context)
        raise
    try:
        yield inside
    except BaseException as error:
        await context.__aexit__(type(error), error, error.__traceback__)
        raise
    await context.__aexit__(None, None, None)


async def _undo_failed_begin(context: TransactionContext) -> None:
    if isinstance(context, SqliteTransactionContext):
        _release_sqlite_lock(context)
        return
    # PostgreSQL's pooled context: SQLite is a file of this process, it does not restart
    token = getattr(context, "token", None)  # set once a pooled connection was acquired
    if not isinstance(context, TransactionContextPooled) or token is None:
        return
    get_connections().reset(token)  # the task's own connection again, not the dead transaction
    connection = context.client._connection
    if connection is None or connection.is_closed():  # asyncpg returned a closed one already
        return
    try:
        await context.client._parent._pool.release(connection)
    except Exception:  # its reset failed, so asyncpg terminated it: the pool replaces it
        log.debug("a connection whose BEGIN failed was terminated", exc_info=True)


def _release_sqlite_lock(context: SqliteTransactionContext) -> None:
    """A task cancelled inside SQLite's BEGIN (a bot stopping mid-write) holds the connection's
    transaction lock, which tortoise releases only in `__aexit__`: every later query of the
    process would wait for it forever. The token is set just before BEGIN, after the lock."""
    token = getattr(context, "token", None)
    if token is not None:
        get_connections().reset(token)
        context._trxlock.release()


@dataclass(frozen=True, slots=True)
class Patience:
    """How long `outlast` waits for the database: capped exponential backoff, then it gives up
    (DATABASE_OUTAGE_TIMEOUT seconds; a PostgreSQL restart takes seconds, not minutes)."""

    give_up_after: float = 180.0
    first_delay: float = 0.05
    max_delay: float = 2.0


# Errors that mean "no database right now", not "this statement is wrong" (see the docstring).
_UNREACHABLE = (
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08 and connections dropped mid-query
    asyncpg.exceptions.OperatorInterventionError,  # 57P01 admin shutdown, 57P03 starting up
    asyncpg.exceptions.TooManyConnectionsError,  # everyone reconnecting at once after a restart
    # a connection caught mid-drop: it got the server's FATAL error but not yet the end of the
    # stream, so asyncpg refuses the next statement ("another operation is in progress")
    asyncpg.exceptions.InternalClientError,
    OSError,  # connection refused or reset
    TimeoutError,  # connect timeout
)


def is_outage(error: BaseException) -> bool:
    """Whether `error`, or an error it came from, says the database cannot be reached now."""
    seen: BaseException | None = error
    for _ in range(5):  # causes and contexts form a short chain; never loop on a cycle
        if seen is None:
            return False
        if isinstance(seen, _UNREACHABLE) or _refused_or_closed(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _refused_or_closed(error: BaseException) -> bool:
    # 55000 exactly (not its lock subclasses): "database ... is not currently accepting
    # connections"; asyncpg's InterfaceError says "connection is closed" for a dropped one.
    if type(error) is asyncpg.exceptions.ObjectNotInPrerequisiteStateError:
        return True
    if isinstance(error, sqlite3.OperationalError):  # another process holds the file's lock
        return "database is locked" in str(error)
    return isinstance(error, asyncpg.InterfaceError) and "connection is closed" in str(error)


async def outlast(
    operation: Callable[[], Awaitable[T]], what: str, patience: Patience = Patience(), *,
    monotonic: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Await `operation()`, again and again while the database is unreachable, until it
    succeeds or `patience.give_up_after` has passed (then DatabaseUnavailable). Other errors
    pass at once. Only for idempotent operations: one may have committed before its answer
    was lost."""
    started = monotonic()
    delay, failures = patience.first_delay, 0
    while True:
        try:
            result = await operation()
        except Exception as error:
            if not is_outage(error):
                raise
            failures += 1
            waited = monotonic() - started
            if waited >= patience.give_up_after:
                log.error("database unreachable for %.0f s while %s; giving up", waited, what)
                raise DatabaseUnavailable(
                    f"the database was unreachable for {waited:.0f} s"
                ) from error
            if failures == 1:
                log.warning("database unreachable while %s (%s: %s); retrying for up to %.0f s",
                            what, type(error).__name__, error, patience.give_up_after)
            await sleep(min(delay, patience.give_up_after - waited))
            delay = min(delay * 2, patience.max_delay)
            continue
        if failures:
            log.info("database back after %d failed attempts while %s", failures, what)
        return result
