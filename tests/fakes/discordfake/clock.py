"""Clocks for the fake: real monotonic time by default, or one a test moves by hand
(tests/fakes/clock.py's `ManualClock`)."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]


def monotonic() -> float:
    """The default clock."""
    return time.monotonic()
