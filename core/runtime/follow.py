"""Follow a run's events from any point: the stored log first, then live, each event once.

What the admin SSE stream serves: a client that reconnects with the last id
it saw gets exactly the events after it. A run this process does not drive (finished, or
driven by another replica) is followed through its stored log, read again whenever the
replica that writes it announces new rows (core/runtime/notify.py), until it ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from core.agent.events import Event, LogRecord, event_from_log, is_terminal
from core.errors import NotFound
from core.store.models import IN_FLIGHT, ChatMessage, ChatMessageLog

if TYPE_CHECKING:
    from core.runtime.pool import RunPool


async def follow_events(pool: RunPool, run_id: str, after: int = 0) -> AsyncIterator[Event]:
    """Every event of `run_id` with seq > `after`, in order, until the run ends."""
    message = await ChatMessage.get_or_none(run_id=run_id)
    if message is None:
        raise NotFound(f"no run {run_id}")
    last = after
    with pool.log_notices.watching(message.id) as news:
        while True:
            if pool.live(run_id) is not None:
                async for event in _live(pool, run_id, last):
                    last = event.seq
                    yield event
                return
            async for event in _stored(message.id, last):
                last = event.seq
                yield event
                if is_terminal(event):
                    return
            if not await _in_flight(message.id):
                return
            await pool.log_notices.wait(news)  # driven by another replica: until it writes


async def _live(pool: RunPool, run_id: str, after: int) -> AsyncIterator[Event]:
    live = pool.live(run_id)
    assert live is not None
    last = after
    while True:
        changed = live.changed
        pending = [e for e in live.events if last < e.seq <= live.shown_seq]
        gap_end = pending[0].seq if pending else live.shown_seq + 1
        if gap_end > last + 1:  # older than what this process saw (e.g. before a restart)
            async for event in _stored(live.message_id, last, below=gap_end):
                last = event.seq
                yield event
        for event in pending:
            last = event.seq
            yield event
            if is_terminal(event):
                return
        if live.finished_at is not None:
            return
        await changed.wait()


async def _stored(message_id: int, after: int, below: int | None = None) -> AsyncIterator[Event]:
    query = ChatMessageLog.filter(message_id=message_id, seq__gt=after)
    if below is not None:
        query = query.filter(seq__lt=below)
    for row in await query.order_by("seq"):
        yield event_from_log(LogRecord(seq=row.seq, kind=row.kind, content=row.content,
                                       tool_name=row.tool_name, meta_json=row.meta_json,
                                       created_at=row.created_at))


async def _in_flight(message_id: int) -> bool:
    return await ChatMessage.filter(id=message_id, status__in=IN_FLIGHT).exists()
