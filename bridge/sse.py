"""The SSE body of a run: replay after a cursor, follow live, comment heartbeats."""

from __future__ import annotations

from collections.abc import AsyncIterator

from bridge.events import HEARTBEAT
from bridge.run_log import RunLog


async def follow_run(log: RunLog, after: int, heartbeat_seconds: float) -> AsyncIterator[bytes]:
    """Every event after id `after` (and a checkpoint taken right after it), then live ones,
    until `done`/`error`."""
    position = log.position_after(after)
    while True:
        position = max(position, log.dropped)  # trimmed while this reader was slow
        for event in log.events_from(position):
            yield event.encode()
            position += 1
            if event.is_terminal:
                return
        if log.finished:
            return
        if not await log.wait_beyond(position, heartbeat_seconds):
            yield HEARTBEAT
