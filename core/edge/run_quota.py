"""RUNS_PER_USER_PER_MINUTE: how many runs one chat user may start, as a token bucket per user.

The run pool asks it before it writes anything for a start, an edit or a regenerate that names
an `author` (a Slack or Discord user id); starts without one (the admin API, an operator) are
not counted. The buckets are rows of the database (`run_quota`), so every replica counts the
same starts: a take reads its user's row locked (SELECT ... FOR UPDATE on PostgreSQL; SQLite has
one process and serialises transactions) and writes it back. The clock is wall time, shared by
the replicas' hosts; a full bucket is the same as no row, so the upkeep jobs sweep those.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from core.errors import RateLimited
from core.store.models import RunQuotaBucket
from core.store.outage import transaction
from core.text.safe_text import storable_key

WINDOW = 60.0  # seconds: a bucket refills completely in a minute


class RunQuota:
    """`per_minute` starts at once per user, refilled evenly over a minute; 0 = no limit."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.time) -> None:
        self.per_minute = per_minute
        self._clock = clock

    async def take(self, user: object) -> None:
        """Count one start of `user` (None: not counted); RateLimited when over the limit."""
        if self.per_minute <= 0 or user is None:
            return
        key, now = storable_key(user), self._clock()
        await RunQuotaBucket.bulk_create(  # the row exists (full) before it is locked
            [RunQuotaBucket(user_key=key, tokens=float(self.per_minute), updated=now)],
            ignore_conflicts=True)
        async with transaction():
            bucket = await RunQuotaBucket.select_for_update().get(user_key=key)
            tokens = self._refilled(bucket, now)
            if tokens < 1.0:
                raise RateLimited(
                    f"You have started {self.per_minute} runs in the last minute, the most "
                    f"allowed per person. Try again in {self._wait(tokens)} s.",
                    self._wait(tokens),
                )
            await RunQuotaBucket.filter(id=bucket.id).update(
                tokens=tokens - 1.0, updated=max(now, bucket.updated))

    async def sweep(self) -> int:
        """Forget the buckets full again (untouched for a minute); an upkeep job."""
        return await RunQuotaBucket.filter(updated__lt=self._clock() - WINDOW).delete()

    def _refilled(self, bucket: RunQuotaBucket, now: float) -> float:
        elapsed = max(0.0, now - bucket.updated)  # a replica whose clock is behind adds nothing
        return min(float(self.per_minute), bucket.tokens + elapsed * self.per_minute / WINDOW)

    def _wait(self, tokens: float) -> int:
        return math.ceil((1.0 - tokens) * WINDOW / self.per_minute)

