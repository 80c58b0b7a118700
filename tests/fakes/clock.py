"""A clock that moves only when the test says so (`clock.advance(5.0)`), shared by the fakes."""

from __future__ import annotations


class ManualClock:
    """Call it for the time; `advance` moves it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
