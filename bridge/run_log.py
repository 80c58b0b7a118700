"""The event buffer of one run: appended on the event loop, followed by any number of
readers (the POST /run stream, reconnects with Last-Event-ID).

Its memory is bounded: past `max_bytes` of encoded events the oldest are dropped (the last
one always stays), and an ended run keeps at most ENDED_BYTES of them. The runtime stores every
event as it arrives and resumes a stream from what it stored, so it only ever asks for recent
ones; a reader that asks for events older than the buffer gets what the buffer still has, and
reads the older ones from the runtime's store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.events import CHECKPOINT, BridgeEvent

# What an ended run keeps of a bounded buffer for the retention: the runtime has stored every
# event once it read the end, so only a consumer that died just before needs any of them.
ENDED_BYTES = 8192


@dataclass
class RunLog:
    """The recent events of a run plus the state GET /runs/{id} reports. Event-loop only."""

    run_id: str
    session_id: str
    clock: Callable[[], float]
    first_id: int = 1  # a resumed turn's events continue the ids of the Bridge it left
    max_bytes: int = 0  # 0: keep every event
    events: list[BridgeEvent] = field(default_factory=list)
    state: str = "running"
    pending_clarify: dict[str, Any] | None = None
    pending_approval: dict[str, Any] | None = None
    ended_at: float | None = None
    last_event_id: int = 0
    kept_bytes: int = 0
    dropped: int = 0  # events trimmed from the front: `events[i]` is event number dropped + i
    _wakeup: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.last_event_id = self.first_id - 1

    @property
    def finished(self) -> bool:
        return self.ended_at is not None

    def append(self, name: str, data: dict[str, Any]) -> BridgeEvent | None:
        """Record the next event (ignored once the run has ended) and wake the readers."""
        if self.finished:
            return None
        # A checkpoint takes the id of the event before it: the ids of the others stay gapless.
        ident = self.last_event_id if name == CHECKPOINT else self.last_event_id + 1
        event = BridgeEvent.make(ident, name, data)
        self.last_event_id = ident
        self.events.append(event)
        self.kept_bytes += event.size
        self._trim()
        self._track_state(event, data)
        wakeup, self._wakeup = self._wakeup, asyncio.Event()
        wakeup.set()
        return event

    def clarify_resolved(self) -> None:
        """The pending clarify or approval was answered (or cancelled): the run is running
        again."""
        if self.state in ("waiting_clarify", "waiting_approval"):
            self.state, self.pending_clarify, self.pending_approval = "running", None, None

    @property
    def appended(self) -> int:
        """How many events were ever appended (the position after the last one)."""
        return self.dropped + len(self.events)

    def position_after(self, cursor: int) -> int:
        """The position of the first event a reader that has every id up to `cursor` lacks:
        events with a higher id, and a checkpoint taken right after event `cursor`."""
        index = len(self.events)
        while index > 0 and (self.events[index - 1].id > cursor or (
                self.events[index - 1].id == cursor and self.events[index - 1].name == CHECKPOINT)):
            index -= 1
        return self.dropped + index

    def events_from(self, position: int) -> list[BridgeEvent]:
        """The kept events from `position` on (from the oldest kept, if that one is gone)."""
        return self.events[max(0, position - self.dropped):]

    def events_after(self, cursor: int) -> list[BridgeEvent]:
        """Kept events a reader with every id up to `cursor` lacks, in order."""
        return self.events_from(self.position_after(cursor))

    async def wait_beyond(self, position: int, timeout: float) -> bool:
        """Wait until an event at `position` or later exists or the run ends; False on timeout."""
        wakeup = self._wakeup
        if self.appended > position or self.finished:
            return True
        try:
            await asyncio.wait_for(wakeup.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _trim(self) -> None:
        """Past the bound, drop the oldest events down to 3/4 of it (one cut now and then, not
        one per event)."""
        if not self.max_bytes or self.kept_bytes <= self.max_bytes:
            return
        goal, cut = self.max_bytes * 3 // 4, 0
        while cut < len(self.events) - 1 and self.kept_bytes > goal:
            self.kept_bytes -= self.events[cut].size
            cut += 1
        del self.events[:cut]
        self.dropped += cut

    def _track_state(self, event: BridgeEvent, data: dict[str, Any]) -> None:
        if event.name == "clarify_request":
            self.state, self.pending_clarify = "waiting_clarify", dict(data)
        elif event.name == "approval_request":
            self.state, self.pending_approval = "waiting_approval", dict(data)
        elif event.is_terminal:
            self.state, self.pending_clarify, self.pending_approval = event.name, None, None
            self.ended_at = self.clock()
            if self.max_bytes:
                self.max_bytes = min(self.max_bytes, ENDED_BYTES)
                self._trim()
