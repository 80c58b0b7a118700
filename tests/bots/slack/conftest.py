"""The Slack adapter's tests: `h` (tests/support/slack.py) is the bot on the real Bridge, `fh`
the bot on the fault-injecting fake one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from core.runtime.pool import RunPool
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running
from tests.support.slack import over_http
from tests.fakes.slack import FakeSlack


@pytest.fixture
async def fh(request: pytest.FixtureRequest, fake_slack: FakeSlack, fake_pool: RunPool,
             fast_clock: FastClock) -> AsyncIterator[Harness]:
    """The bot on the scripted fault-injecting fake Bridge."""
    async with running(fake_slack, fake_pool, fast_clock, over_http=over_http(request)) as harness:
        yield harness
