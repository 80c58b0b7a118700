"""Log rows written in batches: at 50 rows or every 200 ms, at once when asked, one insert each.

(message_id, seq) is unique and a row already there is skipped, so an event delivered twice is
stored once. A write that fails because the database is away keeps its rows for the next flush:
nothing is lost, and a batch that committed although its answer was lost (a database restart) is
not doubled. A batch refused for any other reason holds a row the database will never take (a
run's message deleted meanwhile, a value it refuses): it is split in halves until each bad row
is alone; the others are stored, and each bad one is replaced by a placeholder row (a `status`
event of category `dropped` saying what was lost), so no run's rows wait on another's.
A run's checkpoint (the agent's messages so far) waits here too, the latest per message, and is
written by the same flush after the rows, whole or not at all (core/runtime/checkpoints.py).
Rows are plain tuples and a flush is one write (PostgreSQL: a binary COPY; SQLite: multi-row
VALUES): building an ORM object per event costs more than the whole rest of the pipeline.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from datetime import datetime

import asyncpg
from tortoise import connections

from core.agent.events import Checkpoint, Event, TextDelta, event_to_log
from core.text.safe_text import clean_text
from core.store.outage import is_outage, transaction
from core.runtime.checkpoints import store_checkpoints
from core.runtime.notify import ANNOUNCE, highest_seqs, payloads

log = logging.getLogger(__name__)

Row = tuple[int, int, str, str | None, str | None, str | None, datetime]
COLUMNS = "message_id, seq, kind, content, tool_name, meta_json, created_at"
DROPPED_META = '{"category":"dropped"}'  # a placeholder row is a `status` event of this category
REASON_MAX = 300


@functools.lru_cache(maxsize=64)
def sqlite_insert(rows: int) -> str:
    """One INSERT of `rows` rows that skips rows already stored (SQLite's placeholders)."""
    groups = ", ".join(["(" + ", ".join("?" * (COLUMNS.count(",") + 1)) + ")"] * rows)
    return (f"INSERT INTO chat_message_log ({COLUMNS}) VALUES {groups} "
            "ON CONFLICT (message_id, seq) DO NOTHING")


class LogBuffer:
    """Pending `chat_message_log` rows of every run of this process."""

    def __init__(self, max_rows: int = 50, interval: float = 0.2,
                 on_flush: Callable[[float, int], None] | None = None) -> None:
        self.max_rows = max_rows
        self.interval = interval
        self._rows: list[Row] = []
        self._checkpoints: dict[int, Checkpoint] = {}  # the latest of each message, unwritten
        self._persisted: dict[int, int] = {}
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._on_flush = on_flush
        self._notices: set[asyncio.Task[None]] = set()

    def add(self, message_id: int, event: Event) -> None:
        """Queue the event's row; a full batch wakes the flusher at once."""
        if type(event) is TextDelta:  # most of a stream: its row without the general mapping
            row: Row = (message_id, event.seq, "text", event.text, None, None, event.at)
        else:
            record = event_to_log(event)
            row = (message_id, record.seq, record.kind, record.content, record.tool_name,
                   record.meta_json, record.created_at)
        self._rows.append(row)
        if len(self._rows) == self.max_rows:  # once per batch, not at every row past it
            self._wake.set()

    def checkpoint(self, message_id: int, point: Checkpoint) -> None:
        """Keep the message's checkpoint for the next flush (an older one is not kept)."""
        held = self._checkpoints.get(message_id)
        if held is None or held.seq < point.seq:
            self._checkpoints[message_id] = point

    def persisted_seq(self, message_id: int) -> int:
        """The highest seq of this message known to be in the database (0: none yet)."""
        return self._persisted.get(message_id, 0)

    def remember(self, message_id: int, seq: int) -> None:
        """Record what an earlier process already stored (recovery starts from there)."""
        self._persisted[message_id] = max(seq, self._persisted.get(message_id, 0))

    def forget(self, message_id: int) -> None:
        """Drop the bookkeeping of a finished message (and a checkpoint it no longer needs)."""
        self._persisted.pop(message_id, None)
        self._checkpoints.pop(message_id, None)

    @property
    def pending(self) -> int:
        return len(self._rows)

    async def flush(self) -> None:
        """Write every pending row (one statement per batch); on failure keep them for later."""
        async with self._lock:
            batch, self._rows = self._rows, []
            if batch:
                await self._flush_rows(batch)
            points, self._checkpoints = self._checkpoints, {}
            if points:
                try:
                    await store_checkpoints(points)
                except BaseException:  # database away, or cancelled: keep them, unless newer
                    for message_id, point in points.items():
                        self.checkpoint(message_id, point)
                    raise

    async def _flush_rows(self, batch: list[Row]) -> None:
        started = time.perf_counter()
        highest = highest_seqs(batch)
        try:
            await _store(batch)
        except BaseException:  # the database is away, or the flusher was cancelled mid-write
            # (a pool stopping): keep the rows, the next flush retries, or the last one says
            # they are unwritten. Written twice, a row is stored once.
            self._rows[:0] = batch
            log.debug("log flush of %d rows failed", len(batch), exc_info=True)
            raise
        for message_id, seq in highest.items():
            self.remember(message_id, seq)
        if self._on_flush:
            self._on_flush(time.perf_counter() - started, len(batch))
        self._announce(highest)

    def _announce(self, highest: dict[int, int]) -> None:
        """Tell other replicas' followers, once the rows are readable, on a task of its own: the
        next flush need not wait for it (an idle gap for the database at every flush)."""
        if _dialect() != "postgres":  # one replica on SQLite: its followers poll
            return
        task = asyncio.create_task(_send_notices(highest), name="log-notices")
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)

    async def settle(self, patience: float = 5.0) -> None:
        """Wait for the notices of the flushes so far (before this process stops); past
        `patience` seconds they are dropped: followers find the rows by polling anyway."""
        if not self._notices:
            return
        _, late = await asyncio.wait(set(self._notices), timeout=patience)
        for task in late:
            task.cancel()

    async def run(self) -> None:
        """Flush every `interval`, or sooner when a batch fills; until cancelled. A failing
        database is logged once when it starts failing and once when it is back, not at
        every attempt (five a second through an outage)."""
        failures = 0
        while True:
            try:  # awaited here, not in a task of its own: a wake starts the flush at once
                async with asyncio.timeout(self.interval):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self.flush()
            except Exception as error:  # keep the loop alive: the rows stay for the retry
                failures += 1
                if failures == 1:
                    log.warning("log flush failed (%s: %s); %d rows kept, retrying every %.1f s",
                                type(error).__name__, error, self.pending, self.interval)
                continue
            if failures:
                log.info("log flush works again after %d failed attempts", failures)
                failures = 0


