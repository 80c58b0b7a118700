"""Scheduled prompts fire once per occurrence, whichever replicas look, and across a restart:
three replicas (each its pool, its Slack bot and its schedules) on one database, one fake Slack
and the fake Bridge, on an injected clock (no waiting for wall time). Run on PostgreSQL too
(HERMES_TEST_DB=postgres): the claims race in the database there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.chat import schedules
from core.chat.schedules import NewSchedule, Where
from core.conversation.scheduled_prompts import RETRY, ScheduledPrompts
from core.runtime.pool import RunPool
from core.store.models import (
    ChatMessage,
    ConversationBinding,
    LimitPeriod,
    LimitScope,
    LimitUnit,
    Platform,
    Role,
    RunOutcome,
    Schedule,
    ScheduleRun,
    SpendLimit,
)
from tests.bots.slack.harness import Harness, running, until
from tests.fakes.fake_bridge import FakeBridge, ev
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import CHANNEL_ID, TEAM_ID, USER_ID
from tests.support.runtime import catalogue_for, opened_pool

MONDAY_0859 = datetime(2026, 12, 7, 8, 59, tzinfo=UTC)
ANSWER = "Three pull requests are open."


class Clock:
    """The schedules' now, moved by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def answering(fake_bridge: FakeBridge) -> FakeBridge:
    fake_bridge.default_script = lambda run_id: [ev("text", text="reading… "),
                                                 ev("done", final_text=ANSWER)]
    return fake_bridge


@asynccontextmanager
async def replica(fake_bridge: FakeBridge, skills: Path, slack: FakeSlack, fast_clock: object,
                  clock: Clock, **settings: object
                  ) -> AsyncIterator[tuple[ScheduledPrompts, Harness]]:
    """One replica: its pool, its Slack bot (with these settings), its scheduled prompts."""
    async with opened_pool(fake_bridge.url, catalogue_for(None, skills)) as pool, \
            running(slack, pool, fast_clock, **settings) as harness:
        prompts = ScheduledPrompts(pool, harness.bot.files, clock=clock)
        prompts.serve(Platform.SLACK, harness.bot.scheduled_threads)
        yield prompts, harness


@asynccontextmanager
async def replicas(count: int, *args: object) -> AsyncIterator[list[tuple[ScheduledPrompts, Harness]]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(replica(*args)) for _ in range(count)]  # type: ignore[arg-type]


async def weekday_schedule(misfire: str = "run_once", author: str = USER_ID) -> Schedule:
    return await schedules.create(NewSchedule(
        Where(Platform.SLACK, TEAM_ID, CHANNEL_ID), author, "Summarize the open pull requests",
        "every weekday at 9:00", "Europe/Paris", misfire), MONDAY_0859 - timedelta(hours=1))


def roots(slack: FakeSlack) -> list[Message]:
    """The prompts the bot posted in the channel (each opens a schedule's thread)."""
    return [m for m in slack.history(CHANNEL_ID)
            if m.bot_id and not m.thread_ts and "Scheduled by" in m.text]


async def fire(prompts: list[ScheduledPrompts]) -> list[ScheduleRun]:
    """Every replica looks at once."""
    taken = await asyncio.gather(*(p.due() for p in prompts))
    return [run for runs in taken for run in runs]


async def test_an_occurrence_fires_once_with_three_replicas(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object) -> None:
    schedule = await weekday_schedule()
    assert schedule.next_run_at == datetime(2026, 12, 7, 8, 0, tzinfo=UTC)  # 9:00 in Paris
    clock = Clock(datetime(2026, 12, 7, 8, 0, 2, tzinfo=UTC))
    async with replicas(3, answering, skills_dir, fake_slack, fast_clock, clock) as three:
        assert await fire([p for p, _ in three]) != []
        harness = three[0][1]
        [root] = roots(fake_slack)
        await harness.answered(CHANNEL_ID, root.ts)
        clock.now += timedelta(seconds=30)
        assert await fire([p for p, _ in three]) == []  # handled: nobody fires it again

        [run] = await ScheduleRun.all()
        assert (run.outcome, run.thread) == (RunOutcome.STARTED, root.ts)
        assert run.occurrence_at == datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
        binding = await ConversationBinding.get(thread=root.ts)
        assert (binding.platform, binding.channel, run.session_id) == (
            Platform.SLACK, CHANNEL_ID, binding.session_id)
        user = await ChatMessage.get(session_id=run.session_id, role=Role.USER)
        assert (user.author, user.content) == (USER_ID, "Summarize the open pull requests")
        assert "<@U0USER>" in root.text and "Summarize the open pull requests" in root.text

        clock.now = datetime(2026, 12, 8, 8, 0, 1, tzinfo=UTC)  # Tuesday's
        assert len(await fire([p for p, _ in three])) == 1
        assert len(roots(fake_slack)) == 2
    assert (await Schedule.get(id=schedule.id)).next_run_at == datetime(2026, 12, 9, 8, 0,
                                                                         tzinfo=UTC)


