"""Slack answering 503 or hanging for a minute while a run finishes (issue 8 §4): the adapter
backs off (a handful of calls in that minute, not a tight loop), then delivers the final state
with its buttons once Slack answers, and repeats nothing in the thread.

The fake Slack and the adapter share a clock 20 times faster than real time, so a minute of
outage and its 30-second pauses take a few real seconds."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bots.slack import ids
from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, has_button, running, texts, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.slack import FakeSlack, SlackLimits
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.fakes.changes import WAIT

SPEED = 20.0
MINUTE = 60.0  # on the shared clock
TIMEOUT = 0.5  # real seconds before the adapter gives up on a hanging call (10 on the clock)
# Pauses of 1, 2, 4, 8, 16, 30 s: about seven calls meet a minute of outage; a tight loop
# would make hundreds.
MOST_CALLS = 10


@pytest.fixture
def quick() -> FastClock:
    return FastClock(SPEED)


@pytest.fixture
async def slack(quick: FastClock) -> AsyncIterator[FakeSlack]:
    limits = SlackLimits(trigger_ttl=3.0 * SPEED)
    async with FakeSlack(clock=quick, limits=limits, bot_token="xoxb-test") as fake:
        yield fake


@pytest.fixture
async def oh(slack: FakeSlack, fake_pool: RunPool, quick: FastClock) -> AsyncIterator[Harness]:
    async with running(slack, fake_pool, quick, api_timeout=TIMEOUT) as harness:
        yield harness


async def live_then_outage(oh: Harness, slack: FakeSlack, fake_bridge: FakeBridge,
                           hang: bool) -> tuple[str, str]:
    """Start a run, wait for its live message, take Slack down, let the run finish."""
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="thinking it over"), Stall("hold"), ev("text", text=" and done"),
        ev("done", final_text="The answer, delivered late."),
    ]
    thread = (await oh.event("app_mention", text="answer me"))["ts"]
    [live] = await until(lambda: [m for m in oh.bot_messages(CHANNEL_ID, thread)
                                  if "thinking it over" in texts(m)])
    oh.outage = slack.outage(MINUTE, hang=hang)  # type: ignore[attr-defined]
    fake_bridge.release("hold")
    return thread, live.ts


async def delivered(oh: Harness, slack: FakeSlack, thread: str, ts: str) -> None:
    outage = oh.outage  # type: ignore[attr-defined]
    final = await until(lambda: (m := slack.message(CHANNEL_ID, ts))
                        and "The answer, delivered late." in texts(m) and m, WAIT)
    assert has_button(final, ids.REGENERATE) and has_button(final, ids.SHOW_THINKING)
    assert slack.state.clock() >= outage.until, "delivered only once Slack answered again"
    assert 2 <= outage.met <= MOST_CALLS, f"{outage.met} calls during the outage"
    assert [m.ts for m in oh.bot_messages(CHANNEL_ID, thread)] == [ts], "nothing repeated"
    assert slack.ratelimited == 0


async def test_a_minute_of_503s_then_the_final_answer_arrives(
    oh: Harness, slack: FakeSlack, fake_bridge: FakeBridge
) -> None:
    thread, ts = await live_then_outage(oh, slack, fake_bridge, hang=False)
    await delivered(oh, slack, thread, ts)


async def test_a_minute_of_hanging_calls_times_out_backs_off_and_delivers(
    oh: Harness, slack: FakeSlack, fake_bridge: FakeBridge
) -> None:
    thread, ts = await live_then_outage(oh, slack, fake_bridge, hang=True)
    await delivered(oh, slack, thread, ts)
