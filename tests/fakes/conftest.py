"""The fake Slack on a clock the test moves, and slack_sdk's client pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import FakeSlack, ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def slack(clock: ManualClock) -> AsyncIterator[FakeSlack]:
    async with FakeSlack(clock=clock) as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(base_url=slack.api_url, token="xoxb-test")
