"""Clocks the tests give the adapter's rate limiter and the fake Slack (one clock for both).

`SteppedClock` moves only when the test says so (sleepers wake when it passes their time);
`FastClock` runs 5 times faster than real time, so Slack's real limits (1 edit/s per message,
Tier 3) hold in every conversation test without making it wait whole seconds.
"""

from __future__ import annotations

import asyncio
import time


class SteppedClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._moved = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()

    async def sleep(self, seconds: float) -> None:
        """Until the clock passes now + seconds (always yielding, even for a zero wait)."""
        target = self.now + seconds
        await asyncio.sleep(0)
        while self.now < target:
            await self._moved.wait()


class FastClock:
    def __init__(self, speed: float = 5.0) -> None:
        self.speed = speed
        self._start = time.monotonic()

    def __call__(self) -> float:
        return 1000.0 + (time.monotonic() - self._start) * self.speed

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds / self.speed)
