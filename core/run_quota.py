"""RUNS_PER_USER_PER_MINUTE: how many runs one chat user may start, as a token bucket per user.

The run pool asks it before it writes anything for a start, an edit or a regenerate that names
an `author` (a Slack or Discord user id); starts without one (the admin API, an operator) are
not counted. The buckets live in this process: with several replicas each counts its own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from core.errors import RateLimited
from core.ratelimit import Limit, RateLimiter


class RunQuota:
    """`per_minute` starts at once per user, refilled evenly over a minute; 0 = no limit."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._buckets = RateLimiter(clock)
        self._limit = Limit.per_minute(per_minute, burst=per_minute) if per_minute > 0 else None

    def take(self, user: object) -> None:
        """Count one start of `user` (None: not counted); RateLimited when over the limit."""
        if self._limit is None or user is None:
            return
        key = f"runs:{user}"
        if not self._buckets.try_take(key, self._limit):
            wait = math.ceil(self._buckets.delay(key, self._limit))
            raise RateLimited(
                f"You have started {self.per_minute} runs in the last minute, the most allowed "
                f"per person. Try again in {wait} s.", wait,
            )
