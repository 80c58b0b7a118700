"""Two replicas behind one Slack request URL (two SlackBots, two run pools, one database and
Bridge): each event is handled by exactly one of them, retries included, and together they
keep within the workspace's rate limits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

from datetime import timedelta

import pytest

from core.edge.event_ledger import EventLedger
from bots.slack.render.blocks import Payload
from core.store.models import ChatMessage, HandledEvent, Role
from core.edge.ratelimit import BudgetStore, MemoryBudgets, RateLimiter
from core.edge.shared_budgets import PostgresBudgets
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running, until
from bots.slack.delivery import budgets
from tests.conftest import BACKEND
from tests.fakes.fake_bridge import FakeBridge
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID, TEAM_ID, make_slack_event
from tests.support.runtime import catalogue_for, opened_pool
from tests.support.statements import statements


@pytest.fixture
async def two(db: str, fake_slack: FakeSlack, fake_bridge: FakeBridge, skills_dir: Path,
              fast_clock: FastClock) -> AsyncIterator[tuple[Harness, Harness]]:
    """Two replicas whose budgets share one store, as `serve` on PostgreSQL (on SQLite, where
    `serve` runs alone, an in-memory store both are given stands in for the table)."""
    store: BudgetStore = PostgresBudgets(fast_clock) if BACKEND == "postgres" else MemoryBudgets(fast_clock)
    async with AsyncExitStack() as stack:
        harnesses = []
        for _ in range(2):
            pool = await stack.enter_async_context(
                opened_pool(fake_bridge.url, catalogue_for(None, skills_dir)))
            limiter = RateLimiter(fast_clock, fast_clock.sleep, store)
            harnesses.append(await stack.enter_async_context(
                running(fake_slack, pool, fast_clock, limiter=limiter, over_http=True)))
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


async def test_an_unfinished_event_is_handed_to_one_replica_and_a_done_one_to_none(db: str) -> None:
    """The inbox side of the ledger: bodies of events taken long ago and never done, each
    claimed by one replica (another takes it over only once that claim is as old); the done
    marks of many events are written in one statement, their bodies dropped."""
    now = [HandledEvent._meta.fields_map["at"].default()]
    first, second = EventLedger(clock=lambda: now[0]), EventLedger(clock=lambda: now[0])
    for n in range(5):
        assert await first.first("slack", f"Ev{n}", body=f'{{"n": {n}}}')
    assert await first.first("slack", "EvNoBody")  # not a message: nothing to handle again
    after = timedelta(seconds=60)
    assert await second.unfinished("slack", after) == []  # too young: maybe still in hand
    now[0] += timedelta(seconds=61)
    with statements() as sent:
        for n in (1, 3):
            first.done("slack", f"Ev{n}")
        await first.flush()
    assert len([s for s in sent if s.lstrip().upper().startswith("UPDATE")]) == 1
    taken = await second.unfinished("slack", after)
    assert sorted(taken) == [("Ev0", '{"n": 0}'), ("Ev2", '{"n": 2}'), ("Ev4", '{"n": 4}')]
    assert await first.unfinished("slack", after) == []  # claimed by the second
    now[0] += timedelta(seconds=61)  # the second died with them: its claims lapse
    assert len(await first.unfinished("slack", after)) == 3
    assert await HandledEvent.filter(body__isnull=True).count() == 3  # Ev1, Ev3, EvNoBody


EDITS_EACH = 30  # chat.update per replica: each within Tier 3's minute, together beyond it


async def test_two_replicas_together_stay_within_the_workspaces_budget(
    two: tuple[Harness, Harness], fake_slack: FakeSlack
) -> None:
    """Each replica finishes answers in messages of its own at once: 60 chat.update calls in
    one workspace. Each replica alone is within Slack's Tier 3 (50 in any minute); together
    only if they share its window: the first 48 go out, the rest wait for the oldest to leave
    it (each on its own would send its 30 at once: 60 against Slack's 50)."""
    async def posted(harness: Harness, name: str) -> list[tuple[str, str]]:
        sender = harness.bot.services.sender
        return [(f"C{name}{n:02d}", await sender.post(TEAM_ID, f"C{name}{n:02d}", None,
                                                      Payload(f"{name}{n} working")))
                for n in range(EDITS_EACH)]

    messages = await asyncio.gather(posted(two[0], "A"), posted(two[1], "B"))
    edits = [asyncio.ensure_future(harness.bot.services.sender.edit(
        TEAM_ID, channel, ts, lambda: Payload("final answer")))
        for harness, mine in zip(two, messages, strict=True) for channel, ts in mine]
    window = budgets.TIER_3.burst
    try:
        await until(lambda: sum(e.done() for e in edits) >= window)
        assert fake_slack.ratelimited == 0, [c.method for c in fake_slack.calls if c.status == 429]
        assert len(fake_slack.calls_to("chat.update")) == window
        assert sum(e.done() for e in edits) == window
        shown = [fake_slack.message(channel, ts).text for mine in messages for channel, ts in mine]
        assert shown.count("final answer") == window
    finally:
        for edit in edits:
            edit.cancel()
        await asyncio.gather(*edits, return_exceptions=True)
