"""Rate limits as an object (STYLE: like discord.py's Route.key + Ratelimit), shared by adapters.

A `Limit` is a token bucket: `burst` calls at once, refilled at `per_second`. Every key (a
bucket: "slack:T1:chat.update", "slack:msg:C1:1700.1", "discord:channel:42") has its own
bucket; `acquire` waits for a token in arrival order, and `penalise` honours a 429's
Retry-After by closing the key until then. The clock and the sleep are injected.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limit:
    """`burst` calls at once, then `per_second` on average."""

    per_second: float
    burst: int = 1

    @classmethod
    def per_minute(cls, calls: float, burst: int = 1) -> Limit:
        return cls(calls / 60.0, burst)


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float
    closed_until: float = 0.0


class RateLimiter:
    """Token buckets by key; waiting is FIFO per key so concurrent runs share fairly, except
    that urgent waiters go first."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._buckets: dict[str, _Bucket] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._urgent: dict[str, int] = {}  # urgent waiters by key

    def delay(self, key: str, limit: Limit) -> float:
        """Seconds until `key` has a token (0: now); takes nothing."""
        bucket = self._refill(key, limit)
        now = self._clock()
        wait = max(0.0, bucket.closed_until - now)
        if bucket.tokens < 1.0:
            wait = max(wait, (1.0 - bucket.tokens) / limit.per_second)
        return wait

    def try_take(self, key: str, limit: Limit) -> bool:
        """Take a token if one is there now."""
        if self.delay(key, limit) > 0:
            return False
        self._buckets[key].tokens -= 1.0
        return True

    async def acquire(self, key: str, limit: Limit, *, urgent: bool = False) -> None:
        """Wait for a token of `key`, then take it. Waiters are served in arrival order, but an
        `urgent` one (an answer, a click's result) goes ahead of the queue of ordinary ones
        (progress edits): the one at the front of it steps back a token while urgent ones wait."""
        if urgent:
            self._urgent[key] = self._urgent.get(key, 0) + 1
            try:
                while not self.try_take(key, limit):
                    await self._sleep(self.delay(key, limit))
            finally:
                self._urgent[key] -= 1
            return
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            while self._urgent.get(key) or not self.try_take(key, limit):
                await self._sleep(max(self.delay(key, limit),
                                      1.0 / limit.per_second if self._urgent.get(key) else 0.0))

    def penalise(self, key: str, retry_after: float) -> None:
        """The platform said 429: nothing more on `key` for `retry_after` seconds."""
        bucket = self._buckets.get(key) or _Bucket(0.0, self._clock())
        bucket.closed_until = max(bucket.closed_until, self._clock() + retry_after)
        bucket.tokens = min(bucket.tokens, 0.0)
        self._buckets[key] = bucket

    def _refill(self, key: str, limit: Limit) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(limit.burst), now)
        elapsed = max(0.0, now - bucket.updated)
        bucket.tokens = min(float(limit.burst), bucket.tokens + elapsed * limit.per_second)
        bucket.updated = now
        return bucket
