"""Wake-ups for tests waiting on the fake: no sleeping for time to pass, await a condition."""

from __future__ import annotations

from collections.abc import Callable

from tests.fakes.changes import CHANGES


class Notifier:
    """Everything that changes the fake's state calls `notify()`; waiters re-check then (and
    on the fallback tick: predicates may also read the client's state, which changes without
    telling the fake). See tests/fakes/changes.py."""

    def notify(self) -> None:
        CHANGES.notify()

    async def wait_until(
        self, predicate: Callable[[], object], timeout: float, what: str = "condition"
    ) -> None:
        """Return once `predicate()` is truthy; AssertionError after `timeout` seconds."""
        try:
            await CHANGES.until(predicate, timeout)
        except TimeoutError:
            raise AssertionError(f"fake Discord: {what} not met within {timeout}s") from None
