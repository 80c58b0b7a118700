"""Scheduled prompts fire: at each occurrence, one replica opens a new thread in the schedule's
channel and starts the prompt's run there as the author's message (docs/schedules.md).

Every replica keeps an apscheduler job per active schedule, with the schedule's own trigger
(its crontab in its time zone), loaded from the `schedule` table (the persistent job store) and
reloaded every `sync_seconds`, which also catches what is due. Whichever replica's job wakes
first claims the occurrence (`core.chat.schedules.claim`: one row per schedule and occurrence
time, so the others find it taken) and starts it; a replica whose adapters do not serve the
schedule's platform leaves it to those that do.

An occurrence found more than `grace` late (no replica ran at its time: a downtime) is run
once for all the occurrences missed (`misfire` run_once), or recorded as skipped (`skip`).

A replica that dies (or is stopped) between its claim and the claim's outcome leaves the
occurrence `claimed`; `retry` later (INTAKE_RETRY_SECONDS, as for a message taken but never
finished) one replica takes the claim over and goes on from its last step: it opens the thread
if none was kept on the claim, takes the turn in the kept thread if none was written there,
and otherwise records the run the turn started (which the runtime goes on with).

The run starts through the conversation's ordinary path for a new thread (`turns.take`): the
author's policy, quota and spend limits apply as to their own message, and replies in the
thread continue it as any conversation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from core.chat import schedules
from core.chat.attachments import FileReader
from core.chat.recurrence import Recurrence
from core.chat.sessions import ThreadKey
from core.conversation import bindings, turns
from core.conversation.refusals import NOT_ALLOWED
from core.errors import HermesChatError
from core.runtime import records
from core.runtime.pool import RunPool
from core.store.models import ChatSession, Misfire, Platform, RunOutcome, Schedule, ScheduleRun, utc_now

log = logging.getLogger(__name__)
GRACE = timedelta(minutes=5)  # later than this, an occurrence was missed (misfire applies)
RETRY = timedelta(seconds=60)  # a claim unsettled this long was abandoned by its replica
SYNC_SECONDS = 30.0
MISSED = "missed: no replica ran at its time"


@dataclass(frozen=True, slots=True)
class OpenedThread:
    """The thread an adapter opened for an occurrence: where it lives, the platform id of the
    message it was opened on (the prompt's, as the bot posted it), and where its turn shows."""

    key: ThreadKey
    message_id: str
    platform_refs: dict[str, Any] | None = None


class ScheduledThreads(Protocol):
    """What an adapter does for a schedule of its platform."""

    async def may_talk(self, schedule: Schedule) -> bool:
        """Whether the author may still talk to the bot (ALLOWED_USERS, Discord roles)."""
        ...

    async def open(self, schedule: Schedule) -> OpenedThread:
        """Post the prompt in the schedule's channel and open its thread."""
        ...

    async def tell(self, opened: OpenedThread, text: str) -> None:
        """Say `text` in the thread (a refusal, a notice)."""
        ...


@dataclass
class ScheduledPrompts:
    """The schedules' jobs on this replica; `due()` fires what is due at `clock()`."""

    pool: RunPool
    files: FileReader
    clock: Callable[[], datetime] = utc_now
    grace: timedelta = GRACE
    retry: timedelta = RETRY
    sync_seconds: float = SYNC_SECONDS
    threads: dict[Platform, ScheduledThreads] = field(default_factory=dict)
    syncs: int = field(default=0, init=False)  # syncs done (health, tests)
    _scheduler: AsyncIOScheduler | None = field(default=None, init=False)
    _jobs: dict[int, tuple[str, str]] = field(default_factory=dict, init=False)  # id: (cron, tz)

    def serve(self, platform: Platform, threads: ScheduledThreads) -> None:
        """An adapter of `platform` opens this replica's threads of its schedules."""
        self.threads[platform] = threads

    def start(self) -> None:
        """The jobs on the running loop: the sync job now and every `sync_seconds`."""
        self._scheduler = AsyncIOScheduler(timezone="UTC")
        self._scheduler.add_job(self.sync, "interval", seconds=self.sync_seconds, id="sync",
                                next_run_time=utc_now(), coalesce=True, max_instances=1)
        self._scheduler.start()

    def stop(self) -> None:
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None
            self._jobs.clear()

    def jobs(self) -> dict[int, datetime | None]:
        """The schedules this replica has a job for, with the job's next wake-up."""
        scheduler = self._scheduler
        if scheduler is None:
            return {}
        return {schedule_id: getattr(scheduler.get_job(f"schedule-{schedule_id}"),
                                     "next_run_time", None) for schedule_id in self._jobs}

    async def sync(self) -> None:
        """One job per active schedule of a platform served here, as the table has them now;
        then whatever is due (a schedule made on another replica, an occurrence missed)."""
        try:
            active = await schedules.listing(state="active", platform__in=list(self.threads))
            self._align({s.id: (s.cron, s.timezone) for s in active})
            await self.due()
        except Exception:  # the next sync tries again; the jobs keep their triggers
            log.exception("schedules: sync failed")
        finally:
            self.syncs += 1

    def _align(self, wanted: dict[int, tuple[str, str]]) -> None:
        scheduler = self._scheduler
        if scheduler is None:
            return
        for gone in set(self._jobs) - set(wanted):
            scheduler.remove_job(f"schedule-{gone}")
            del self._jobs[gone]
        for schedule_id, (cron, tz) in wanted.items():
            if self._jobs.get(schedule_id) != (cron, tz):
                trigger = Recurrence(cron, tz).trigger
                scheduler.add_job(self.due, trigger, id=f"schedule-{schedule_id}",
                                  replace_existing=True, coalesce=True, max_instances=1,
                                  misfire_grace_time=None)
                self._jobs[schedule_id] = (cron, tz)

    async def due(self) -> list[ScheduleRun]:
        """Claim and start each occurrence due now that no replica has taken, and take over
        each claim abandoned by its replica; what this replica took (started, skipped, refused
        or failed)."""
        now = self.clock()
        taken = []
        for schedule in await schedules.due(now):
            if schedule.platform not in self.threads:
                continue
            try:
                run = await self._occurrence(schedule, now)
            except Exception:  # logged; the other schedules' times go on (a claim left is taken over)
                log.exception("schedule %s: its time %s was not handled", schedule.id, now)
                continue
            if run is not None:
                taken.append(run)
        for run in await schedules.abandoned(now, self.retry):
            if run.schedule.platform not in self.threads or not await schedules.take_over(run, now):
                continue
            try:
                await self._go_on(run.schedule, run)
            except Exception:
                log.exception("schedule %s: its time %s was not handled", run.schedule.id,
                              run.occurrence_at)
                continue
            taken.append(await ScheduleRun.get(id=run.id))
        return taken

    async def _occurrence(self, schedule: Schedule, now: datetime) -> ScheduleRun | None:
        assert schedule.next_run_at is not None
        occurrence = schedules.recurrence(schedule).latest(schedule.next_run_at, now)
        if occurrence is None:  # next_run_at was not an occurrence (its crontab changed)
            await schedules.advance(schedule, now, now)
            return None
        skipped = now - occurrence > self.grace and schedule.misfire is Misfire.SKIP
        outcome = RunOutcome.SKIPPED if skipped else RunOutcome.CLAIMED
        run = await schedules.claim(schedule, occurrence, outcome, MISSED if skipped else "", now)
        await schedules.advance(schedule, occurrence, now)
        if run is None or skipped:
            return run
        await self._start(schedule, run)
        return await ScheduleRun.get(id=run.id)

    async def _start(self, schedule: Schedule, run: ScheduleRun) -> None:
        threads = self.threads[schedule.platform]
        if not await threads.may_talk(schedule):
            await schedules.settle(run, RunOutcome.REFUSED, detail=NOT_ALLOWED)
            return
        try:
            opened = await threads.open(schedule)
        except Exception as error:
            log.exception("schedule %s: could not open its thread", schedule.id)
            await schedules.settle(run, RunOutcome.FAILED, detail=_why(error))
            return
        await schedules.opened(run, opened.key.thread)
        await self._take(schedule, run, threads, opened)

    async def _go_on(self, schedule: Schedule, run: ScheduleRun) -> None:
        """An abandoned claim, from where its replica stopped."""
        log.warning("schedule %s: its time %s was claimed by a replica that stopped before "
                    "starting it; going on here", schedule.id, run.occurrence_at)
        if not run.thread:  # stopped before its thread was open (or before it was kept)
            await self._start(schedule, run)
            return
        # Both platforms name a thread opened on a message by that message's id.
        key = ThreadKey(schedule.platform, schedule.workspace, schedule.channel, run.thread)
        session = await bindings.bound_session(key)
        answer = await records.first_answer(session.id) if session is not None else None
        if session is not None and answer is not None:  # the turn was written: its run goes on
            await schedules.settle(run, RunOutcome.STARTED, run_id=answer.run_id or "",
                                   session_id=session.id)
            return
        await self._take(schedule, run, self.threads[schedule.platform],
                         OpenedThread(key, run.thread))

    async def _take(self, schedule: Schedule, run: ScheduleRun, threads: ScheduledThreads,
                    opened: OpenedThread) -> None:
        """The prompt as the author's first message of the thread, as a mention that opens a
        thread is taken (the thread is new: it has no earlier messages to give)."""

        async def say(notices: tuple[str, ...]) -> None:
            await threads.tell(opened, "\n".join(notices))

        where: dict[str, Any] = {"thread": opened.key.thread}
        try:
            session, new = await bindings.session_for_thread(opened.key, opened=True)
            where["session_id"] = session.id
            taken = await turns.take(self.pool, _arrival(schedule, opened, session, new),
                                     self.files, say, context_messages=0)
        except HermesChatError as error:  # over a quota or a spend limit: said in the thread
            await schedules.settle(run, RunOutcome.REFUSED, detail=error.public, **where)
            await threads.tell(opened, error.public)
            return
        except Exception as error:
            log.exception("schedule %s: its run did not start", schedule.id)
            await schedules.settle(run, RunOutcome.FAILED, detail=_why(error), **where)
            return
        run_id = taken.run.run_id if taken.run is not None else ""
        await schedules.settle(run, RunOutcome.STARTED, run_id=run_id, **where)


def _arrival(schedule: Schedule, opened: OpenedThread, session: ChatSession,
             new: bool) -> turns.Arrival:
    return turns.Arrival(session, new, schedule.prompt, schedule.author, opened.message_id,
                         platform_refs=opened.platform_refs, place=opened.key)


def _why(error: Exception) -> str:
    """What the history says of a failure (its details are in the log)."""
    if isinstance(error, HermesChatError):
        return error.public
    return f"{type(error).__name__} (the log has the details)"
