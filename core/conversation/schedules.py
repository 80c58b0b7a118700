"""Scheduled prompts for the front ends (docs/schedules.md): `/hermes schedule …` read into one
command (both platforms, the same words), what each does, and the lines that show a schedule.

Anyone who may talk to the bot may schedule a prompt in a channel; its author and the chat
admins may pause, resume or delete it (`Policy.check_act`), and an operator may through the
admin API. The runs are the author's: `core.conversation.scheduled_prompts` starts each as a
message of theirs in a new thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from core.chat import schedules
from core.chat.policy import Policy
from core.chat.recurrence import describe, zone
from core.chat.schedules import NewSchedule, ScheduleEdit, Where
from core.store.models import Schedule, ScheduleRun, ScheduleState
from core.errors import NotFound
from core.text.field_errors import InvalidField

ACTIONS = ("list", "pause", "resume", "delete", "history")
USAGE = ('schedule "<when>" [tz=<zone>] [misfire=run_once|skip] <prompt>  ·  '
         "schedule list|pause ID|resume ID|delete ID|history ID")
_OPTION = re.compile(r"^(tz|misfire)=(\S+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ScheduleCommand:
    """`/hermes schedule …` read: an action on a schedule (`list`, `pause` 3, …) or a new one
    (`action` "add": `when`, `prompt` and the options given)."""

    action: str
    schedule_id: int | None = None
    when: str = ""
    prompt: str = ""
    options: dict[str, str] = field(default_factory=dict)


def read_command(text: str) -> ScheduleCommand:
    """The words after `schedule` (InvalidField `schedule` saying how to write them)."""
    words = text.strip().split(maxsplit=1)
    if not words:
        raise InvalidField("schedule", f"Say what to schedule: {USAGE}")
    action = words[0].lower()
    if action in ACTIONS:
        return _action(action, words[1] if len(words) > 1 else "")
    return _new(text.strip())


def _action(action: str, rest: str) -> ScheduleCommand:
    if action == "list":
        return ScheduleCommand("list")
    number = rest.strip().lstrip("#")
    if not number.isdigit() or int(number) < 1:
        raise InvalidField("schedule", f"`schedule {action}` takes a schedule's number, as "
                                       f"`schedule {action} 3` (`schedule list` shows them)")
    return ScheduleCommand(action, int(number))


def _new(text: str) -> ScheduleCommand:
    """`"every weekday at 9:00" [tz=…] [misfire=…] prompt`, or `cron "0 9 * * 1-5" …`."""
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    cron = text.lower().startswith("cron ")
    rest = text[5:].lstrip() if cron else text
    if not rest.startswith('"'):
        raise InvalidField("when", 'Put when it runs in double quotes first, as in /hermes '
                                   'schedule "every weekday at 9:00" Summarize the open issues')
    when, quote, rest = rest[1:].partition('"')
    if not quote:
        raise InvalidField("when", "The quote around when it runs is not closed")
    options, prompt = _options(rest)
    return ScheduleCommand("add", when=f"cron {when}" if cron else when, prompt=prompt,
                           options=options)


def _options(rest: str) -> tuple[dict[str, str], str]:
    """`tz=` and `misfire=` before the prompt; the prompt is the rest, as written."""
    options: dict[str, str] = {}
    rest = rest.strip()
    while (word := rest.split(maxsplit=1)[0] if rest else "") and _OPTION.match(word):
        key, value = _OPTION.match(word).groups()  # type: ignore[union-attr]
        options[key.lower()] = value
        rest = rest[len(word):].strip()
    return options, rest


# --- what each does ---------------------------------------------------------------------------


async def add(new: NewSchedule, now: datetime) -> Schedule:
    """A new schedule (InvalidField naming what is wrong: when, timezone, misfire, prompt)."""
    return await schedules.create(new, now)


async def edit(schedule_id: int, changes: ScheduleEdit, now: datetime) -> Schedule:
    """An operator's edit of a schedule's prompt, time, time zone or misfire rule."""
    return await schedules.edit(schedule_id, changes, now)


async def in_channel(where: Where) -> list[Schedule]:
    """The schedules of one channel, oldest first."""
    return await schedules.listing(where)


async def every(**filters: object) -> list[Schedule]:
    """Every schedule (of a platform, workspace, channel or state), oldest first."""
    return await schedules.listing(None, **filters)


async def change(action: str, schedule_id: int, now: datetime, *, user: str | None = None,
                 policy: Policy | None = None, where: Where | None = None) -> Schedule:
    """Pause, resume or delete a schedule: by its author or a chat admin (`user` under
    `policy`: NotYours otherwise), from its own channel (`where`: NotFound elsewhere);
    an operator gives neither."""
    schedule = await _reachable(schedule_id, where)
    if policy is not None and user is not None:
        policy.check_act(user, schedule.author)
    if action == "pause":
        return await schedules.pause(schedule_id, now)
    if action == "resume":
        return await schedules.resume(schedule_id, now)
    return await schedules.delete(schedule_id)


@dataclass(frozen=True, slots=True)
class ScheduleDetail:
    schedule: Schedule
    runs: list[ScheduleRun]


async def detail(schedule_id: int, where: Where | None = None) -> ScheduleDetail:
    """A schedule with its latest runs (NotFound outside its channel, when `where` is given)."""
    schedule = await _reachable(schedule_id, where)
    return ScheduleDetail(schedule, await schedules.history(schedule_id))


async def _reachable(schedule_id: int, where: Where | None) -> Schedule:
    schedule = await schedules.get(schedule_id)
    if where is not None and (schedule.platform, schedule.workspace, schedule.channel) != (
            where.platform, where.workspace, where.channel):
        raise NotFound(f"There is no schedule {schedule_id} in this channel")
    return schedule


# --- the words (pure) -------------------------------------------------------------------------

DONE = {"pause": "⏸️ Paused", "resume": "▶️ Resumed", "delete": "🗑️ Deleted"}


def when_words(schedule: Schedule) -> str:
    """"At 09:00, Monday through Friday (Europe/Paris)"."""
    return f"{describe(schedule.cron)} ({schedule.timezone})"


def next_words(schedule: Schedule) -> str:
    if schedule.state is ScheduleState.PAUSED or schedule.next_run_at is None:
        return "paused"
    local = schedule.next_run_at.astimezone(zone(schedule.timezone))
    return f"next {local:%a %d %b %Y %H:%M} {schedule.timezone}"


def line(schedule: Schedule, mention: str, text: Callable[[str], str] = str) -> str:
    """One schedule as a list shows it: `#3 · At 09:00, … (UTC) · next … · by @ann · prompt`;
    `text` makes its words safe for the platform's markup (the mention is the platform's)."""
    prompt = schedule.prompt if len(schedule.prompt) <= 80 else schedule.prompt[:79] + "…"
    words = text(f"#{schedule.id} · {when_words(schedule)} · {next_words(schedule)} · "
                 f"misfire {schedule.misfire.value} · by ")
    return f"{words}{mention}{text(f' · {prompt}')}"


def added_words(schedule: Schedule) -> str:
    return (f"⏰ Scheduled #{schedule.id}: {when_words(schedule)}, {next_words(schedule)}. "
            f"Each time, a new thread here starts with your prompt. "
            f"`schedule pause {schedule.id}`, `resume`, `delete` and `history` change or show it.")


def changed_words(action: str, schedule: Schedule) -> str:
    return f"{DONE[action]} schedule #{schedule.id} ({when_words(schedule)})."


def run_line(run: ScheduleRun, timezone: str, thread: Callable[[str], str] = str) -> str:
    """One time of a schedule: when (in its zone), its outcome, its thread as the platform
    links it (`thread`), or why it did not start."""
    at = run.occurrence_at.astimezone(zone(timezone))
    where = f" · thread {thread(run.thread)}" if run.thread else ""
    why = f" · {run.detail}" if run.detail else ""
    return f"{at:%a %d %b %Y %H:%M} · {run.outcome.value}{where}{why}"


def history_words(found: ScheduleDetail, thread: Callable[[str], str] = str) -> list[str]:
    """A schedule and its latest times, newest first."""
    schedule = found.schedule
    head = f"Schedule #{schedule.id}: {when_words(schedule)}, {next_words(schedule)}"
    if not found.runs:
        return [head, "No run yet."]
    return [head, *(run_line(run, schedule.timezone, thread) for run in found.runs)]
