"""Request and answer bodies of scheduled prompts (camelCase JSON)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from admin.text import NON_BLANK, NO_NUL, Person
from core.conversation import schedules
from core.conversation.vocabulary import Schedule, ScheduleRun

Id = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=NON_BLANK)]
When = Annotated[str, msgspec.Meta(
    min_length=1, max_length=200, pattern=NON_BLANK,
    description='when it runs: "every weekday at 9:00", "every 2 hours", "every month on the '
                '1st at 9:00", or a crontab as `cron 0 9 * * 1-5` (docs/schedules.md)')]
Prompt = Annotated[str, msgspec.Meta(min_length=1, max_length=4000, pattern=NON_BLANK)]
Zone = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=NO_NUL,
                                   description="an IANA time zone (default: SCHEDULE_TIMEZONE)")]


class ScheduleIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """A prompt run at each time of `when` in a new thread of the channel, as `author` (a
    platform user id) wrote it: their policy, quota and spend limits apply."""

    platform: Literal["slack", "discord"]
    workspace: Id  # the Slack team, the Discord guild
    channel: Id
    author: Person
    prompt: Prompt
    when: When
    timezone: Zone | None = None
    misfire: Literal["run_once", "skip"] = "run_once"


class ScheduleEditIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """What changes (a field left out stays as it is). A new `when` or `timezone` moves an
    active schedule's next time to the first of the new times from now."""

    prompt: Prompt | None = None
    when: When | None = None
    timezone: Zone | None = None
    misfire: Literal["run_once", "skip"] | None = None


class ScheduleOut(msgspec.Struct, frozen=True, rename="camel"):
    """A schedule: `when` as written, `cron` as it runs (weekday 0 = Sunday) in `timezone`,
    `description` in words; `nextRunAt` null while paused."""

    id: int
    platform: str
    workspace: str
    channel: str
    author: str
    prompt: str
    when: str
    cron: str
    description: str
    timezone: str
    misfire: str
    state: str
    next_run_at: datetime | None
    created_at: datetime
    updated_at: datetime


class ScheduleRunOut(msgspec.Struct, frozen=True, rename="camel"):
    """One occurrence: `outcome` claimed (being started), started, skipped (missed while no
    replica ran, and the schedule skips those), refused or failed (`detail` says why); the
    thread and session it started (`thread`: a Slack ts, a Discord thread id)."""

    occurrence_at: datetime
    claimed_at: datetime
    outcome: str
    session_id: int | None
    thread: str
    run_id: str
    detail: str


class ScheduleDetailOut(msgspec.Struct, frozen=True):
    """A schedule and its latest runs, newest first."""

    schedule: ScheduleOut
    runs: list[ScheduleRunOut]


class SchedulePageOut(msgspec.Struct, frozen=True):
    items: list[ScheduleOut]


def schedule_out(schedule: Schedule) -> ScheduleOut:
    return ScheduleOut(
        schedule.id, schedule.platform.value, schedule.workspace, schedule.channel,
        schedule.author, schedule.prompt, schedule.phrase, schedule.cron,
        schedules.when_words(schedule), schedule.timezone, schedule.misfire.value,
        schedule.state.value, schedule.next_run_at, schedule.created_at, schedule.updated_at)


def run_out(run: ScheduleRun) -> ScheduleRunOut:
    return ScheduleRunOut(run.occurrence_at, run.claimed_at, run.outcome.value, run.session_id,
                          run.thread, run.run_id, run.detail)


def detail_out(found: schedules.ScheduleDetail) -> ScheduleDetailOut:
    return ScheduleDetailOut(schedule_out(found.schedule), [run_out(r) for r in found.runs])
