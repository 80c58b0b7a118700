"""Migration 0022 (scheduled prompts) on SQLite and PostgreSQL: one row per schedule and time
(the claim that makes one replica start it), the history going with its schedule, and times
compared as the database stores them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from tortoise.exceptions import IntegrityError

from core.chat import schedules
from core.chat.schedules import NewSchedule, Where
from core.store.models import Platform, RunOutcome, Schedule, ScheduleRun

NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)


async def test_one_claim_per_schedule_and_time_and_the_history_goes_with_its_schedule(
        db: str) -> None:
    made = await schedules.create(NewSchedule(Where(Platform.DISCORD, "1", "2"), "3", "Hi",
                                              "every day at 9:00", "Asia/Kolkata"), NOW)
    assert made.next_run_at == datetime(2026, 12, 6, 3, 30, tzinfo=UTC)
    at = made.next_run_at
    assert await schedules.claim(made, at, RunOutcome.CLAIMED) is not None
    assert await schedules.claim(made, at, RunOutcome.CLAIMED) is None  # another replica's try
    with pytest.raises(IntegrityError):
        await ScheduleRun.create(schedule_id=made.id, occurrence_at=at)
    assert await schedules.claim(made, at + timedelta(days=1), RunOutcome.SKIPPED) is not None
    assert [s.id for s in await schedules.due(at)] == [made.id]
    assert await schedules.due(at - timedelta(seconds=1)) == []
    await schedules.delete(made.id)
    assert await ScheduleRun.all().count() == 0 and await Schedule.all().count() == 0
