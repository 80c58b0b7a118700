"""Discord answering 503 or hanging for a minute while a run finishes (issue 8 §4): the adapter
backs off (a handful of writes in that minute, not a tight loop), then delivers the final
state with its buttons once Discord answers, and repeats nothing in the thread.

The fake Discord and the bot's budget share a clock 20 times faster than real time, so a
minute of outage and its 30-second pauses take a few real seconds."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from core.runtime.pool import RunPool
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    fast_limiter,
    mention,
    running_bot,
    showing,
)
from tests.fakes.discordfake import FakeDiscord, Limits
from tests.fakes.fake_bridge import FakeBridge, Stall, ev

SPEED = 20.0
MINUTE = 60.0  # on the shared clock
TIMEOUT = 0.5  # real seconds before the bot gives up on a hanging write (10 on the clock)
WAIT = 30.0
# Pauses of 1, 2, 4, 8, 16, 30 s: about seven writes meet a minute of outage; a tight loop
# would make hundreds.
MOST_CALLS = 10
ANSWER = "The answer, delivered late."


@pytest.fixture
async def quick_fake() -> AsyncIterator[FakeDiscord]:
    """Discord's real limits, on a clock SPEED times faster (the bot's budget runs on it too).
    No rate-limit headers: discord.py would wait out their windows in real seconds."""
    limits = Limits(rate_limit_headers=False)
    async with FakeDiscord(limits=limits, clock=lambda: time.monotonic() * SPEED) as server, \
            server.patch_discord():
        yield server
        assert server.rate_limited == [], "the bot's own budget must keep it clear of 429s"


async def finish_during_an_outage(quick_fake: FakeDiscord, fake_runs: RunPool,
                                  fake_bridge: FakeBridge, hang: bool) -> None:
    fake = quick_fake
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="thinking it over"), Stall("hold"), ev("text", text=" and done"),
        ev("done", final_text=ANSWER),
    ]
    async with running_bot(fake, fake_runs, limiter=fast_limiter(SPEED), write_timeout=TIMEOUT):
        asked = await fake.send_user_message(mention(fake, "answer me"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: showing(fake, thread, "thinking it over"), WAIT, "live turn")
        outage = fake.outage(MINUTE, hang=hang)
        fake_bridge.release("hold")
        await fake.wait_until(lambda: answered(fake, thread, ANSWER), WAIT, "the final answer")
        assert fake.core.clock() >= outage.until, "delivered only once Discord answered again"
    assert 2 <= outage.met <= MOST_CALLS, f"{outage.met} writes during the outage"
    [final] = bot_messages(fake, thread)  # nothing repeated
    assert button(final, "Regenerate") and button(final, "Show thinking")


async def test_a_minute_of_503s_then_the_final_answer_arrives(
    quick_fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    await finish_during_an_outage(quick_fake, fake_runs, fake_bridge, hang=False)


async def test_a_minute_of_hanging_writes_times_out_backs_off_and_delivers(
    quick_fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    await finish_during_an_outage(quick_fake, fake_runs, fake_bridge, hang=True)
