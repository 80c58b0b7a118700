"""A probe of the event loop's responsiveness while a block runs: how late a task sleeping
`tick` seconds wakes, at worst (`longest`, wall time: bench/hostile reads it on a quiet
machine), and how much CPU time the loop's thread spent at most between two of its wakes
(`longest_held`: the loop held by work on it). Tests assert on `longest_held`: on a loaded
machine the process waits for a core and every wake is late, but a loop that is free between
wakes spends little CPU there, and a loop held by a parse or a decode spends all of it."""

from __future__ import annotations

import asyncio
import time


class LoopLag:
    """`async with LoopLag() as lag: ...`; then `lag.longest` and `lag.longest_held` (seconds)."""

    def __init__(self, tick: float = 0.01) -> None:
        self.tick = tick
        self.longest = 0.0
        self.longest_held = 0.0
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
            before, cpu_before = time.perf_counter(), time.thread_time()
            await asyncio.sleep(self.tick)
            self.longest = max(self.longest, time.perf_counter() - before - self.tick)
            self.longest_held = max(self.longest_held, time.thread_time() - cpu_before)
