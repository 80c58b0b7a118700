"""Scheduled prompts as the database keeps them: the schedules of a channel, their state, and
each occurrence's claim and outcome (the run history).

The `schedule` table is the persistent job store: each schedule's crontab, time zone and the
first occurrence not yet handled (`next_run_at`). Several replicas may look at one occurrence
at once; the one whose `schedule_run` row goes in first (unique per schedule and occurrence
time) starts it, and the others see it taken. A claim whose replica died before settling it is
taken over, once, by another (`abandoned`, `take_over`) and goes on from its last step (the
thread it opened is kept on the row as soon as it is open: docs/schedules.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tortoise.exceptions import IntegrityError

from core.chat.recurrence import Recurrence, check_cron, parse_when, zone
from core.errors import NotFound
from core.store.models import (
    Misfire,
    Platform,
    RunOutcome,
    Schedule,
    ScheduleRun,
    ScheduleState,
    utc_now,
)
from core.text.field_errors import InvalidField
from core.text.safe_text import bounded, clean_text

MAX_PROMPT = 4000  # characters of a scheduled prompt
MAX_PHRASE = 200
HISTORY = 20  # runs shown with a schedule


@dataclass(frozen=True, slots=True)
class Where:
    """The channel a schedule posts in."""

    platform: Platform
    workspace: str
    channel: str


@dataclass(frozen=True, slots=True)
class NewSchedule:
    """What a person or an operator asks for; checked by `create`."""

    where: Where
    author: str
    prompt: str
    when: str  # a phrase or a crontab (core/chat/recurrence.py)
    timezone: str = "UTC"
    misfire: str = Misfire.RUN_ONCE.value


def recurrence(schedule: Schedule) -> Recurrence:
    return Recurrence(schedule.cron, schedule.timezone)


def misfire_of(value: str) -> Misfire:
    try:
        return Misfire(value.strip().lower())
    except ValueError:
        raise InvalidField("misfire", f"{value!r} is not run_once or skip: say what a time "
                                      "missed while the bot was down does") from None


async def create(new: NewSchedule, now: datetime) -> Schedule:
    """A schedule from `new` (InvalidField naming the input: when, timezone, prompt, misfire),
    active, its first occurrence the next one after `now`."""
    prompt = _prompt(new.prompt, "write it after when it runs")
    phrase, cron = _when(new.when)
    tz = zone(new.timezone, "timezone").key
    misfire = misfire_of(new.misfire)
    return await Schedule.create(
        platform=new.where.platform, workspace=clean_text(new.where.workspace),
        channel=clean_text(new.where.channel), author=clean_text(new.author), prompt=prompt,
        phrase=phrase, cron=cron, timezone=tz, misfire=misfire,
        next_run_at=Recurrence(cron, tz).next_after(now), created_at=now, updated_at=now)


def _prompt(text: str, hint: str) -> str:
    prompt = bounded(text.strip(), MAX_PROMPT)  # NUL and lone surrogates replaced
    if not prompt:
        raise InvalidField("prompt", f"The prompt is empty: {hint}")
    return prompt


def _when(text: str) -> tuple[str, str]:
    """The phrase as written, and the crontab it makes (checked)."""
    phrase = bounded(text.strip(), MAX_PHRASE)
    return phrase, check_cron(parse_when(phrase))


@dataclass(frozen=True, slots=True)
class ScheduleEdit:
    """What an edit changes (None: as it is), checked as `create` checks them."""

    prompt: str | None = None
    when: str | None = None
    timezone: str | None = None
    misfire: str | None = None


async def edit(schedule_id: int, changes: ScheduleEdit, now: datetime) -> Schedule:
    """The schedule with `changes` (InvalidField naming the input). A new time or time zone
    moves an active schedule's next occurrence to the first of the new times after `now`;
    the occurrences already handled stay in its history."""
    schedule = await get(schedule_id)
    fields: dict[str, Any] = {"updated_at": now}
    if changes.prompt is not None:
        fields["prompt"] = _prompt(changes.prompt, "write what the agent is asked")
    if changes.when is not None:
        fields["phrase"], fields["cron"] = _when(changes.when)
    if changes.timezone is not None:
        fields["timezone"] = zone(changes.timezone, "timezone").key
    if changes.misfire is not None:
        fields["misfire"] = misfire_of(changes.misfire)
    cron, tz = fields.get("cron", schedule.cron), fields.get("timezone", schedule.timezone)
    if (cron, tz) != (schedule.cron, schedule.timezone) and schedule.state is ScheduleState.ACTIVE:
        fields["next_run_at"] = Recurrence(cron, tz).next_after(now)
    await Schedule.filter(id=schedule_id).update(**fields)
    return await get(schedule_id)


async def get(schedule_id: int) -> Schedule:
    schedule = await Schedule.get_or_none(id=schedule_id)
    if schedule is None:
        raise NotFound(f"There is no schedule {schedule_id}")
    return schedule


async def listing(where: Where | None = None, **filters: Any) -> list[Schedule]:
    """Schedules, oldest first: of one channel, or of every channel (`filters`: more fields)."""
    if where is not None:
        filters.update(platform=where.platform, workspace=where.workspace, channel=where.channel)
    return await Schedule.filter(**filters).order_by("id")


async def pause(schedule_id: int, now: datetime) -> Schedule:
    """No occurrence runs until it is resumed (pausing twice is pausing)."""
    await get(schedule_id)
    await Schedule.filter(id=schedule_id).update(state=ScheduleState.PAUSED, next_run_at=None,
                                                 updated_at=now)
    return await get(schedule_id)


async def resume(schedule_id: int, now: datetime) -> Schedule:
    """Active again from the next occurrence after `now` (the paused ones are not run)."""
    schedule = await get(schedule_id)
    if schedule.state is ScheduleState.PAUSED or schedule.next_run_at is None:
        await Schedule.filter(id=schedule_id).update(
            state=ScheduleState.ACTIVE, next_run_at=recurrence(schedule).next_after(now),
            updated_at=now)
    return await get(schedule_id)


async def delete(schedule_id: int) -> Schedule:
    """Gone with its history; the threads it started stay as conversations."""
    schedule = await get(schedule_id)
    await Schedule.filter(id=schedule_id).delete()
    return schedule


async def history(schedule_id: int, limit: int = HISTORY) -> list[ScheduleRun]:
    """Its latest runs, newest first."""
    return await ScheduleRun.filter(schedule_id=schedule_id).order_by("-occurrence_at").limit(limit)


async def due(now: datetime) -> list[Schedule]:
    """The active schedules with an occurrence at or before `now` not yet handled."""
    return await Schedule.filter(state=ScheduleState.ACTIVE, next_run_at__lte=now).order_by("id")


async def claim(schedule: Schedule, occurrence: datetime, outcome: RunOutcome,
                detail: str = "", now: datetime | None = None) -> ScheduleRun | None:
    """The occurrence taken by this replica at `now` (None: another one took it first)."""
    try:
        return await ScheduleRun.create(schedule_id=schedule.id, occurrence_at=occurrence,
                                        outcome=outcome, detail=detail,
                                        claimed_at=now or utc_now())
    except IntegrityError:
        return None


async def opened(run: ScheduleRun, thread: str) -> None:
    """The thread the occurrence opened, kept before its turn is taken: a replica that takes
    the claim over goes on in it instead of posting the prompt again."""
    await ScheduleRun.filter(id=run.id).update(thread=clean_text(thread))
    run.thread = thread


async def abandoned(now: datetime, after: timedelta) -> list[ScheduleRun]:
    """Claims still unsettled `after` they were made (their replica died or stopped while
    starting them), oldest first, with their schedules."""
    return await ScheduleRun.filter(outcome=RunOutcome.CLAIMED, claimed_at__lt=now - after) \
        .order_by("claimed_at").select_related("schedule")


async def take_over(run: ScheduleRun, now: datetime) -> bool:
    """Whether this replica took the abandoned claim (its time moved to `now`); another that
    looked at the same row at once finds it moved and leaves it."""
    taken = await ScheduleRun.filter(id=run.id, outcome=RunOutcome.CLAIMED,
                                     claimed_at=run.claimed_at).update(claimed_at=now)
    run.claimed_at = now
    return taken == 1


async def advance(schedule: Schedule, handled: datetime, now: datetime) -> None:
    """The next occurrence after the one handled (and after `now`) is the first not handled,
    unless the schedule moved on already or was paused meanwhile."""
    following = recurrence(schedule).next_after(max(handled, now))
    await Schedule.filter(id=schedule.id, state=ScheduleState.ACTIVE,
                          next_run_at__lt=following).update(next_run_at=following)


async def settle(run: ScheduleRun, outcome: RunOutcome, *, detail: str = "",
                 **where: Any) -> None:
    """An occurrence's outcome, with the thread, session and run it started (`where`)."""
    await ScheduleRun.filter(id=run.id).update(outcome=outcome, detail=bounded(detail, 1000),
                                               **where)
