"""Wake-ups for tests waiting on the fake: no sleeping for time to pass, await a condition."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

# Predicates may also look at the client's state, which changes without telling the fake:
# re-check at least this often.
POLL_INTERVAL = 0.02


class Notifier:
    """Everything that changes the fake's state calls `notify()`; waiters re-check then."""

    def __init__(self) -> None:
        self._waiters: set[asyncio.Future[None]] = set()

    def notify(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait_until(
        self, predicate: Callable[[], object], timeout: float, what: str = "condition"
    ) -> None:
        """Return once `predicate()` is truthy; AssertionError after `timeout` seconds."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                while not predicate():
                    waiter = loop.create_future()
                    self._waiters.add(waiter)
                    try:
                        await asyncio.wait({waiter}, timeout=POLL_INTERVAL)
                    finally:
                        self._waiters.discard(waiter)
                        waiter.cancel()
        except TimeoutError:
            raise AssertionError(f"fake Discord: {what} not met within {timeout}s") from None
