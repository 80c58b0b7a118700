"""Rate budgets shared by replicas: two RateLimiters (two replicas) on one store spend one
bucket. The store is PostgreSQL's `rate_budget` table on the postgres backend, and the
in-memory one (`MemoryBudgets` shared by both limiters) on SQLite, where `serve` runs alone.

Time moves only when the test says so (`SharedTime`), and only once every waiter is asleep
again, so the time a take is seen at is the time the bucket counted it at.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from tortoise import connections

from core.edge.ratelimit import BudgetStore, BudgetUnavailable, Limit, MemoryBudgets, RateLimiter, Take, reserve
from core.edge.shared_budgets import PostgresBudgets, budget_store, sweep
from core.store.models import RateBudget
from tests.conftest import BACKEND


class SharedTime:
    """A clock both replicas and the store read; sleepers wake when `advance` passes them."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start
        self.busy = 0  # store calls in flight
        self._due: list[float] = []
        self._moved = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        target = self.now + seconds
        self._due.append(target)
        try:
            while self.now < target:
                await self._moved.wait()
        finally:
            self._due.remove(target)

    def asleep(self) -> int:
        return len(self._due)

    async def settle(self) -> None:
        """Until nothing can run before the clock moves: no sleeper due, no store call in
        flight, for a few turns of the loop in a row."""
        calm = 0
        async with asyncio.timeout(20):
            while calm < 10:
                await asyncio.sleep(0)
                quiet = self.busy == 0 and all(t > self.now for t in self._due)
                calm = calm + 1 if quiet else 0

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()
        await self.settle()


class Counted:
    """The store, its calls in flight counted on the clock (so `settle` waits for them)."""

    def __init__(self, store: BudgetStore, clock: SharedTime) -> None:
        self._store, self._clock = store, clock

    async def take(self, key: str, limit: Limit, reserve: float) -> Take:
        self._clock.busy += 1
        try:
            return await self._store.take(key, limit, reserve)
        finally:
            self._clock.busy -= 1

    async def close(self, key: str, seconds: float) -> None:
        self._clock.busy += 1
        try:
            await self._store.close(key, seconds)
        finally:
            self._clock.busy -= 1


@pytest.fixture
async def time_and_store(db: str) -> tuple[SharedTime, BudgetStore]:
    clock = SharedTime()
    inner: BudgetStore = PostgresBudgets(clock) if BACKEND == "postgres" else MemoryBudgets(clock)
    return clock, Counted(inner, clock)


def replicas(clock: SharedTime, store: BudgetStore, n: int = 2) -> list[RateLimiter]:
    return [RateLimiter(clock, clock.sleep, store) for _ in range(n)]


async def run_until_done(clock: SharedTime, tasks: list[asyncio.Task[None]], step: float,
                         limit: float = 600.0) -> None:
    await clock.settle()
    waited = 0.0
    while not all(t.done() for t in tasks):
        assert waited < limit, "the waiters never finished"
        await clock.advance(step)
        waited += step
    for task in tasks:
        task.result()


def conforms(times: list[float], limit: Limit) -> bool:
    """Whether takes at `times` fit a bucket of `limit` (full at the first)."""
    tokens, last = float(limit.burst), times[0]
    for at in sorted(times):
        tokens = min(float(limit.burst), tokens + (at - last) * limit.per_second) - 1.0
        last = at
        if tokens < -1e-9:
            return False
    return True


