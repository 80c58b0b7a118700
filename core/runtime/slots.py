"""The global cap of runs in flight, with a FIFO queue beyond it."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable


class RunSlots:
    """At most `cap` holders; later arrivals wait in order and know their position."""

    def __init__(self, cap: int, on_moved: Callable[[str, int], None] | None = None) -> None:
        self.cap = cap
        self._holders: set[str] = set()
        self._waiting: OrderedDict[str, asyncio.Future[None]] = OrderedDict()
        self._on_moved = on_moved

    def try_take(self, run_id: str) -> bool:
        """Take a slot now if one is free and nobody waits before us."""
        if len(self._holders) < self.cap and not self._waiting:
            self._holders.add(run_id)
            return True
        return False

    def hold(self, run_id: str) -> None:
        """Take a slot now, past the cap if need be: a run the Bridge is already executing
        (adopted at start-up or on takeover) is never queued behind runs that wait."""
        self._holders.add(run_id)
        self._drop(run_id)

    async def take(self, run_id: str) -> None:
        """Wait for a slot in FIFO order (returns at once if one is free)."""
        if run_id in self._holders or self.try_take(run_id):
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[run_id] = future
        self._announce()
        try:
            await future
        except asyncio.CancelledError:
            self.release(run_id)  # also if a slot was granted just before the cancel
            raise

    def release(self, run_id: str) -> None:
        """Give a slot back (or leave the queue) and let the next waiters in."""
        self._holders.discard(run_id)
        self._drop(run_id)
        while self._waiting and len(self._holders) < self.cap:
            next_id, future = self._waiting.popitem(last=False)
            self._holders.add(next_id)
            if not future.done():
                future.set_result(None)
        self._announce()

    def position(self, run_id: str) -> int | None:
        """1 for the next run to start; None when not waiting."""
        for index, waiting in enumerate(self._waiting, start=1):
            if waiting == run_id:
                return index
        return None

    @property
    def active(self) -> int:
        return len(self._holders)

    @property
    def queued(self) -> list[str]:
        return list(self._waiting)

    def _drop(self, run_id: str) -> None:
        future = self._waiting.pop(run_id, None)
        if future is not None and not future.done():
            future.cancel()

    def _announce(self) -> None:
        if self._on_moved:
            for index, run_id in enumerate(self._waiting, start=1):
                self._on_moved(run_id, index)
