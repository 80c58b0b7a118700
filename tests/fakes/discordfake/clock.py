"""Clocks for the fake: real monotonic time by default, or one a test moves by hand."""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.fakes.clock import ManualClock  # noqa: F401  (re-exported)

Clock = Callable[[], float]


def monotonic() -> float:
    """The default clock."""
    return time.monotonic()
