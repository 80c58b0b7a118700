"""A probe of the event loop's responsiveness: how late a task sleeping `tick` seconds wakes,
at worst, while the block runs (the loop was busy, or held, for that long). Tests and
bench/hostile read it beside work that must never stall the loop."""

from __future__ import annotations

import asyncio
import time


class LoopLag:
    """`async with LoopLag() as lag: ...`; then `lag.longest` (seconds)."""

    def __init__(self, tick: float = 0.01) -> None:
        self.tick = tick
        self.longest = 0.0
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoopLag:
        self._task = asyncio.create_task(self._probe())
        await asyncio.sleep(0)  # the probe is asleep before the block starts: it sees all of it
        return self

    async def __aexit__(self, *_: object) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task

    async def _probe(self) -> None:
        while not self._stop.is_set():
            before = time.perf_counter()
            await asyncio.sleep(self.tick)
            self.longest = max(self.longest, time.perf_counter() - before - self.tick)
