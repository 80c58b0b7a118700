"""Backing off from a service that is down (5xx answers, timeouts): both chat adapters, and
the pacing of the Bridge stream's reconnects (core.agent.bridge.stream).

A 429 says how long to wait (Retry-After); an outage says nothing, so each failure in a row
doubles the pause, up to `cap`, and after `patience` seconds of pauses in a row the caller
gives up. A streak is kept per key (a Slack workspace method, a Discord channel), so every
write that meets the same outage waits on the same growing pause: a minute of 503s costs a
handful of calls, not a tight loop.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Backoff:
    """1, 2, 4, ... seconds, at most `cap`; give up after `patience` seconds of pauses."""

    base: float = 1.0
    cap: float = 30.0
    patience: float = 900.0

    def delay(self, failures: int) -> float:
        """The pause after failure number `failures` (1, 2, ...) in a row."""
        return min(self.cap, self.base * 2 ** (failures - 1))

    def waited(self, failures: int) -> float:
        """All the pauses of a streak of `failures` failures."""
        return sum(self.delay(n) for n in range(1, failures + 1))


class Outages:
    """Failure streaks by key; `failed` says how long to pause, `recovered` ends the streak."""

    def __init__(self, backoff: Backoff = Backoff()) -> None:
        self.backoff = backoff
        self._failures: dict[Hashable, int] = {}

    def failed(self, key: Hashable) -> float | None:
        """The pause after one more failure of `key`, or None once its patience is spent
        (the streak then starts again, for the next write)."""
        failures = self._failures.get(key, 0) + 1
        if self.backoff.waited(failures) > self.backoff.patience:
            self._failures.pop(key, None)
            return None
        self._failures[key] = failures
        return self.backoff.delay(failures)

    def recovered(self, key: Hashable) -> None:
        self._failures.pop(key, None)