@pytest.mark.parametrize("misfire", ["run_once", "skip"])
async def test_occurrences_missed_during_a_restart_run_once_or_are_skipped(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object, misfire: str) -> None:
    schedule = await weekday_schedule(misfire)
    clock = Clock(datetime(2026, 12, 7, 8, 0, 1, tzinfo=UTC))
    args = (answering, skills_dir, fake_slack, fast_clock, clock)
    async with replicas(3, *args) as three:
        assert len(await fire([p for p, _ in three])) == 1  # Monday's, on time
    # every replica is down from Monday to Thursday 10:00: Tuesday, Wednesday and Thursday missed
    clock.now = datetime(2026, 12, 10, 9, 0, tzinfo=UTC)
    async with replicas(3, *args) as three:
        taken = await fire([p for p, _ in three])
        clock.now += timedelta(minutes=1)
        assert await fire([p for p, _ in three]) == []
        if misfire == "run_once":
            await three[0][1].answered(CHANNEL_ID, roots(fake_slack)[-1].ts)

    thursday = datetime(2026, 12, 10, 8, 0, tzinfo=UTC)
    assert [(r.occurrence_at, r.outcome) for r in taken] == [
        (thursday, RunOutcome.STARTED if misfire == "run_once" else RunOutcome.SKIPPED)]
    assert len(roots(fake_slack)) == (2 if misfire == "run_once" else 1)
    assert await ScheduleRun.filter(schedule_id=schedule.id).count() == 2
    assert (await Schedule.get(id=schedule.id)).next_run_at == thursday + timedelta(days=1)


async def test_a_paused_schedule_does_not_fire_and_resumes_from_the_next_occurrence(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object) -> None:
    schedule = await weekday_schedule()
    clock = Clock(datetime(2026, 12, 7, 8, 0, 1, tzinfo=UTC))
    await schedules.pause(schedule.id, clock.now)
    async with replica(answering, skills_dir, fake_slack, fast_clock, clock) as (prompts, _):
        assert await prompts.due() == []
        clock.now = datetime(2026, 12, 8, 12, 0, tzinfo=UTC)
        resumed = await schedules.resume(schedule.id, clock.now)
        assert resumed.next_run_at == datetime(2026, 12, 9, 8, 0, tzinfo=UTC)
        assert await prompts.due() == []  # nothing of the paused days is run
    assert roots(fake_slack) == []


async def test_the_author_who_may_no_longer_talk_is_refused_and_nothing_is_posted(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object) -> None:
    await weekday_schedule()
    clock = Clock(datetime(2026, 12, 7, 8, 0, 1, tzinfo=UTC))
    async with replica(answering, skills_dir, fake_slack, fast_clock, clock,
                       allowed_users=("U0SOMEONE",)) as (p, _):
        [run] = await p.due()
    assert run.outcome == RunOutcome.REFUSED and "not on the list" in run.detail
    assert roots(fake_slack) == []


async def test_the_jobs_are_loaded_from_the_table_and_follow_its_changes(
        db: str, fake_pool: RunPool, fake_slack: FakeSlack, fast_clock: object) -> None:
    """apscheduler's jobs on a replica: one per active schedule, with its trigger."""
    schedule = await weekday_schedule()
    async with running(fake_slack, fake_pool, fast_clock) as harness:
        prompts = ScheduledPrompts(fake_pool, harness.bot.files)
        prompts.serve(Platform.SLACK, harness.bot.scheduled_threads)
        prompts.start()
        try:
            await prompts.sync()
            assert list(prompts.jobs()) == [schedule.id]
            await schedules.pause(schedule.id, MONDAY_0859)
            await prompts.sync()
            assert list(prompts.jobs()) == []
        finally:
            prompts.stop()


async def test_a_time_over_the_authors_spend_limit_is_refused_in_its_thread(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object) -> None:
    """The run is the author's: their limits refuse it as they refuse their own message."""
    await weekday_schedule()
    await SpendLimit.create(scope=LimitScope.USER, subject=USER_ID, period=LimitPeriod.DAY,
                            unit=LimitUnit.TOKENS, amount=0)
    clock = Clock(datetime(2026, 12, 7, 8, 0, 1, tzinfo=UTC))
    async with replica(answering, skills_dir, fake_slack, fast_clock, clock) as (prompts, h):
        [run] = await prompts.due()
        [root] = roots(fake_slack)
        told = [m.text for m in h.bot_messages(CHANNEL_ID, root.ts) if m.thread_ts]
    assert run.outcome == RunOutcome.REFUSED and run.thread == root.ts
    assert run.detail.startswith("You have used 0 tokens of the 0 tokens you may use a day")
    assert told == [run.detail]
    assert answering.runs == {}


