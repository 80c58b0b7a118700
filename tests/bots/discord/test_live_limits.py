"""Live edits within Discord's limits, on the fault-injecting fake Bridge and a clock the test
moves: a 30-second run, five concurrent runs, a 429 honoured. FakeDiscord sends no rate-limit
headers here, so discord.py cannot pace itself: only the bot's own budget keeps it clear."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from bots.discord import DiscordBot
from bots.discord.delivery.outbox import Outboxes
from core.edge.ratelimit import RateLimiter
from core.runtime.pool import RunPool
from core.runtime.updates import RunUpdate
from tests.bots.discord.clock import SteppedClock
from tests.bots.discord.harness import (
    EDIT,
    POST,
    answered,
    bot_messages,
    mention,
    reply_to,
    running_bot,
    text_of,
)
from tests.fakes.discordfake import Call, FakeDiscord, Limits
from tests.fakes.fake_bridge import FakeBridge, Item, Stall, ev

SECONDS = 30
STEPS = 4  # clock moves per simulated second
EVENTS_PER_SECOND = 4
WRITES = (POST, EDIT)


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


@pytest.fixture
async def timed_fake(clock: SteppedClock) -> AsyncIterator[FakeDiscord]:
    limits = Limits(rate_limit_headers=False, retry_after=1.0)
    async with FakeDiscord(limits=limits, clock=clock) as server, server.patch_discord():
        yield server


def thirty_seconds(run_id: str) -> list[Item]:
    """Four events a second (thinking, status, a tool, the todo list), then the answer."""
    items: list[Item] = []
    for second in range(SECONDS):
        items += [
            ev("text", text=f"Thinking about step {second}. "),
            ev("status", category="progress", message=f"step {second}"),
            ev("tool_start", tool_call_id=f"c{second}", tool_name="search", args={"q": str(second)}),
            ev("todo_update", todos=[
                {"id": str(n), "content": f"part {n}",
                 "status": "completed" if n < second // 10 else "pending"}
                for n in range(3)]),
            Stall(f"{run_id}-{second}"),
        ]
    return [*items, ev("done", final_text=f"All done for {run_id[:6]}.")]


def most_writes_in_a_window(calls: list[Call], window: float = 5.0) -> int:
    times = sorted(c.at for c in calls)
    return max((sum(1 for t in times if start <= t < start + window) for start in times), default=0)


class RouteProbe:
    """Wraps the bot's RunFollower.route to learn how far it has taken in each run's updates."""

    def __init__(self, bot: DiscordBot) -> None:
        self.routed: dict[str, tuple[int, bool]] = {}
        self.runs: set[str] = set()
        original = bot.services.follower.route

        async def route(update: RunUpdate) -> None:
            await original(update)
            progress = (update.state.last_seq, update.finished)
            self.routed[update.run_id] = max(self.routed.get(update.run_id, (0, False)), progress)

        bot.services.follower.route = route  # type: ignore[method-assign]

    def caught_up(self, pool: RunPool) -> bool:
        """Every run's newest view (finished ones too) went through route."""
        self.runs |= {u.run_id for u in pool.active()}
        views = [pool.view(run_id) for run_id in self.runs]
        return all(v is None or self.routed.get(v.run_id, (-1, False)) >= (v.state.last_seq, v.finished)
                   for v in views)


async def play(fake: FakeDiscord, bridge: FakeBridge, pool: RunPool, clock: SteppedClock,
               bot: DiscordBot, count: int, shown: Callable[[], bool]) -> None:
    """One simulated second at a time: let each run's events through, then move the clock in
    quarter seconds, each time until the bot has done all it may do before the next."""
    probe = RouteProbe(bot)
    outboxes = bot.services.outboxes
    for second in range(SECONDS):
        for update in pool.active():
            bridge.release(f"{update.run_id}-{second}")
        folded = EVENTS_PER_SECOND * (second + 1)
        await fake.wait_until(lambda folded=folded: not pool.active() or count == sum(
            u.state.last_seq >= folded for u in pool.active()), 10.0, f"second {second}")
        for _ in range(STEPS):
            await settle(fake, clock, outboxes, lambda: probe.caught_up(pool))
            clock.advance(1.0 / STEPS)
    await fake.wait_until(lambda: not pool.active(), 10.0, "the runs to finish")
    for _ in range(20 * STEPS):  # the last updates and the final answers, within the budget
        await settle(fake, clock, outboxes, lambda: probe.caught_up(pool))
        if shown():
            return
        clock.advance(1.0 / STEPS)
    raise AssertionError("the final state was never shown")


SETTLE_TURNS = 5


async def settle(fake: FakeDiscord, clock: SteppedClock, outboxes: Outboxes,
                 caught_up: Callable[[], bool]) -> None:
    """Until the bot has taken in every update, every call is answered and every busy
    channel of every outbox waits for the clock. The reactions' and renames' workers sleep on
    the same clock: counted against the messages' workers alone, one of them waiting would
    pass for a message worker that is still on its way to its next wait (under load, while
    it reads an answer), and the clock would move on without it, spending the run's time."""
    def busy() -> int:
        return sum(o.busy() for o in (outboxes.messages, outboxes.reactions, outboxes.renames))

    def settled() -> bool:
        return (caught_up() and all(c.status is not None for c in fake.calls)
                and clock.blocked() >= busy())

    # Settled for a few turns of the loop in a row: a write whose answer was just read, or a
    # worker just woken, is on its way to its next wait, which is not visible in one look.
    calm = 0
    while calm < SETTLE_TURNS:
        await fake.wait_until(settled, what="the bot to settle")
        await asyncio.sleep(0)
        calm = calm + 1 if settled() else 0


