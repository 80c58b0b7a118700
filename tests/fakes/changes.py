"""Change notices from the fakes, so a test waits on what they record instead of polling.

Every fake calls `CHANGES.notify()` whenever what it records changes (a call arrived or was
answered, a message stored, a gateway frame sent, a request of the LLM or the Bridge); a
waiter re-checks its predicate then. One `Changes` for the process: a test runs alone in its
process (an xdist worker runs one at a time), and a wait on one fake's state may be ended by
another's (a Discord message once the fake Bridge got a run).

A predicate may also read what no fake sees (the database, the bot's own state): the
`fallback` tick re-checks it that often even when no fake changed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

FALLBACK = 0.05  # seconds: how late a change no fake saw may be noticed
# Seconds any one wait in a test may take before the test fails. It bounds a failure and never
# paces a pass (a wait ends as soon as what it waits for is there), so it is generous: a loaded
# CI run on a slow shared machine (ten pytest workers, child Bridges importing hermes-agent, on
# two cores) has taken several times as long as a quiet one. A test asserting a pace ("stops
# within seconds") states its own figure instead.
WAIT = 60.0


class Changes:
    def __init__(self) -> None:
        self._waiters: set[asyncio.Future[None]] = set()

    def notify(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def next(self, timeout: float) -> None:
        """Until the next notice, or `timeout` seconds (the fallback tick)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        try:
            await asyncio.wait({waiter}, timeout=timeout)
        finally:
            self._waiters.discard(waiter)
            waiter.cancel()

    async def until(self, predicate: Callable[[], Any], timeout: float = WAIT,
                    fallback: float = FALLBACK) -> Any:
        """`predicate()`'s first truthy value (awaited when it returns an awaitable, such as a
        database query), re-checked on every notice and every `fallback` seconds; TimeoutError
        after `timeout` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                value = predicate()
                if inspect.isawaitable(value):
                    value = await value
                if value:
                    return value
                await self.next(fallback)


CHANGES = Changes()
