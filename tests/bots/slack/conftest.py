"""A SlackBot per test (Slack's requests in this process, or over HTTP for the tests marked
`slack_http`), on the real Bridge (scripted LLM) or the fake one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running
from tests.core.runtime.conftest import fake_bridge, fake_pool, pool, skills_dir  # noqa: F401
from tests.fakes.slack import FakeSlack, SlackLimits


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
async def h(request: pytest.FixtureRequest, fake_slack: FakeSlack, pool: RunPool,  # noqa: F811
            fast_clock: FastClock) -> AsyncIterator[Harness]:
    """The bot on the real Bridge, whose agent calls this test's scripted LLM."""
    async with running(fake_slack, pool, fast_clock, over_http=over_http(request)) as harness:
        yield harness


@pytest.fixture
async def fh(request: pytest.FixtureRequest, fake_slack: FakeSlack, fake_pool: RunPool,  # noqa: F811
             fast_clock: FastClock) -> AsyncIterator[Harness]:
    """The bot on the scripted fault-injecting fake Bridge."""
    async with running(fake_slack, fake_pool, fast_clock, over_http=over_http(request)) as harness:
        yield harness