async def test_two_replicas_together_never_exceed_the_limit(
        time_and_store: tuple[SharedTime, BudgetStore]) -> None:
    clock, store = time_and_store
    a, b = replicas(clock, store)
    tier = Limit.per_minute(60, burst=4)  # 1/s, 4 at once
    taken: list[tuple[str, float]] = []

    def caller(limiter: RateLimiter, name: str, urgent: bool) -> Callable[[], Awaitable[None]]:
        async def call() -> None:
            await limiter.acquire("slack:T1:chat.update", tier, urgent=urgent)
            taken.append((name, clock.now))
        return call

    tasks = [asyncio.create_task(caller(limiter, f"{name}{n}", n % 3 == 0)())
             for n in range(12) for limiter, name in ((a, "a"), (b, "b"))]
    await run_until_done(clock, tasks, step=0.1)
    times = [at for _, at in taken]
    assert len(times) == 24
    assert conforms(times, tier), times
    # Without sharing each would spend its own 4 + 1/s: 24 takes in ~10 s; shared, ~20 s.
    assert max(times) - min(times) >= (24 - tier.burst) / tier.per_second - 0.2
    assert {name[0] for name, _ in taken[:8]} == {"a", "b"}, "both replicas get their turns"


async def test_a_retry_after_seen_by_one_replica_closes_the_key_on_the_other(
        time_and_store: tuple[SharedTime, BudgetStore]) -> None:
    clock, store = time_and_store
    a, b = replicas(clock, store)
    generous = Limit(100.0, burst=10)
    assert await b.try_take("slack:T1:chat.update", generous)
    a.penalise("slack:T1:chat.update", 7.0)
    await a.settled()
    start = clock.now
    assert not await b.try_take("slack:T1:chat.update", generous, urgent=True)
    assert b.delay("slack:T1:chat.update", generous) == pytest.approx(7.0)
    task = asyncio.create_task(b.acquire("slack:T1:chat.update", generous, urgent=True))
    await run_until_done(clock, [task], step=0.5)
    assert clock.now - start == pytest.approx(7.0)
    assert await b.try_take("slack:T1:other", generous), "other keys stay open"


async def test_an_urgent_take_does_not_queue_behind_another_replicas_progress(
        time_and_store: tuple[SharedTime, BudgetStore]) -> None:
    """Replica a's progress edits keep the workspace's chat.update budget busy; an answer on
    replica b finds a token at once: ordinary takes leave the reserve alone."""
    clock, store = time_and_store
    a, b = replicas(clock, store)
    tier3 = Limit.per_minute(45, burst=8)
    assert reserve(tier3) == 2.0
    progress = [asyncio.create_task(a.acquire("slack:T1:chat.update", tier3)) for _ in range(30)]
    await run_until_done(clock, progress[:10], step=0.1)  # the burst is spent, a queue formed
    assert sum(t.done() for t in progress) < 30
    for _ in range(2):  # an answer now, and another right behind it
        await clock.advance(0.1)
        answer = asyncio.create_task(b.acquire("slack:T1:chat.update", tier3, urgent=True))
        await clock.settle()
        assert answer.done(), "the answer waited behind progress"
    await run_until_done(clock, progress, step=0.5)


async def test_a_replica_alone_keeps_todays_behaviour_for_unshared_limits(
        time_and_store: tuple[SharedTime, BudgetStore]) -> None:
    """A per-message edit budget is the replica's own, even with a store."""
    clock, store = time_and_store
    a, b = replicas(clock, store)
    per_message = Limit(1.0, burst=1, shared=False)
    assert await a.try_take("slack:T1:edit:C1:1.0", per_message)
    assert await b.try_take("slack:T1:edit:C1:1.0", per_message), "each replica's own bucket"
    assert not await a.try_take("slack:T1:edit:C1:1.0", per_message)


async def test_an_unknown_key_is_full_an_idle_one_is_swept_and_the_table_is_unlogged(db: str) -> None:
    if BACKEND != "postgres":
        pytest.skip("the table is PostgreSQL's (SQLite: one process, its own buckets)")
    clock = SharedTime()
    store = PostgresBudgets(clock)
    tier = Limit(1.0, burst=3)
    assert [(await store.take("k", tier, 0.0)).taken for _ in range(4)] == [True, True, True, False]
    assert (await store.take("k" * 300, tier, 0.0)).taken, "a key too long for the column is hashed"
    assert await RateBudget.all().count() == 2
    _, rows = await connections.get("default").execute_query(
        "SELECT relpersistence FROM pg_class WHERE relname = 'rate_budget'")
    assert rows[0]["relpersistence"] in ("u", b"u"), "unlogged: a take waits for no WAL flush"
    assert await sweep(clock) == 0
    clock.now += 3601
    assert await sweep(clock) == 2


