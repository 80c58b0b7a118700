"""Rate limits as one object with an injected clock, used by both adapters: a bucket per key
(as discord.py's `Route.key`) that calls acquire and a 429 updates (as its `Ratelimit`).

A `Limit` is a token bucket: `burst` calls at once, refilled at `per_second`; or, with a
`window` (`Limit.sliding`), a sliding window: at most `burst` calls in any `window` seconds,
however they bunch, each call's token coming back `window` seconds after it was taken (what
a platform that counts calls "per minute" and welcomes bursts allows: Slack's tiers). A
bucket would allow `burst` + `per_second` x 60 in a minute; a window never more than `burst`.
Every key (a bucket: "slack:T1:chat.update", "slack:T1:post:C1", "discord:channel:42") has its own
bucket; `acquire` waits for a token in arrival order, and `penalise` honours a 429's
Retry-After by closing the key until then. The clock and the sleep are injected.

Where the buckets live is a port, `BudgetStore`: without one, the limiter's own buckets
(`MemoryBudgets`, one process: SQLite, or a single replica) are the truth. With one (the
PostgreSQL table `rate_budget` of core/edge/shared_budgets.py, when several replicas of `serve`
share a database), every replica takes the tokens of a `Limit.shared` key from the same bucket,
one round trip a take, and a Retry-After seen by one replica closes the key for all. Waiting
stays local: a replica sleeps for what the store's answer says it lacks, then asks again, so
fairness between replicas is approximate (whoever asks first after the refill wins).

Urgent first, within a replica and across replicas:
- within one, an ordinary waiter steps back a token while an urgent one (an answer) waits;
- across replicas an ordinary take (progress, a status) is granted only while more than a
  reserve (`reserve`: a quarter of the burst, rounded down) is left; urgent takes may spend the
  reserve. Ordinary takes then hold the bucket at the reserve, never below, so an answer on
  another replica finds a token at once instead of queueing behind their progress. The sustained
  rate is unchanged; ordinary calls lose only the reserve's share of the burst. A one-token
  bucket (burst 1) has no reserve: there urgent and ordinary takes of different replicas race.
  Without a store there is no reserve: in one process the waiters' rule is enough.

`try_take` is a coroutine (for a shared key, the round trip); `delay` answers from what this
replica last learnt of the key, refilled since: an upper bound of what is there (the others only
take), so a check that takes nothing (the sender's `ready`) costs no round trip, and a take the
bound already refuses is not asked for.

While the store cannot be reached (the database restarting) a take falls back to the local
buckets: each replica spends the allowance alone for that while, as it did before sharing.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)
RETRY_FLOOR = 0.001  # seconds: a refused take never makes a waiter spin


@dataclass(frozen=True, slots=True)
class Limit:
    """`burst` calls at once, then `per_second` on average; with a `window` (seconds), at most
    `burst` calls in any `window` seconds (`per_second` is then their average rate).
    `shared`: every replica spends the one bucket (when the limiter has a store); otherwise
    each replica keeps its own."""

    per_second: float
    burst: int = 1
    shared: bool = True
    window: float = 0.0

    @classmethod
    def per_minute(cls, calls: float, burst: int = 1) -> Limit:
        return cls(calls / 60.0, burst)

    @classmethod
    def sliding(cls, calls: int, seconds: float) -> Limit:
        """At most `calls` in any `seconds`, bunched or not."""
        return cls(calls / seconds, calls, window=seconds)


def reserve(limit: Limit) -> float:
    """Tokens of a shared bucket only urgent takes may spend (see the module)."""
    return float(limit.burst // 4)


@dataclass(frozen=True, slots=True)
class Take:
    """A store's answer to a take: whether a token was taken, how many are left after it, for
    how many seconds more the key stays closed (a Retry-After), and, for a sliding window, in
    how many seconds its oldest call leaves it (the next token back)."""

    taken: bool
    tokens: float
    closed_for: float = 0.0
    refill_in: float = 0.0


class BudgetUnavailable(Exception):
    """The store cannot be reached now; the limiter takes from its own buckets meanwhile."""


class BudgetStore(Protocol):
    """Where shared buckets live: what RateLimiter needs from storage."""

    async def take(self, key: str, limit: Limit, reserve: float) -> Take:
        """Take a token of `key` if it is open and more than `reserve` are left, as one atomic
        step; raise BudgetUnavailable when the store cannot be reached."""
        ...

    async def close(self, key: str, seconds: float) -> None:
        """Nothing more on `key` for `seconds` (a 429's Retry-After), for every user."""
        ...


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float
    closed_until: float = 0.0

    def refill(self, now: float, limit: Limit) -> None:
        elapsed = max(0.0, now - self.updated)
        self.tokens = min(float(limit.burst), self.tokens + elapsed * limit.per_second)
        self.updated = max(self.updated, now)

    def wait(self, now: float, limit: Limit, kept: float = 0.0) -> float:
        """Seconds until a token is there beyond `kept` (0: now)."""
        wait = max(0.0, self.closed_until - now)
        if self.tokens < 1.0 + kept:
            wait = max(wait, (1.0 + kept - self.tokens) / limit.per_second)
        return wait

    def take(self, now: float) -> None:
        self.tokens -= 1.0

    def learn(self, now: float, limit: Limit, take: Take) -> None:
        self.tokens = take.tokens

    def emptied(self, now: float) -> None:
        """As if its last token were taken now: the refill starts again now."""
        self.tokens = min(self.tokens, 0.0)
        self.updated = max(self.updated, now)


@dataclass(slots=True)
class _Window:
    """A sliding window's calls: the times its tokens were taken, oldest first."""

    taken: list[float]
    closed_until: float = 0.0

    def refill(self, now: float, limit: Limit) -> None:
        gone = 0
        while gone < len(self.taken) and self.taken[gone] <= now - limit.window:
            gone += 1
        del self.taken[:gone]

    def room(self, limit: Limit) -> float:
        return float(limit.burst - len(self.taken))

    def wait(self, now: float, limit: Limit, kept: float = 0.0) -> float:
        """Seconds until the window has room for one more call beyond `kept` (0: now)."""
        wait = max(0.0, self.closed_until - now)
        over = len(self.taken) + 1 + math.ceil(kept) - limit.burst  # calls that must leave first
        if over > len(self.taken):  # more kept than the window holds: never, while that lasts
            return max(wait, limit.window)
        if over > 0:
            wait = max(wait, self.taken[over - 1] + limit.window - now)
        return wait

    def take(self, now: float) -> None:
        self.taken.append(now)

    def learn(self, now: float, limit: Limit, take: Take) -> None:
        """What a store said: as many calls in the window as it has no room for, all taken to
        leave when its oldest does (others only take, so that is at most what is there)."""
        calls = max(0, min(limit.burst, round(limit.burst - take.tokens)))
        self.taken = [now + take.refill_in - limit.window] * calls

    def emptied(self, now: float) -> None:
        pass  # a window's calls leave it as they came; a 429 closes it (closed_until)


class MemoryBudgets:
    """Token buckets and windows in this process, on `clock`: the limiter's own buckets, and a
    BudgetStore (several limiters of one process given the same one share it, as replicas share
    the PostgreSQL one)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket | _Window] = {}

    def bucket(self, key: str, limit: Limit) -> _Bucket | _Window:
        """`key`'s bucket refilled to now (a new key is full)."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None or isinstance(bucket, _Window) != bool(limit.window):
            closed = bucket.closed_until if bucket is not None else 0.0  # a 429 came first
            bucket = self._buckets[key] = (_Window([], closed) if limit.window
                                           else _Bucket(float(limit.burst), now, closed))
        bucket.refill(now, limit)
        return bucket

    def delay(self, key: str, limit: Limit, kept: float = 0.0) -> float:
        return self.bucket(key, limit).wait(self._clock(), limit, kept)

    def take_now(self, key: str, limit: Limit, kept: float = 0.0) -> Take:
        bucket, now = self.bucket(key, limit), self._clock()
        closed_for = max(0.0, bucket.closed_until - now)
        taken = bucket.wait(now, limit, kept) <= 0
        if taken:
            bucket.take(now)
        if isinstance(bucket, _Window):
            refill_in = bucket.taken[0] + limit.window - now if bucket.taken else 0.0
            return Take(taken, bucket.room(limit), closed_for, refill_in)
        return Take(taken, bucket.tokens, closed_for)

    def learn(self, key: str, limit: Limit, take: Take) -> None:
        """What a shared store said of `key`, as of now."""
        bucket, now = self.bucket(key, limit), self._clock()
        bucket.learn(now, limit, take)
        bucket.closed_until = max(bucket.closed_until, now + take.closed_for)

    def close_now(self, key: str, seconds: float) -> None:
        """Nothing on `key` for `seconds`, and a bucket's refill starts again now (0 s: as if
        its last token were taken now); a window's calls leave it as they came."""
        now = self._clock()
        bucket = self._buckets.get(key) or _Bucket(0.0, now)
        bucket.closed_until = max(bucket.closed_until, now + seconds)
        bucket.emptied(now)  # its refill starts again now (as on PostgreSQL)
        self._buckets[key] = bucket

    async def take(self, key: str, limit: Limit, reserve: float) -> Take:
        return self.take_now(key, limit, reserve)

    async def close(self, key: str, seconds: float) -> None:
        self.close_now(key, seconds)


class RateLimiter:
    """Token buckets by key; waiting is FIFO per key so concurrent runs share fairly, except
    that urgent waiters go first. `store`: where `Limit.shared` keys are spent (None: here)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 store: BudgetStore | None = None) -> None:
        self.clock = clock
        self.sleep = sleep
        self._local = MemoryBudgets(clock)  # the truth without a store; else what it last said
        self._store = store
        self._locks: dict[str, asyncio.Lock] = {}
        self._urgent: dict[str, int] = {}  # urgent waiters by key
        self._closing: set[asyncio.Task[None]] = set()
        self._unreachable = False

    def delay(self, key: str, limit: Limit) -> float:
        """Seconds until `key` has a token (0: now), as far as this replica knows; takes nothing."""
        return self._local.delay(key, limit)

    async def try_take(self, key: str, limit: Limit, *, urgent: bool = False,
                       keep: float = 0.0) -> bool:
        """Take a token if one is there now (for a shared key, a round trip to the store; an
        ordinary take leaves the urgent reserve alone, and `keep` tokens besides: calls
        promised to what will need them urgently)."""
        shared = self._store is not None and limit.shared
        kept = 0.0 if urgent else max(keep, reserve(limit) if shared else 0.0)
        if self._store is None or not limit.shared:
            return self._local.take_now(key, limit, kept).taken
        if self._local.delay(key, limit, kept) > 0:
            return False  # what it knows is an upper bound (others only take): no need to ask
        try:
            take = await self._store.take(key, limit, kept)
        except BudgetUnavailable as error:
            self._note_unreachable(error)
            return self._local.take_now(key, limit, kept).taken
        if self._unreachable:
            self._unreachable = False
            log.info("rate budgets: shared store reachable again")
        self._local.learn(key, limit, take)
        return take.taken

    async def acquire(self, key: str, limit: Limit, *, urgent: bool = False,
                      keep: Callable[[], float] | None = None) -> None:
        """Wait for a token of `key`, then take it. Waiters are served in arrival order, but an
        `urgent` one (an answer, a click's result) goes ahead of the queue of ordinary ones
        (progress edits): the one at the front of it steps back a token while urgent ones wait.
        `keep`: how many tokens an ordinary waiter leaves (asked again at each try: what is
        promised changes while it waits)."""
        if urgent:
            self._urgent[key] = self._urgent.get(key, 0) + 1
            try:
                while not await self.try_take(key, limit, urgent=True):
                    await self.sleep(max(self.delay(key, limit), RETRY_FLOOR))
            finally:
                self._urgent[key] -= 1
            return
        lock = self._locks.setdefault(key, asyncio.Lock())
        base = reserve(limit) if self._store is not None and limit.shared else 0.0
        interval = 1.0 / limit.per_second
        async with lock:
            while True:
                promised = keep() if keep is not None else 0.0
                if not self._urgent.get(key) and await self.try_take(key, limit, keep=promised):
                    return
                wait = self._local.delay(key, limit, max(base, promised))
                if promised:
                    wait = min(wait, interval)  # the promises may be kept meanwhile: look again
                await self.sleep(max(wait, RETRY_FLOOR, interval if self._urgent.get(key) else 0.0))

    async def pause(self, seconds: float) -> None:
        """Sleep on the limiter's (injected) clock: for a caller waiting on several keys."""
        await self.sleep(max(seconds, RETRY_FLOOR))

    def answered(self, key: str, limit: Limit) -> None:
        """A call on one-token `key` was just answered: the next waits a whole interval from
        now, not from when this one was sent. For a limit the platform measures between the
        calls' arrivals (Slack's ~1 edit/s of a message): a call slowed on its way (a busy
        event loop, the network) arrives later than it left, and the next, quicker one would
        otherwise arrive within the interval and be refused 429. Its arrival came before its
        answer, so an interval counted from the answer holds whatever the delays. A shared key
        is told to the store too, in the background like a 429 (a close of 0 s restarts its
        refill): another replica's next call on it (a question clicked there while this one
        drives its run) waits the interval from this answer as well."""
        self._close(key, 0.0, tell=limit.shared)

    def penalise(self, key: str, retry_after: float) -> None:
        """The platform said 429: nothing more on `key` for `retry_after` seconds (told to the
        store in the background, for the other replicas; this one knows at once)."""
        self._close(key, retry_after)

    def _close(self, key: str, seconds: float, tell: bool = True) -> None:
        self._local.close_now(key, seconds)
        if self._store is not None and tell:
            task = asyncio.get_running_loop().create_task(self._tell_closed(key, seconds))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def settled(self) -> None:
        """Until every closing told to the store has been written (tests, shutdown)."""
        while self._closing:
            await asyncio.gather(*self._closing)

    async def _tell_closed(self, key: str, seconds: float) -> None:
        assert self._store is not None
        try:
            await self._store.close(key, seconds)
        except BudgetUnavailable as error:
            self._note_unreachable(error)

    def _note_unreachable(self, error: BudgetUnavailable) -> None:
        if not self._unreachable:
            self._unreachable = True
            log.warning("rate budgets: shared store unreachable (%s): this replica spends "
                        "its own buckets until it is back", error)
