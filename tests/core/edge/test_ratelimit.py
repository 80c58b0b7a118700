"""Token buckets with an injected clock: bursts, refill, fairness, Retry-After."""

from __future__ import annotations

import asyncio

from core.edge.ratelimit import Limit, MemoryBudgets, RateLimiter


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)  # yield to other waiters; no real time passes


async def test_a_burst_then_the_refill_rate() -> None:
    t = FakeTime()
    limiter = RateLimiter(t.clock, t.sleep)
    tier3 = Limit.per_minute(50, burst=3)
    assert [await limiter.try_take("k", tier3) for _ in range(4)] == [True, True, True, False]
    assert abs(limiter.delay("k", tier3) - 1.2) < 1e-9
    t.now = 1.2
    assert await limiter.try_take("k", tier3) and not await limiter.try_take("k", tier3)
    assert await limiter.try_take("other", tier3)  # keys are independent


async def test_waiters_are_served_in_order_at_the_rate() -> None:
    t = FakeTime()
    limiter = RateLimiter(t.clock, t.sleep)
    once_a_second = Limit(1.0)
    served: list[tuple[str, float]] = []

    async def call(name: str) -> None:
        await limiter.acquire("msg", once_a_second)
        served.append((name, t.now))

    await asyncio.gather(*(call(n) for n in "abcd"))
    assert [name for name, _ in served] == ["a", "b", "c", "d"]
    times = [at for _, at in served]
    assert all(later - earlier >= 1.0 - 1e-9 for earlier, later in zip(times, times[1:], strict=False))


async def test_retry_after_closes_the_key_until_then() -> None:
    t = FakeTime()
    limiter = RateLimiter(t.clock, t.sleep)
    generous = Limit(100.0, burst=10)
    limiter.penalise("chat.update", 7.0)
    assert limiter.delay("chat.update", generous) == 7.0
    await limiter.acquire("chat.update", generous)
    assert t.now >= 7.0 and t.slept == [7.0]


async def test_an_answered_call_counts_the_interval_again_from_its_answer() -> None:
    """A call taken at 0 and answered at 0.4 (slow on its way): the next one waits until
    1.4, not 1.0, so however late the first arrived, the second arrives a second after it."""
    t = FakeTime()
    limiter = RateLimiter(t.clock, t.sleep)
    once_a_second = Limit(1.0)
    await limiter.acquire("msg", once_a_second)
    t.now = 0.4
    limiter.answered("msg", once_a_second)
    assert abs(limiter.delay("msg", once_a_second) - 1.0) < 1e-9
    await limiter.acquire("msg", once_a_second)
    assert 1.4 - 1e-9 <= t.now < 1.41  # (a refused take retries after RETRY_FLOOR)


async def test_an_urgent_waiter_goes_ahead_of_the_queue() -> None:
    """Progress edits of many runs queue for the workspace budget; a finished answer (urgent)
    must not wait behind all of them."""
    t = FakeTime()
    limiter = RateLimiter(t.clock, t.sleep)
    once_a_second = Limit(1.0)
    served: list[str] = []

    async def call(name: str, urgent: bool = False) -> None:
        await limiter.acquire("chat.update", once_a_second, urgent=urgent)
        served.append(name)

    queue = [asyncio.create_task(call(f"progress {n}")) for n in range(6)]
    await asyncio.sleep(0)  # the queue has formed; the first one took the burst token
    await asyncio.gather(call("answer", urgent=True), *queue)
    assert served.index("answer") <= 2, served
    assert [s for s in served if s != "answer"] == [f"progress {n}" for n in range(6)]


async def test_a_sliding_window_takes_a_whole_burst_then_one_per_call_that_leaves_it() -> None:
    """At most `burst` calls in any `window` seconds, however they bunch (Slack's tiers): a
    bucket of the same rate would allow its burst and a minute's refill besides."""
    t = FakeTime()
    limiter = RateLimiter(t.clock, t.sleep)
    tier2 = Limit.sliding(20, 60.0)
    assert [await limiter.try_take("k", tier2) for _ in range(15)] == [True] * 15
    t.now = 30.0
    assert [await limiter.try_take("k", tier2) for _ in range(6)] == [True] * 5 + [False]
    assert limiter.delay("k", tier2) == 30.0  # the first 15 leave the window at 60
    t.now = 60.0
    assert [await limiter.try_take("k", tier2) for _ in range(16)] == [True] * 15 + [False]
    assert limiter.delay("k", tier2) == 30.0  # then the 5 taken at 30
    limiter.penalise("k", 40.0)
    assert limiter.delay("k", tier2) == 40.0, "a Retry-After closes it too"
    times: list[float] = []
    for _ in range(10):
        await limiter.acquire("k", tier2)
        times.append(t.now)
    assert times[:5] == [100.0] * 5 and times[5:] == [120.0] * 5


async def test_a_sliding_window_shared_through_a_store_keeps_what_it_learnt_as_a_bound() -> None:
    """A replica learns of another's takes only from the store's answers: it then counts the
    window full until the oldest call leaves it, never emptier than it is."""
    t = FakeTime()
    store = MemoryBudgets(t.clock)
    a, b = RateLimiter(t.clock, t.sleep, store), RateLimiter(t.clock, t.sleep, store)
    window = Limit.sliding(4, 10.0)
    assert await a.try_take("k", window, urgent=True)
    t.now = 5.0
    assert [await b.try_take("k", window, urgent=True) for _ in range(4)] == [True] * 3 + [False]
    assert b.delay("k", window) == 5.0  # when a's call leaves the window
    assert a.delay("k", window) == 0.0  # a has not asked since: it does not know
    assert not await a.try_take("k", window, urgent=True)
    assert a.delay("k", window) == 5.0
    t.now = 10.0
    assert await a.try_take("k", window, urgent=True)
    assert not await b.try_take("k", window, urgent=True)


async def test_an_ordinary_take_leaves_what_is_promised_and_waits_while_it_is() -> None:
    t = FakeTime()
    limiter = RateLimiter(t.clock, t.sleep)
    window = Limit.sliding(5, 10.0)
    promised = [3]
    assert [await limiter.try_take("k", window, keep=3) for _ in range(3)] == [True, True, False]
    assert await limiter.try_take("k", window, urgent=True), "what is promised is urgent's"
    waiting = asyncio.ensure_future(limiter.acquire("k", window, keep=lambda: promised[0]))
    await asyncio.sleep(0)
    assert not waiting.done() and t.slept == [2.0]  # it looks again a call's interval later
    promised[0] = 0  # the promises were kept: the window's last call is there
    await waiting
    assert t.now == 2.0 and await limiter.try_take("k", window)  # the fifth
    assert not await limiter.try_take("k", window, urgent=True)