async def test_three_started_schedulers_fire_a_time_once_and_once_after_a_restart(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object) -> None:
    """The apscheduler schedulers themselves, started on three replicas: each loads the jobs
    from the table and looks for what is due at once (their sync job); the clock is the test's."""
    schedule = await weekday_schedule()
    clock = Clock(datetime(2026, 12, 7, 8, 0, 1, tzinfo=UTC))
    args = (answering, skills_dir, fake_slack, fast_clock, clock)
    for restart in (False, True):
        if restart:  # down from Monday's to Wednesday 11:00 (Paris): Tuesday's and Wednesday's missed
            clock.now = datetime(2026, 12, 9, 10, 0, tzinfo=UTC)
        async with replicas(3, *args) as three:
            prompts = [p for p, _ in three]
            for each in prompts:
                each.start()
            try:
                await until(lambda: all(p.syncs >= 1 for p in prompts))
                assert all(list(p.jobs()) == [schedule.id] for p in prompts)
                assert all(p.jobs()[schedule.id] is not None for p in prompts)
                await three[0][1].answered(CHANNEL_ID, roots(fake_slack)[-1].ts)
            finally:
                for each in prompts:
                    each.stop()
    runs = await ScheduleRun.all().order_by("occurrence_at")
    assert [(r.occurrence_at, r.outcome) for r in runs] == [
        (datetime(2026, 12, 7, 8, 0, tzinfo=UTC), RunOutcome.STARTED),
        (datetime(2026, 12, 9, 8, 0, tzinfo=UTC), RunOutcome.STARTED)]
    assert len(roots(fake_slack)) == 2


async def test_a_channel_the_bot_cannot_post_in_fails_that_time_saying_why(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object) -> None:
    gone = await schedules.create(NewSchedule(
        Where(Platform.SLACK, TEAM_ID, "not-a-channel"), USER_ID, "Hi", "every day at 9:00",
        "UTC"), MONDAY_0859)
    await weekday_schedule()
    clock = Clock(datetime(2026, 12, 7, 9, 0, 1, tzinfo=UTC))
    async with replica(answering, skills_dir, fake_slack, fast_clock, clock) as (prompts, _):
        runs = {run.schedule_id: run for run in await prompts.due()}
    assert runs[gone.id].outcome == RunOutcome.FAILED
    assert runs[gone.id].detail == ("Slack refused the post in the channel (channel_not_found): "
                                    "is the bot still in it?")
    assert [r.outcome for i, r in runs.items() if i != gone.id] == [RunOutcome.STARTED]


@pytest.mark.parametrize("stopped", ["after its claim", "after opening the thread",
                                     "after taking the turn"])
async def test_a_time_whose_replica_died_while_starting_it_is_taken_over_once(
        db: str, answering: FakeBridge, skills_dir: Path, fake_slack: FakeSlack,
        fast_clock: object, stopped: str) -> None:
    """What a replica leaves when it dies at each step of starting a time: the claim (the
    occurrence advanced), the thread it opened (kept on the claim), the turn it wrote. Another
    replica goes on from there, once, INTAKE_RETRY_SECONDS after the claim."""
    schedule = await weekday_schedule()
    claimed = datetime(2026, 12, 7, 8, 0, 1, tzinfo=UTC)
    clock = Clock(claimed)
    args = (answering, skills_dir, fake_slack, fast_clock, clock)
    if stopped == "after taking the turn":  # it all ran, but the outcome was never written
        async with replica(*args) as (dead, h):
            [run] = await dead.due()
            await h.answered(CHANNEL_ID, run.thread)
        await ScheduleRun.filter(id=run.id).update(outcome=RunOutcome.CLAIMED, run_id="",
                                                   session_id=None)
    else:
        occurrence = schedule.next_run_at
        assert occurrence is not None
        run = await schedules.claim(schedule, occurrence, RunOutcome.CLAIMED, now=claimed)
        assert run is not None
        await schedules.advance(schedule, occurrence, claimed)
        if stopped == "after opening the thread":
            async with replica(*args) as (_, h):
                opened = await h.bot.scheduled_threads.open(schedule)
            await schedules.opened(run, opened.key.thread)
    started_runs = len(answering.runs)

    async with replicas(2, *args) as two:
        prompts = [p for p, _ in two]
        clock.now = claimed + RETRY - timedelta(seconds=1)
        assert await fire(prompts) == []  # its replica may still be starting it
        clock.now = claimed + RETRY + timedelta(seconds=1)
        [taken] = await fire(prompts)  # one of the two goes on with it
        [root] = roots(fake_slack)  # the prompt posted once
        await two[0][1].answered(CHANNEL_ID, root.ts)
        clock.now += timedelta(minutes=1)
        assert await fire(prompts) == []

    assert (taken.id, taken.outcome, taken.thread) == (run.id, RunOutcome.STARTED, root.ts)
    answer = await ChatMessage.get(session_id=taken.session_id, role=Role.ASSISTANT)
    assert taken.run_id == answer.run_id and answer.content == ANSWER
    assert await ChatMessage.filter(role=Role.USER).count() == 1  # one turn
    assert len(answering.runs) == (1 if stopped == "after taking the turn" else started_runs + 1)
    assert (await Schedule.get(id=schedule.id)).next_run_at == datetime(2026, 12, 8, 8, 0,
                                                                         tzinfo=UTC)
