"""A clock the test moves by hand, shared by FakeDiscord (its windows and call times) and the
bot's RateLimiter (whose `sleep` wakes only when the test moves the clock past it)."""

from __future__ import annotations

import asyncio

from tests.fakes.discordfake import ManualClock


class SteppedClock(ManualClock):
    def __init__(self, start: float = 1000.0) -> None:
        super().__init__(start)
        self._moved = asyncio.Event()
        self._deadlines: list[float] = []

    def blocked(self) -> int:
        """Sleepers that cannot go on before the clock moves (woken ones don't count)."""
        return sum(1 for deadline in self._deadlines if deadline > self.now)

    async def sleep(self, seconds: float) -> None:
        deadline = self.now + seconds
        self._deadlines.append(deadline)
        try:
            while self.now < deadline:
                moved = self._moved
                await moved.wait()
        finally:
            self._deadlines.remove(deadline)

    def advance(self, seconds: float) -> None:
        super().advance(seconds)
        self._moved.set()
        self._moved = asyncio.Event()