async def _store(batch: list[Row]) -> None:
    """Write the batch; a refusal that is no outage is split down to the bad rows."""
    try:
        await insert_rows(batch)
    except Exception as error:
        if is_outage(error):
            raise
        for row, refusal in await _split(batch, error):
            await _store_placeholder(row, refusal)


async def _split(rows: list[Row], error: Exception) -> list[tuple[Row, Exception]]:
    """Store every row of `rows` (refused with `error`) the database takes; the bad rows and
    what each was refused with. Outages pass (the caller keeps the batch for later)."""
    if len(rows) == 1:
        return [(rows[0], error)]
    half = len(rows) // 2
    bad: list[tuple[Row, Exception]] = []
    for part in (rows[:half], rows[half:]):
        try:
            await insert_rows(part)
        except Exception as refusal:
            if is_outage(refusal):
                raise
            bad += await _split(part, refusal)
    return bad


async def _store_placeholder(row: Row, refusal: Exception) -> None:
    message_id, seq, kind, *_, created_at = row
    reason = clean_text(f"{type(refusal).__name__}: {refusal}".splitlines()[0])[:REASON_MAX]
    log.error("log row %s of message %s (%s) was refused and is replaced by a placeholder: %s",
              seq, message_id, kind, reason)
    content = f"A {kind} event (seq {seq}) could not be stored and was dropped: {reason}"
    try:
        await insert_rows([(message_id, seq, "status", content, None, DROPPED_META, created_at)])
    except Exception as error:
        if is_outage(error):
            raise
        log.error("the placeholder of log row %s of message %s was refused too (%s: %s); "
                  "the row is dropped", seq, message_id, type(error).__name__, error)


async def insert_rows(batch: list[Row], chunk: int = 100) -> None:
    """Write rows in one transaction: one commit per flush, however large."""
    if _dialect() == "postgres":
        await _insert_columns(batch)
        return
    # SQLite caps the variables of a statement: fixed-size multi-row statements.
    async with transaction() as connection:
        for start in range(0, len(batch), chunk):
            rows = batch[start : start + chunk]
            values = [value for row in rows for value in row]
            await connection.execute_query(sqlite_insert(len(rows)), values)


# PostgreSQL: a binary COPY of the batch (the cheapest write there is for the client and the
# server alike: no statement per row, no array to unpack), committed on its own. COPY cannot
# skip a row that is already stored; a row can only be there when a flush whose commit was in
# doubt is retried (or a replica that lost its lease still writes), so then the batch goes again
# as one statement that skips them (skipping costs a speculative insertion per row: only then).
_SKIPPING_STORED = (f"INSERT INTO chat_message_log ({COLUMNS}) SELECT * FROM unnest("
                    "$1::bigint[], $2::int[], $3::varchar[], $4::text[], $5::varchar[], "
                    "$6::text[], $7::timestamptz[]) ON CONFLICT (message_id, seq) DO NOTHING")
_NAMES = tuple(COLUMNS.split(", "))


async def _insert_columns(batch: list[Row]) -> None:
    async with connections.get("default").acquire_connection() as connection:
        try:
            await connection.copy_records_to_table("chat_message_log", records=batch,
                                                   columns=_NAMES)
        except asyncpg.UniqueViolationError:
            await connection.execute(_SKIPPING_STORED, *(list(column) for column in zip(*batch, strict=True)))


async def _send_notices(highest: dict[int, int]) -> None:
    try:
        await connections.get("default").execute_query(ANNOUNCE, [payloads(highest)])
    except Exception as error:  # followers still find the rows: they poll every few seconds
        log.log(logging.WARNING if is_outage(error) else logging.ERROR,
                "could not announce stored log rows (%s: %s)", type(error).__name__, error,
                exc_info=not is_outage(error))


def _dialect() -> str:
    return str(connections.get("default").capabilities.dialect)
