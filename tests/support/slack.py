"""The fake Slack on a fast clock and a SlackBot per test served over HTTP on the real Bridge
(scripted LLM): fixtures `fake_slack`, `fast_clock` and `h`, a plugin of tests/conftest.py; and
the clarify question as a test finds it in Slack."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator

import pytest

from bots.slack import ids
from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, has_button, running, until
from tests.fakes.slack import FakeSlack, Message, SlackLimits
from tests.fakes.slack_payloads import CHANNEL_ID

QUESTION = {"question": "Which colour?", "choices": ["red", "blue"]}


@pytest.fixture
def fast_clock() -> FastClock:
    """Real Slack limits, 5x faster. Whether they hold exactly is test_rate_limits' business (on
    a clock the test moves): here scheduling jitter may cost a retried 429 now and then."""
    return FastClock()


@pytest.fixture
async def fake_slack(fast_clock: FastClock) -> AsyncIterator[FakeSlack]:
    # A trigger_id lives 3 real seconds on the fast clock.
    limits = SlackLimits(trigger_ttl=3.0 * fast_clock.speed)
    async with FakeSlack(clock=fast_clock, limits=limits, bot_token="xoxb-test") as slack:
        yield slack


def over_http(request: pytest.FixtureRequest) -> bool:
    """Whether the test checks the HTTP path itself (marked `slack_http`): its bot is served
    by uvicorn; the others' requests reach the bot's app in this process (harness.py)."""
    return request.node.get_closest_marker("slack_http") is not None


@pytest.fixture
async def h(request: pytest.FixtureRequest, fake_slack: FakeSlack, pool: RunPool,
            fast_clock: FastClock) -> AsyncIterator[Harness]:
    """The bot on the real Bridge, whose agent calls this test's scripted LLM."""
    async with running(fake_slack, pool, fast_clock, over_http=over_http(request)) as harness:
        yield harness


async def asked(h: Harness, thread: str) -> Message:
    """The clarify question's message as posted with its buttons: a copy, as a client that has
    not seen its later edits still shows it (the fake edits its messages in place, so a click
    on the live object after the expiry's edit would find no button to click)."""
    found = await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread)
                                 if has_button(m, ids.CLARIFY_CUSTOM)])
    return copy.deepcopy(found[0])
