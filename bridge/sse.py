"""The SSE body of a run: replay after a cursor, follow live, comment heartbeats."""

from __future__ import annotations

from collections.abc import AsyncIterator

from bridge.events import HEARTBEAT
from bridge.run_log import RunLog


async def follow_run(log: RunLog, after: int, heartbeat_seconds: float) -> AsyncIterator[bytes]:
    """Every event with id > `after`, then live ones, until `done`/`error`."""
    cursor = after
    while True:
        for event in log.events_after(cursor):
            yield event.encode()
            cursor = event.id
            if event.is_terminal:
                return
        if log.finished:
            return
        if not await log.wait_beyond(cursor, heartbeat_seconds):
            yield HEARTBEAT