def test_the_store_follows_the_database() -> None:
    assert budget_store("sqlite://data/x.sqlite3") is None
    assert isinstance(budget_store("postgres://u@h/db"), PostgresBudgets)


class Unreachable:
    """A store whose database is down."""

    async def take(self, key: str, limit: Limit, reserve: float) -> Take:
        raise BudgetUnavailable("ConnectionRefusedError")

    async def close(self, key: str, seconds: float) -> None:
        raise BudgetUnavailable("ConnectionRefusedError")


async def test_while_the_store_is_unreachable_a_replica_spends_its_own_buckets(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = SharedTime()
    limiter = RateLimiter(clock, clock.sleep, Unreachable())
    tier = Limit(1.0, burst=2)
    assert [await limiter.try_take("k", tier, urgent=True) for _ in range(3)] == [True, True, False]
    limiter.penalise("k", 5.0)
    await limiter.settled()
    assert limiter.delay("k", tier) == pytest.approx(5.0), "this replica still honours the 429"
    assert sum("unreachable" in r.getMessage() for r in caplog.records) == 1, "said once"


async def test_an_answer_on_one_replica_spaces_the_next_call_of_another(
        time_and_store: tuple[SharedTime, BudgetStore]) -> None:
    """Slack spaces a message's edits as they arrive: replica A's edit, taken at 0, is answered
    at 0.4 (slow on its way); B's next edit of that message (a question clicked there while A
    drives the run) waits a whole interval from that answer, not from A's take."""
    clock, store = time_and_store
    a, b = replicas(clock, store)
    once_a_second = Limit(1.0)
    await a.acquire("msg", once_a_second)
    await clock.advance(0.4)
    a.answered("msg", once_a_second)
    await a.settled()
    await clock.advance(0.7)  # 1.1 after A's take: the interval from the take is over
    assert not await b.try_take("msg", once_a_second)
    await clock.advance(0.35)  # 1.05 after A's answer
    assert await b.try_take("msg", once_a_second)


async def test_two_replicas_on_a_sliding_window_never_take_more_than_it_holds_in_any_window(
        time_and_store: tuple[SharedTime, BudgetStore]) -> None:
    """Slack's tiers as sliding windows (20 calls in any 60 s): two replicas take the whole
    window at once, then only as its calls leave it; an ordinary take leaves the reserve."""
    clock, store = time_and_store
    a, b = replicas(clock, store)
    tier2 = Limit.sliding(20, 60.0)
    assert reserve(tier2) == 5.0
    taken: list[float] = []

    async def call(limiter: RateLimiter, urgent: bool) -> None:
        await limiter.acquire("slack:T1:chat.startStream", tier2, urgent=urgent)
        taken.append(clock.now)

    first = [asyncio.create_task(call(limiter, True)) for limiter in (a, b) for _ in range(10)]
    await run_until_done(clock, first, step=1.0)
    assert taken == [clock.now] * 20, "the whole window at once"
    assert not await a.try_take("slack:T1:chat.startStream", tier2, urgent=True)
    await clock.advance(30.0)
    more = [asyncio.create_task(call(limiter, n % 2 == 0)) for limiter in (a, b) for n in range(12)]
    await run_until_done(clock, more, step=1.0)
    assert len(taken) == 44
    for start in taken:  # never more than 20 in any 60 s
        assert len([at for at in taken if start <= at < start + 60.0]) <= 20, taken
    assert taken[20] - taken[0] >= 60.0 and taken[40] - taken[20] >= 60.0
