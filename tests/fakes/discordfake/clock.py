"""Clocks for the fake: real monotonic time by default, or one a test moves by hand."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]


def monotonic() -> float:
    """The default clock."""
    return time.monotonic()


class ManualClock:
    """A clock that only moves when the test says so: `clock.advance(5.0)`."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
