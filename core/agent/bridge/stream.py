"""A run's event stream that survives dropped connections: reconnect, resume, dedupe.

The first connection is `POST /run` (or a follow, for a run that already exists); when a
connection drops, stalls past the read timeout or ends before `done`/`error`, the stream
reconnects to `GET /runs/{id}/events` with `Last-Event-ID` = `last_seq()` (what the caller
persisted), after an exponential backoff. Events with an id at or below the highest one
already yielded are dropped, so each event is yielded exactly once, in order (a `checkpoint`
carries the id of the event before it: one is dropped only if it is older than that, or
already yielded).

A connection that ends cleanly without `done`/`error` first asks `ended`: a finished run
whose events the caller already has (e.g. followed again after a restart) just ends.

Two ways a stream ends without `done`/`error`: a Bridge that answers again but no longer
knows the run (it restarted: 404 on a reconnect or a follow) raises RunLost at once; a Bridge that
stays unreachable is retried `max_reconnects` times, about `patience()` seconds in all.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, aclosing
from dataclasses import dataclass
from datetime import datetime

import httpx
from httpx_sse import EventSource, SSEError

from core.agent.bridge.errors import garbage
from core.agent.events import Checkpoint, Event, is_terminal, parse_event
from core.edge.backoff import Backoff
from core.errors import BridgeUnavailable, NotFound, RunLost

# `open(None)` starts the run; `open(n)` follows it from after event n.
Opener = Callable[[int | None], AbstractAsyncContextManager[httpx.Response]]
Sleep = Callable[[float], Awaitable[None]]
# `ended(n)`: True if the run has finished and has no event after n.
Ended = Callable[[int], Awaitable[bool]]
RUN_LOST = "The agent service restarted and lost this run."


@dataclass(frozen=True, slots=True)
class StreamPolicy:
    """Timeouts and reconnect pacing; read_timeout should be a few heartbeats (15 s each)."""

    read_timeout: float = 45.0
    connect_timeout: float = 5.0
    backoff_base: float = 0.5
    backoff_cap: float = 15.0
    max_reconnects: int = 8

    def delay(self, failures: int) -> float:
        """Seconds to wait before reconnect number `failures` (1, 2, ...)."""
        return self._backoff().delay(failures)

    def patience(self) -> float:
        """Seconds of backoff before a stream that cannot reconnect gives up (~60 by default)."""
        return self._backoff().waited(self.max_reconnects)

    def _backoff(self) -> Backoff:
        return Backoff(self.backoff_base, self.backoff_cap)

    def timeout(self) -> httpx.Timeout:
        """The httpx timeout of a stream connection."""
        return httpx.Timeout(self.read_timeout, connect=self.connect_timeout)


class Dropped(Exception):
    """A connection failed in a way a reconnect may fix (5xx, cut, stall)."""


class AlreadyStarted(Exception):
    """`POST /run` answered 409 run_exists: follow the run instead."""


@dataclass(slots=True)
class ResumableStream:
    """Yields one run's events once each, in order, across reconnects."""

    run_id: str
    open: Opener
    policy: StreamPolicy
    sleep: Sleep
    clock: Callable[[], datetime]
    last_seq: Callable[[], int] | None = None
    ended: Ended | None = None
    highest: int = 0
    checkpointed: int = 0  # the id of the last checkpoint yielded
    failures: int = 0
    started: bool = False
    connected: bool = False  # a connection of this run was open once

    async def events(self, start: bool) -> AsyncIterator[Event]:
        """All events after `last_seq()`; `start` first POSTs the run, else follows it."""
        self.highest = self.last_seq() if self.last_seq else 0
        self.started = not start
        while True:
            try:
                async with aclosing(self._connection()) as connection:  # closed here, not by GC
                    async for event in connection:
                        yield event
                        if is_terminal(event):
                            return
                if await self._finished():
                    return  # the caller already has everything, `done` included
                reason = "the stream ended before done/error"
            except AlreadyStarted:
                self.started = True
                continue
            except NotFound as exc:
                if self.connected or not start:  # it had this run: the Bridge forgot it
                    raise RunLost(RUN_LOST if self.connected else exc.message) from exc
                raise
            except (Dropped, httpx.TransportError) as exc:
                if not self.started:
                    raise BridgeUnavailable(f"could not start run {self.run_id}: {exc}") from exc
                reason = str(exc) or type(exc).__name__
            await self._backoff(reason)

    async def _connection(self) -> AsyncGenerator[Event, None]:
        async with self.open(self._resume_point() if self.started else None) as response:
            self.started = self.connected = True
            try:
                async with aclosing(EventSource(response).aiter_sse()) as messages:
                    async for sse in messages:
                        event = self._accept(sse.id, sse.event, sse.data)
                        if event is not None:
                            yield event
            except SSEError as exc:
                raise garbage(f"the events of run {self.run_id}", exc) from exc

    def _accept(self, event_id: str, name: str, data: str) -> Event | None:
        if name == "message" and not data:
            return None  # httpx-sse's empty event after a comment line (heartbeat)
        event = parse_event(event_id, name, data, self.clock(), self.run_id)
        if type(event) is Checkpoint:  # it has the id of the event before it
            if event.seq < self.highest or event.seq <= self.checkpointed:
                return None
            self.checkpointed = event.seq
            return event
        if event is None or event.seq <= self.highest:
            return None
        self.highest = event.seq
        self.failures = 0
        return event

    async def _finished(self) -> bool:
        if self.ended is None:
            return False
        try:
            return await self.ended(self.highest)
        except BridgeUnavailable:
            return False

    def _resume_point(self) -> int:
        return self.last_seq() if self.last_seq else self.highest

    async def _backoff(self, reason: str) -> None:
        self.failures += 1
        if self.failures > self.policy.max_reconnects:
            raise BridgeUnavailable(
                f"lost the event stream of run {self.run_id} after "
                f"{self.policy.max_reconnects} reconnects in {self.policy.patience():g} s: {reason}"
            )
        await self.sleep(self.policy.delay(self.failures))
