"""News of a run's stored log across replicas: PostgreSQL LISTEN/NOTIFY.

The replica that flushes log rows sends one notification per message once the flush committed
(core/runtime/log_buffer.py), when the rows are readable.
Each process holds one LISTEN connection (`listening`) and wakes the followers of that message
in this process. A listener that was away missed whatever was sent meanwhile, so on every
(re)connect all followers wake and read the log again; a slow fallback poll covers anything
else. On SQLite there is one replica only: followers poll, and nothing is announced.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from core.store.db import asyncpg_dsn, is_sqlite

log = logging.getLogger(__name__)

CHANNEL = "hermes_run_log"
POLL_SECONDS = 0.5  # SQLite, or a pool built without a listener: the stored log is polled
FALLBACK_SECONDS = 5.0  # PostgreSQL: a safety net behind the notifications
APPLICATION_NAME = "hermes-chat log listener"  # how operators spot it in pg_stat_activity
RECONNECT_SECONDS = 1.0
PING_SECONDS = 30.0  # a silent network drop shows no termination: probe the connection
ANNOUNCE = f"SELECT pg_notify('{CHANNEL}', payload) FROM unnest($1::text[]) AS payload"
DROPPED = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)


class LogNotices:
    """Followers wait here for news of a message's stored log, at most `fallback` seconds."""

    def __init__(self, fallback: float = POLL_SECONDS) -> None:
        self.fallback = fallback
        self._watchers: dict[int, set[asyncio.Event]] = {}

    @contextlib.contextmanager
    def watching(self, message_id: int) -> Iterator[asyncio.Event]:
        """An event set on news of this message; registered before the caller reads the log,
        so news that arrives between the read and the wait is not lost."""
        news = asyncio.Event()
        self._watchers.setdefault(message_id, set()).add(news)
        try:
            yield news
        finally:
            watchers = self._watchers[message_id]
            watchers.discard(news)
            if not watchers:
                del self._watchers[message_id]

    async def wait(self, news: asyncio.Event) -> None:
        """Until there is news, or the fallback interval passed; then ready for the next."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(news.wait(), self.fallback)
        news.clear()

    def wake(self, message_ids: Iterable[int] | None = None) -> None:
        """Wake the followers of these messages (None: every follower)."""
        keys = list(self._watchers) if message_ids is None else message_ids
        for message_id in keys:
            for news in self._watchers.get(message_id, ()):
                news.set()

    def received(self, payload: str) -> None:
        """One notification: "<message id>:<highest seq>"."""
        message_id, _, _ = payload.partition(":")
        try:
            self.wake([int(message_id)])
        except ValueError:
            log.warning("ignored a malformed %s notification: %r", CHANNEL, payload)


def highest_seqs(batch: Iterable[tuple[Any, ...]]) -> dict[int, int]:
    """The highest seq of each message in a batch of log rows (message_id, seq, ...)."""
    highest: dict[int, int] = {}
    seen = highest.get
    for row in batch:
        if row[1] > seen(row[0], 0):
            highest[row[0]] = row[1]
    return highest


def payloads(highest: Mapping[int, int]) -> list[str]:
    """One "<message id>:<highest seq>" per message (see `highest_seqs`)."""
    return [f"{message_id}:{seq}" for message_id, seq in highest.items()]


@asynccontextmanager
async def listening(database_url: str, fallback: float = FALLBACK_SECONDS
                    ) -> AsyncIterator[LogNotices]:
    """This process's notices: fed by one LISTEN connection on PostgreSQL, polled on SQLite."""
    if is_sqlite(database_url):
        yield LogNotices(POLL_SECONDS)
        return
    notices = LogNotices(fallback)
    task = asyncio.create_task(_listen(notices, asyncpg_dsn(database_url)), name="log-listener")
    try:
        yield notices
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _listen(notices: LogNotices, dsn: str) -> None:
    """Keep one LISTEN connection open; reconnect whenever it drops."""
    while True:
        try:
            connection = await asyncpg.connect(
                dsn, server_settings={"application_name": APPLICATION_NAME})
        except DROPPED as error:
            log.warning("log listener: cannot connect (%s); retrying", error)
            await asyncio.sleep(RECONNECT_SECONDS)
            continue
        try:
            await _hold(notices, connection)
        except DROPPED as error:
            log.warning("log listener: connection lost (%s); reconnecting", error)
        finally:
            connection.terminate()


async def _hold(notices: LogNotices, connection: asyncpg.Connection) -> None:
    lost = asyncio.Event()
    connection.add_termination_listener(lambda _: lost.set())
    await connection.add_listener(CHANNEL, lambda _c, _pid, _ch, payload: notices.received(payload))
    notices.wake()  # whatever was announced while nobody listened
    while not lost.is_set():
        try:
            await asyncio.wait_for(lost.wait(), PING_SECONDS)
        except TimeoutError:
            await connection.fetchval("SELECT 1", timeout=PING_SECONDS)
    log.warning("log listener: the database closed the connection; reconnecting")