def writes_in(fake: FakeDiscord, channel_id: Any) -> list[Call]:
    return [c for c in fake.calls if c.route in WRITES and c.params["channel_id"] == str(channel_id)]


async def test_a_thirty_second_run_stays_within_the_channel_budget(
    timed_fake: FakeDiscord, fake_bridge: FakeBridge, fake_runs: RunPool, clock: SteppedClock
) -> None:
    fake = timed_fake
    fake_bridge.default_script = thirty_seconds
    async with running_bot(fake, fake_runs, limiter=RateLimiter(clock, clock.sleep)) as bot:
        asked = await fake.send_user_message(mention(fake, "a long job"))
        thread = asked["id"]
        await fake.wait_until(lambda: fake_runs.active(), 10.0, "the run")
        run_id = fake_runs.active()[0].run_id
        await play(fake, fake_bridge, fake_runs, clock, bot, 1,
                   lambda: bool(answered(fake, thread, f"All done for {run_id[:6]}.")))
    writes = writes_in(fake, thread)
    print(f"30 s run: {len(writes)} writes ({len(fake.calls_to(EDIT))} edits), "
          f"{SECONDS * EVENTS_PER_SECOND + 1} events, most in 5 s: {most_writes_in_a_window(writes)}")
    assert fake.rate_limited == [] and fake.rejected == []
    assert 22 <= len(writes) <= 28
    assert most_writes_in_a_window(writes) <= 5


async def test_five_concurrent_runs_in_one_channel_share_its_budget(
    timed_fake: FakeDiscord, fake_bridge: FakeBridge, fake_runs: RunPool, clock: SteppedClock
) -> None:
    """Five conversations in one DM channel (`/hermes new` between them): one budget for all."""
    fake = timed_fake
    fake_bridge.default_script = thirty_seconds
    dm = fake.dm_channel_id()
    async with running_bot(fake, fake_runs, limiter=RateLimiter(clock, clock.sleep)) as bot:
        for n in range(5):
            await fake.send_user_message(f"job {n}", channel_id=dm)
            await fake.wait_until(lambda n=n: len(fake_runs.active()) == n + 1, 10.0, f"run {n}")
            new = await fake.run_command("hermes", "new", channel_id=dm)
            await fake.wait_until(lambda new=new: "New conversation" in reply_to(fake, new), 10.0)
        finals = [f"All done for {u.run_id[:6]}." for u in fake_runs.active()]
        await play(fake, fake_bridge, fake_runs, clock, bot, 5,
                   lambda: all(answered(fake, dm, text) for text in finals))
    writes = writes_in(fake, dm)
    print(f"5 runs in one channel: {len(writes)} writes, most in 5 s: {most_writes_in_a_window(writes)}")
    assert fake.rate_limited == [] and fake.rejected == []
    assert most_writes_in_a_window(writes) <= 5
    assert len([m for m in bot_messages(fake, dm) if "All done for" in text_of(m)]) == 5


async def test_five_concurrent_runs_in_threads_of_one_channel(
    timed_fake: FakeDiscord, fake_bridge: FakeBridge, fake_runs: RunPool, clock: SteppedClock
) -> None:
    """Five mentions in #general: five threads, each its own channel (and budget) on Discord."""
    fake = timed_fake
    fake_bridge.default_script = thirty_seconds
    async with running_bot(fake, fake_runs, limiter=RateLimiter(clock, clock.sleep)) as bot:
        threads = [(await fake.send_user_message(mention(fake, f"job {n}")))["id"] for n in range(5)]
        await fake.wait_until(lambda: len(fake_runs.active()) == 5, 10.0, "five runs")
        await play(fake, fake_bridge, fake_runs, clock, bot, 5,
                   lambda: all(answered(fake, t, "All done for") for t in threads))
    per_thread = [writes_in(fake, t) for t in threads]
    print("5 runs in 5 threads: writes per thread", [len(w) for w in per_thread],
          "most in 5 s", [most_writes_in_a_window(w) for w in per_thread])
    assert fake.rate_limited == [] and fake.rejected == []
    assert all(22 <= len(w) <= 28 and most_writes_in_a_window(w) <= 5 for w in per_thread)


async def test_a_429_closes_the_channel_for_its_retry_after(
    timed_fake: FakeDiscord, fake_bridge: FakeBridge, fake_runs: RunPool, clock: SteppedClock
) -> None:
    fake = timed_fake
    fake_bridge.default_script = thirty_seconds
    limited = {"message": "You are being rate limited.", "retry_after": 4.0, "global": False}
    async with running_bot(fake, fake_runs, limiter=RateLimiter(clock, clock.sleep)) as bot:
        asked = await fake.send_user_message(mention(fake, "a long job"))
        await fake.wait_until(lambda: fake_runs.active(), 10.0, "the run")
        fake.fail_next(EDIT, status=429, body=limited, headers={"Retry-After": "4"})
        await play(fake, fake_bridge, fake_runs, clock, bot, 1,
                   lambda: bool(answered(fake, asked["id"], "All done for")))
    writes = writes_in(fake, asked["id"])
    (refused,) = fake.rate_limited
    after = [c for c in writes if c.seq > refused.seq]
    assert after[0].at >= refused.at + 4.0, "nothing more on the channel before Retry-After"
    assert most_writes_in_a_window(writes) <= 5 and len(fake.rejected) == 1
