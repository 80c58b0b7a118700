"""Two replicas behind one Slack request URL (two SlackBots, two run pools, one database and
Bridge): each event is handled by exactly one of them, retries included."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from core.conversation.event_ledger import EventLedger
from core.models import ChatMessage, HandledEvent, Role
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running
from tests.core.runtime.conftest import catalogue_for, opened_pool
from tests.fakes.fake_bridge import FakeBridge
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, make_slack_event


@pytest.fixture
async def two(db: str, fake_slack: FakeSlack, fake_bridge: FakeBridge, skills_dir: Path,
              fast_clock: FastClock) -> AsyncIterator[tuple[Harness, Harness]]:
    async with AsyncExitStack() as stack:
        harnesses = []
        for _ in range(2):
            pool = await stack.enter_async_context(
                opened_pool(fake_bridge.url, catalogue_for(None, skills_dir)))
            harnesses.append(await stack.enter_async_context(running(fake_slack, pool, fast_clock)))
        yield harnesses[0], harnesses[1]


async def test_one_event_delivered_to_two_replicas_and_retried_is_handled_once(
    two: tuple[Harness, Harness], fake_bridge: FakeBridge
) -> None:
    a, b = two
    payload = make_slack_event("app_mention", text="hello")
    thread = payload["event"]["ts"]
    answers = await asyncio.gather(a.post_event(payload), b.post_event(payload))
    assert [r.status_code for r in answers] == [200, 200]
    for harness, retry in ((b, 1), (a, 2)):  # Slack's retries, wherever they land
        assert (await harness.post_event(payload, retry_num=retry)).status_code == 200
    await a.answered(CHANNEL_ID, thread)
    await a.bot.idle()
    await b.bot.idle()
    assert await ChatMessage.filter(role=Role.USER).count() == 1
    assert len(fake_bridge.runs) == 1
    said = [m.text for m in a.bot_messages(CHANNEL_ID, thread)]
    assert len(said) == 1 and not any("still working" in t for t in said), said


async def test_a_command_delivered_to_two_replicas_is_answered_once(
    two: tuple[Harness, Harness]
) -> None:
    """A command leaves nothing in the database to find a repeat by: only the event id can."""
    a, b = two
    payload = make_slack_event("app_mention", text="help")
    thread = payload["event"]["ts"]
    await asyncio.gather(a.post_event(payload), b.post_event(payload))
    await a.bot.idle()
    await b.bot.idle()
    assert len(a.bot_messages(CHANNEL_ID, thread)) == 1


async def test_the_ledger_takes_an_id_once_and_sweeps_it_after_its_ttl(db: str) -> None:
    now = [HandledEvent._meta.fields_map["at"].default()]
    ledger = EventLedger(clock=lambda: now[0])
    assert await ledger.first("slack", "Ev1")
    assert not await ledger.first("slack", "Ev1")
    assert await ledger.first("discord", "Ev1"), "another platform's id is another event"
    assert await ledger.sweep() == 0
    now[0] += ledger.ttl * 2
    assert await ledger.sweep() == 2
    assert await ledger.first("slack", "Ev1"), "forgotten after its TTL"
