"""The outbox on its own: one budget per channel shared by every key, latest job per key,
a 429 closes the channel, a bad request is dropped (a clock the test moves, no Discord)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import discord
import pytest

from bots.discord.delivery.budgets import ChannelBudget, Permit
from bots.discord.delivery.outbox import Outbox, RetryLater
from core.edge.ratelimit import RateLimiter
from tests.bots.discord.clock import SteppedClock

Sent = list[tuple[float, str, int]]
Job = Callable[[Permit], Awaitable[None]]


def recorder(clock: SteppedClock, sent: Sent) -> Callable[[str, int], Job]:
    def job(key: str, version: int) -> Job:
        async def write(permit: Permit) -> None:
            await permit.take()
            sent.append((clock.now, key, version))
        return write
    return job


async def settle(clock: SteppedClock, outbox: Outbox) -> None:
    """Let the workers run until each waits for the clock (no time passes)."""
    for _ in range(10_000):
        if clock.blocked() >= outbox.busy():
            return
        await asyncio.sleep(0)
    raise AssertionError("the outbox never settled")


def most_in_window(times: list[float], window: float = 5.0) -> int:
    return max(sum(1 for t in times if start <= t < start + window) for start in times)


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


async def test_five_keys_in_one_channel_share_its_budget_and_end_on_their_latest_state(
    clock: SteppedClock,
) -> None:
    outbox = Outbox(ChannelBudget(RateLimiter(clock, clock.sleep)))
    sent: Sent = []
    job = recorder(clock, sent)
    for tick in range(300):  # 30 s in steps of 0.1 s; each key changes every step
        for key in "abcde":
            outbox.offer(1, key, job(key, tick))
        await settle(clock, outbox)
        clock.advance(0.1)
    while outbox.busy():
        await settle(clock, outbox)
        clock.advance(0.1)
    latest = {key: max(v for _, k, v in sent if k == key) for key in "abcde"}
    assert latest == dict.fromkeys("abcde", 299), "every key's final state was sent"
    assert most_in_window([t for t, _, _ in sent]) <= 5
    assert len(sent) <= 1 + 0.8 * 37, "1,500 offers coalesced into the budget"
    counts = [sum(1 for _, k, _ in sent if k == key) for key in "abcde"]
    assert max(counts) - min(counts) <= 1, f"keys take turns: {counts}"


async def test_a_rate_limited_job_waits_for_retry_after_and_a_newer_job_replaces_it(
    clock: SteppedClock,
) -> None:
    budget = ChannelBudget(RateLimiter(clock, clock.sleep))
    outbox = Outbox(budget)
    sent: Sent = []

    async def limited(permit: Permit) -> None:
        await permit.take()
        outbox.offer(1, "a", recorder(clock, sent)("a", 2))  # a newer state arrives meanwhile
        budget.penalise(1, 3.0)
        raise RetryLater

    outbox.offer(1, "a", limited)
    for _ in range(40):
        await settle(clock, outbox)
        clock.advance(0.25)
    assert sent == [(1003.0, "a", 2)]


async def test_a_bad_request_is_dropped_not_repeated(clock: SteppedClock) -> None:
    outbox = Outbox(ChannelBudget(RateLimiter(clock, clock.sleep)))
    attempts: list[float] = []

    class Response:
        status, reason = 400, "Bad Request"

    async def invalid(permit: Permit) -> None:
        await permit.take()
        attempts.append(clock.now)
        raise discord.HTTPException(Response(), {"message": "Invalid Form Body", "code": 50035})  # type: ignore[arg-type]

    outbox.offer(1, "a", invalid)
    for _ in range(20):
        await settle(clock, outbox)
        clock.advance(1.0)
    assert attempts == [1000.0] and outbox.busy() == 0
