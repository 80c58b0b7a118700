"""The event buffer of one run: appended on the event loop, followed by any number of
readers (the POST /run stream, reconnects with Last-Event-ID)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.events import BridgeEvent


@dataclass
class RunLog:
    """Every event of a run plus the state GET /runs/{id} reports. Event-loop only."""

    run_id: str
    session_id: str
    clock: Callable[[], float]
    events: list[BridgeEvent] = field(default_factory=list)
    state: str = "running"
    pending_clarify: dict[str, Any] | None = None
    ended_at: float | None = None
    _wakeup: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def finished(self) -> bool:
        return self.ended_at is not None

    @property
    def last_event_id(self) -> int:
        return len(self.events)

    def append(self, name: str, data: dict[str, Any]) -> BridgeEvent | None:
        """Record the next event (ignored once the run has ended) and wake the readers."""
        if self.finished:
            return None
        event = BridgeEvent(len(self.events) + 1, name, data)
        self.events.append(event)
        self._track_state(event)
        wakeup, self._wakeup = self._wakeup, asyncio.Event()
        wakeup.set()
        return event

    def clarify_resolved(self) -> None:
        """The pending clarify was answered (or cancelled): the run is running again."""
        if self.state == "waiting_clarify":
            self.state, self.pending_clarify = "running", None

    def events_after(self, cursor: int) -> list[BridgeEvent]:
        """Events with id > cursor, in order."""
        return self.events[cursor:]

    async def wait_beyond(self, cursor: int, timeout: float) -> bool:
        """Wait until an event with id > cursor exists or the run ends; False on timeout."""
        wakeup = self._wakeup
        if len(self.events) > cursor or self.finished:
            return True
        try:
            await asyncio.wait_for(wakeup.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _track_state(self, event: BridgeEvent) -> None:
        if event.name == "clarify_request":
            self.state, self.pending_clarify = "waiting_clarify", dict(event.data)
        elif event.is_terminal:
            self.state, self.pending_clarify = event.name, None
            self.ended_at = self.clock()
